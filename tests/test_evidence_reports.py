"""The evidence reports under benchmarks/ run on the bundled dataset through db.reads (their SQL
lives in db/), and the store packer round-trips a store file."""

import importlib.util
import json
import sys
from pathlib import Path

import pytest
from cuda_l2_explorer.db import reads
from cuda_l2_explorer.db.store import Store

ROOT = Path(__file__).resolve().parents[1]


def _script(relative: str):
    sys.path.insert(0, str(ROOT / "benchmarks"))  # the reports import harness_report from there
    try:
        spec = importlib.util.spec_from_file_location(Path(relative).stem, ROOT / relative)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))


@pytest.fixture
def bundled_store(monkeypatch, tmp_path):
    monkeypatch.delenv("CUDA_L2_EXPLORER_NO_BUNDLED", raising=False)
    with Store.open(tmp_path / "empty.duckdb", with_bundled=True) as store:
        yield store


def test_harness_report_reads_every_bench_run(bundled_store):
    text = _script("benchmarks/harness_report.py").report(bundled_store)
    runs = reads.bench_runs_with_provenance(bundled_store)
    assert runs.height > 0
    for run in runs.iter_rows(named=True):
        assert f"run `{run['run_id']}`" in text
    for heading in ("## By regime", "## Rows per implementation", "## Audit findings", "## Rows not ok"):
        assert heading in text


def test_tuner_report_on_the_newest_set_of_ours(bundled_store):
    set_id = reads.newest_set_of_ours(bundled_store)
    assert set_id in reads.our_set_ids(bundled_store)
    text = _script("benchmarks/tuner/report.py").report(bundled_store, set_id)
    assert "No measured rows" not in text
    for heading in ("## Runs", "## The 15 worst configs", "## The search"):
        assert heading in text


def test_store_pack_round_trip_and_side_by_side_times(tmp_path):
    from test_store import _insert_bench_run

    first = tmp_path / "first.duckdb"
    with Store.open(first, with_bundled=False) as store, store.transaction():
        _insert_bench_run(store)
    pack = _script("benchmarks/store_pack.py")
    pack.pack(first, tmp_path / "first.tar")
    copy = tmp_path / "copy.duckdb"
    pack.unpack(tmp_path / "first.tar", copy)
    rows = reads.offline_device_times_side_by_side([("first", first), ("it's a copy", copy)])
    assert [r[3] for r in rows] == ["cuBLAS-nn", "cuBLAS-tn", "kernel", "torch.matmul"]
    assert all(r[:3] == (256, 512, 1024) and r[4] == pytest.approx(r[5]) for r in rows)
    assert dict((r[3], r[4]) for r in rows)["kernel"] == pytest.approx(10.0)


def test_store_from_bundle_gives_a_server_run_what_it_reuses(tmp_path):
    """A store made of the bundled offline run holds, as the store's own rows (what a device call
    with --no-bundled reads), its cuBLASLt choices and launcher audits for every config."""
    copy = _script("benchmarks/harness/v3/store_from_bundle.py")
    with Store.open(tmp_path / "any.duckdb", with_bundled=True, read_only=True) as bundled:
        run, gpu, params = bundled.con.execute(
            "SELECT run_id, gpu, params FROM all_runs WHERE kind = 'bench' AND mode = 'offline' "
            "AND json_extract_string(params, '$.harness_version') = '3' ORDER BY started_at DESC LIMIT 1"
        ).fetchone()
    out = tmp_path / "grid.duckdb"
    counts = copy.copy_runs(out, [run[:8]])
    assert counts["runs"] == 1 and counts["run_configs"] > 0 and counts["kernels"] > 0
    with Store.open(out, with_bundled=False) as store:
        row = store.con.execute("SELECT set_id, cublas, params FROM runs").fetchone()
        set_id, cublas, own_params = row
        assert own_params is not None
        settings = json.loads(params)
        choices = reads.autotune_choices(store, gpu, settings["accumulator"], cublas, settings["l2"])
        audits = reads.offline_audits(store, gpu, set_id, settings["kernels"], ["sync_per_call"])
        assert len(choices) == counts["run_configs"] and len(audits) == counts["run_configs"]
    with pytest.raises(SystemExit, match="exists"):
        copy.copy_runs(out, [run[:8]])
    with pytest.raises(SystemExit, match="not in the bundled dataset"):
        copy.copy_runs(tmp_path / "other.duckdb", ["ffffffff"])


def test_timeline_summary_of_one_launch():
    """tiny_floor/timeline.py's per-launch summary: cycles from each CTA's own start, the median CTA
    a step (only steps every CTA reached), the 90th percentile and the slowest CTA to C stored, and
    the spread of the starts on the global timer."""
    summary = _script("benchmarks/tuner/tiny_floor/timeline.py").launch_summary
    # start, issued, first landed, last landed, MMAs done, met (not reached: 0), stored, global start
    rows = [
        [1000, 1100, 1500, 2000, 2100, 0, 2500, 50],
        [2000, 2150, 2600, 3100, 3200, 0, 3700, 80],
        [500, 560, 1000, 1400, 1550, 0, 1900, 40],
    ]
    out = summary(rows)
    assert (out["issued"], out["last_landed"], out["stored"]) == (100, 1000, 1500)
    assert "met" not in out
    assert (out["slowest_stored"], out["slowest_cta"]) == (1700, 1)
    assert out["stored_p90"] == pytest.approx(1660)
    assert out["start_spread_ns"] == 40
    rows[2][6] = 0  # a CTA that never stored: no store figures
    assert not {"stored", "slowest_stored", "stored_p90"} & set(summary(rows))


def test_ceilings_carry_the_fastest_tiled_movement_over_through_cublas(capsys):
    """ceiling = best baseline / cuBLAS in the grid x cuBLAS / the fastest tiled row in the floor
    run; a config with no tiled rows (the session-29 floor CSVs) is left out."""
    ceilings = _script("benchmarks/tuner/movement_floor/ceilings.py")
    floor = {
        (256, 256, 512): {"cublas": 10e-6, "move_u1": 2e-6, "bulk_64x64": 8e-6, "stream_64x64_s1": 5e-6},
        (512, 512, 512): {"cublas": 10e-6, "move_u1": 2e-6},
    }
    measured = {(256, 256, 512): (9e-6, 10e-6, 9.9e-6), (512, 512, 512): (9e-6, 10e-6, 9e-6)}
    ceilings.tiled_table(floor, measured)
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| tiny")]
    assert rows == [
        "| tiny | 1 | 1.800 | 0 | 0.909 | stream_64x64_s1 1 |",
        "| tiny, K = 512 | 1 | 1.800 | 0 | 0.909 | stream_64x64_s1 1 |",
    ]


def test_grid_bound_takes_every_measured_ceiling_of_a_config():
    """A large config from K = 1024 up is bound by the best baseline's tensor-pipe occupancy; a
    config with floor rows by its movement and its fastest tiling, carried over through cuBLAS."""
    bound = _script("benchmarks/tuner/movement_floor/grid_bound.py")
    large = bound.config_bounds((12288, 12288, 2048), 600e-6, 610e-6, [])
    assert set(large) == {"analytic", "tensor busy"}
    assert large["tensor busy"] == pytest.approx(1 / 0.982)
    rows = {"cublas": 10e-6, "move_u1": 2e-6, "move_u4": 4e-6, "bulk_64x64": 8e-6, "stream_64x64_s2": 5e-6}
    second = {"cublas": 10e-6, "stream_32x32_s1": 4e-6}
    tiny = bound.config_bounds((256, 256, 512), 9e-6, 10e-6, [rows, second])
    assert tiny["movement"] == pytest.approx(9 / 10 * 10 / 2)
    assert tiny["tiled movement"] == pytest.approx(9 / 10 * 10 / 4)  # the faster of the two runs
    assert bound.config_bounds((256, 256, 512), 9e-6, None, [rows]).keys() == {"analytic"}
    # On an H100 the tensor-pipe bound (measured on an H200) does not apply, and bytes move at
    # its copy rate: a memory-bound config's analytic ceiling is 3.0 / 4.3 of the H200's.
    assert bound.config_bounds((12288, 12288, 2048), 600e-6, 610e-6, [], "h100").keys() == {"analytic"}
    skinny = [
        bound.config_bounds((64, 16384, 16384), 300e-6, None, [], gpu)["analytic"] for gpu in ("h100", "h200")
    ]
    assert skinny[0] / skinny[1] == pytest.approx(3.0 / 4.3)


def test_a_split_rows_reduced_twin_does_not_replace_it_in_the_tiled_bound():
    """A stream row split S > 1 ways leaves its reduction out, and its streamr twin adds one way of
    doing it (the cluster reduction); a kernel may reduce another way (session 39 measured our
    global reductions faster than the reduced rows), so the unreduced row stays the bound, in one
    run and across runs."""
    ceilings = _script("benchmarks/tuner/movement_floor/ceilings.py")
    rows = {
        "cublas": 10e-6,
        "move_u1": 2e-6,
        "bulk_64x64": 8e-6,
        "stream_64x64_s1": 6e-6,
        "stream_64x64_s16": 3e-6,
        "streamr_64x64_s16": 5e-6,
    }
    assert ceilings.tiled_rows(rows) == {
        "bulk_64x64": 8e-6,
        "stream_64x64_s1": 6e-6,
        "stream_64x64_s16": 3e-6,
        "streamr_64x64_s16": 5e-6,
    }
    reduced_only = {"cublas": 10e-6, "streamr_64x64_s16": 5e-6}
    older = {"cublas": 10e-6, "stream_64x64_s16": 2e-6, "stream_64x64_s2": 7e-6}
    # grid_bound across runs: the fastest tiled row of any run sets the bound, reduced or not.
    bound = _script("benchmarks/tuner/movement_floor/grid_bound.py")
    tiny = bound.config_bounds((256, 256, 2048), 9e-6, 10e-6, [older, reduced_only])
    assert tiny["tiled movement"] == pytest.approx(9 / 10 * 10 / 2e-6 * 1e-6)


def test_ceilings_read_the_runs_gpu_beside_the_measurements(tmp_path):
    """The regimes follow the roofline of the GPU the run measured on (runs.parquet)."""
    import duckdb

    ceilings = _script("benchmarks/tuner/movement_floor/ceilings.py")
    duckdb.connect().execute(
        f"COPY (SELECT * FROM (VALUES ('eb8c0a63aa', 'h100'), ('ae6434a8bb', 'h200')) t(run_id, gpu)) "
        f"TO '{tmp_path / 'runs.parquet'}' (FORMAT parquet)"
    )
    measurements = str(tmp_path / "measurements.parquet")
    assert ceilings.run_gpu(measurements, "eb8c0a63") == "h100"
    assert ceilings.run_gpu(measurements, "ae6434a8") == "h200"
    with pytest.raises(SystemExit, match="want one GPU"):
        ceilings.run_gpu(measurements, "ffff")


def test_pick_vs_movement_finds_the_row_of_the_picks_own_tiling():
    """A split-K pick's row names its splits, a data-parallel pick's one split; ours and the best
    baseline are set against that row in grid time (cuBLAS-nn over the floor run's cuBLAS)."""
    pvm = _script("benchmarks/tuner/movement_floor/pick_vs_movement.py")
    split = {"kernel": {"tile_m": 64, "tile_n": 64}, "variant": {"decomposition": 2, "splits": 8}}
    plain = {"kernel": {"tile_m": 128, "tile_n": 96}, "variant": {"decomposition": 0, "splits": 3}}
    assert (pvm.stream_row(split), pvm.stream_row(plain)) == ("stream_64x64_s8", "stream_128x96_s1")
    floor = {(512, 512, 2048): {"cublas": 8e-6, "stream_64x64_s8": 4e-6, "stream_128x128_s4": 2e-6}}
    measured = {(512, 512, 2048): (9e-6, 10e-6, 7.5e-6)}  # best, cuBLAS-nn, ours
    [(config, over_own, own_over_fastest, best_over_own)] = pvm.compare(
        {(512, 512, 2048): "stream_64x64_s8", (64, 64, 64): "stream_64x64_s1"}, floor, measured
    )
    assert config == (512, 512, 2048)
    assert over_own == pytest.approx(7.5 / 5)  # the row in grid time: 4 us x 10 / 8
    assert own_over_fastest == pytest.approx(2.0)
    assert best_over_own == pytest.approx(9 / 5)
    # With the reduced rows measured, a split pick is set against its streamr twin (the cluster
    # reduction, as our cluster-reduced picks do it); the fastest tiling stays the unreduced 128x128
    # split, since a kernel may reduce another way (ceilings.tiled_rows).
    floor[(512, 512, 2048)] |= {"streamr_64x64_s8": 5e-6, "streamr_128x128_s4": 4e-6}
    [(_, over_own, own_over_fastest, _)] = pvm.compare({(512, 512, 2048): "stream_64x64_s8"}, floor, measured)
    assert over_own == pytest.approx(7.5 / 6.25)
    assert own_over_fastest == pytest.approx(5 / 2)


def test_grid_vs_previous_lists_picks_that_moved_against_the_baselines(capsys):
    """An unchanged pick whose speed moved with the baselines' is the machine, not the kernel; one
    that moved against them beyond 5% is listed; a merged pick is not an unchanged one."""
    import duckdb

    report = _script("benchmarks/tuner/grid_vs_previous.py")
    con = duckdb.connect()
    con.execute("CREATE TABLE merged (m BIGINT, n BIGINT, k BIGINT)")
    con.execute("INSERT INTO merged VALUES (64, 64, 64)")
    for table, rows in (
        ("b", [(64, 64, 64, 2e-6, 2e-6), (128, 128, 128, 10e-6, 10e-6), (256, 256, 256, 10e-6, 10e-6)]),
        ("a", [(64, 64, 64, 1e-6, 2e-6), (128, 128, 128, 11e-6, 11e-6), (256, 256, 256, 12e-6, 10e-6)]),
    ):
        con.execute(f"CREATE TABLE {table} (m BIGINT, n BIGINT, k BIGINT, ours DOUBLE, best DOUBLE)")
        con.executemany(f"INSERT INTO {table} VALUES (?, ?, ?, ?, ?)", rows)
    report.movers(con)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].endswith(": 1, largest:")
    assert lines[1].startswith("  256x256x256: ours 10.00 -> 12.00 us (speed x0.833), baselines x1.000")


def test_grid_bound_takes_a_profiled_busy_share_per_config_and_the_nearest_for_the_rest():
    """--busy: a profiled config is bound by its own best baseline's tensor-pipe share; another
    large config from K = 1024 up by its nearest profiled neighbour's, named apart; the H200's one
    measured share no longer stands in, and small configs get no such bound."""
    bound = _script("benchmarks/tuner/movement_floor/grid_bound.py")
    busy = {(12288, 12288, 2048): 0.9, (16384, 16384, 16384): 0.8}
    own = bound.config_bounds((12288, 12288, 2048), 600e-6, None, [], "h100", busy)
    assert own["tensor busy"] == pytest.approx(1 / 0.9) and "tensor busy (nearest)" not in own
    near = bound.config_bounds((12288, 12288, 4096), 1.2e-3, None, [], "h200", busy)
    assert near["tensor busy (nearest)"] == pytest.approx(1 / 0.9) and "tensor busy" not in near
    assert bound.nearest((16384, 12288, 16384), busy) == (16384, 16384, 16384)
    assert bound.config_bounds((64, 64, 2048), 5e-6, None, [], "h100", busy).keys() == {"analytic"}


def test_bound_configs_name_the_kernel_of_each_best_baseline():
    configs = _script("benchmarks/tuner/h100-2026-12-08-s42/bound_configs.py")
    assert configs.candidate("cuBLASLt-auto-tuning-tn", "algorithm 6 of 8 heuristic candidates") == "@tn6"
    assert configs.candidate("cuBLASLt-heuristic-nn", "") == "@nn0"
    assert configs.candidate("cuBLAS-tn", "") == "@tn0"  # the same layout's top-1 stands in
    assert configs.candidate("torch.matmul", "") == ""
    with pytest.raises(SystemExit, match="no chosen algorithm"):
        configs.candidate("cuBLASLt-auto-tuning-nn", "")
    grid = [(4096, 4096, k) for k in (1024, 2048, 4096, 8192, 12288, 16384)] + [(12288, 12288, 2048)]
    picked = configs.spread(grid, 3)
    assert len(picked) == 3 and (4096, 4096, 1024) in picked and (12288, 12288, 2048) in picked
    assert configs.spread(grid, 10) == sorted(grid, key=lambda c: c[0] * c[1] * c[2])


def test_large_bound_reads_each_groups_busy_share(tmp_path, capsys):
    """From ncu's details page (ncu_driver.py's marker-delimited groups) and the grid: the best
    baseline's busy share, time-weighted over a call's kernels and the median over its calls, gives
    the ceiling; a cuBLAS-nn best is carried over from its stand-in by the two rows' grid times."""
    import csv

    import duckdb

    bound = _script("benchmarks/tuner/h100-2026-12-08-s42/large_bound.py")
    grid = [  # (config, implementation, seconds, message)
        ((8192, 8192, 2048), "cuBLASLt-auto-tuning-tn", 100e-6, "algorithm 3 of 8 heuristic candidates"),
        ((8192, 8192, 2048), "torch.matmul", 110e-6, None),
        ((8192, 8192, 2048), "kernel", 105e-6, None),
        ((8192, 8192, 4096), "cuBLAS-nn", 190e-6, None),
        ((8192, 8192, 4096), "cuBLASLt-heuristic-nn", 200e-6, None),
        ((8192, 8192, 4096), "kernel", 200e-6, None),
    ]
    values = ", ".join(
        f"('ab12', {m}, {n}, {k}, '{impl}', 'device_time', 'ok', false, {t}::DOUBLE, "
        + (repr(msg) if msg else "NULL")
        + ")"
        for (m, n, k), impl, t, msg in grid
    )
    measurements = tmp_path / "measurements.parquet"
    duckdb.connect().execute(
        f"COPY (SELECT * FROM (VALUES {values}) t(run_id, m, n, k, implementation, metric, status, padded, "
        f"median, message)) TO '{measurements}' (FORMAT parquet)"
    )
    order, rows, kid = [], [], 0

    def profile(name: str, busy: float, mhz: float, ns: float) -> None:
        nonlocal kid
        kid += 1
        for metric, value in ((bound.TIME, ns), (bound.CLOCK, mhz * 1e6), (bound.TENSOR, busy)):
            rows.append({"ID": kid, "Kernel Name": name, "Metric Name": metric, "Metric Value": f"{value:,}"})

    def group(config, implementation, calls):  # each call: [(kernel, busy %, MHz, ns), ...]
        profile("spin_kernel(long)", 0, 1980, 1000)
        for call in calls:
            for kernel in call:
                profile(*kernel)
        profile("spin_kernel(long)", 0, 1980, 1000)
        order.append(dict(zip("mnk", config, strict=True), implementation=implementation, calls=len(calls)))

    one = (8192, 8192, 2048)
    group(one, "torch.matmul", [[("nvjet_a", 85.0, 1600, 110e3)], [("nvjet_a", 85.0, 1600, 110e3)]])
    group(one, "kernel", [[("cutlass_b", 80.0, 1500, 105e3)], [("cutlass_b", 82.0, 1500, 105e3)]])
    # The candidate: a main kernel and a short second one, 3 calls (the middle's busy share the median).
    calls = [[("nvjet_c", b, 1600, 90e3), ("nvjet_red", 0.0, 1600, 10e3)] for b in (90.0, 95.0, 100.0)]
    group(one, "cuBLASLt-tn-3", calls)
    two = (8192, 8192, 4096)
    group(two, "cuBLASLt-nn-0", [[("nvjet_d", 80.0, 1500, 200e3)]])
    ncu_csv, order_json = tmp_path / "ncu.csv", tmp_path / "order.json"
    with ncu_csv.open("w", newline="") as f:
        f.write("==PROF== a log line ncu writes\n")
        columns = ["ID", "Kernel Name", "Metric Name", "Metric Value"]
        writer = csv.DictWriter(f, columns, quoting=csv.QUOTE_ALL)
        writer.writeheader()
        writer.writerows(rows)
    order_json.write_text(json.dumps(order))
    busy_csv = tmp_path / "busy.csv"
    assert set(bound.METRICS.split(",")) >= {bound.TIME, bound.CLOCK, bound.TENSOR}  # what ncu is asked for
    bound.main(str(ncu_csv), str(order_json), str(measurements), "ab12", str(busy_csv))
    out = capsys.readouterr().out
    assert "| 8192x8192x2048 | cuBLASLt-auto-tuning-tn | cuBLASLt-tn-3 | 85.5% | 1600 |" in out
    assert "| 81.0% | 1500 | 1.050 | 0.952 | 1.170 |" in out  # ours; 105/100 ns; 100/105 in the grid
    # cuBLAS-nn is the best: its stand-in's bound 1 / 0.8, times 190 / 200.
    assert "| 8192x8192x4096 | cuBLAS-nn | cuBLASLt-nn-0 | 80.0% |" in out and "| 1.187 |" in out
    with busy_csv.open() as f:
        written = {(int(r["m"]), int(r["n"]), int(r["k"])): float(r["busy"]) for r in csv.DictReader(f)}
    assert written == pytest.approx({one: 0.855, two: 0.8 * 200 / 190})
    # The same profile from ncu's raw page (one row a kernel, a units row under the header).
    import lzma

    metrics = [bound.TIME, bound.CLOCK, bound.TENSOR]
    per_kernel: dict = {}
    for r in rows:
        per_kernel.setdefault(r["ID"], {"ID": r["ID"], "Kernel Name": r["Kernel Name"]})[r["Metric Name"]] = (
            r["Metric Value"]
        )
    raw = tmp_path / "ncu_raw.csv.xz"
    with lzma.open(raw, "wt", newline="") as f:
        writer = csv.DictWriter(f, ["ID", "Kernel Name", *metrics], quoting=csv.QUOTE_ALL)
        writer.writeheader()
        writer.writerow({"ID": "", "Kernel Name": "", bound.TIME: "ns", bound.CLOCK: "hz", bound.TENSOR: "%"})
        writer.writerows(per_kernel.values())
    bound.main(str(raw), str(order_json), str(measurements), "ab12", str(tmp_path / "busy_raw.csv"))
    assert capsys.readouterr().out == out
    assert (tmp_path / "busy_raw.csv").read_text() == busy_csv.read_text()
