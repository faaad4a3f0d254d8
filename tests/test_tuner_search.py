"""The kernel search on the CPU: candidate pruning (pure), the manifest format, and the search
orchestration (store log, resume, manifest entries) with the stand-in worker."""

import json
from pathlib import Path

import pytest
from cuda_l2_explorer.db.shapes import Shape, grid_shapes
from cuda_l2_explorer.db.store import Store
from cuda_l2_explorer.tuner import manifest as mf
from cuda_l2_explorer.tuner.catalog import first_catalog
from cuda_l2_explorer.tuner.native import DECOMPOSITION, Variant
from cuda_l2_explorer.tuner.search import manifest_entries, record_search, run_search, search_plan
from cuda_l2_explorer.tuner.search_space import (
    TIE,
    TIE_LIMIT,
    candidates,
    cluster_size,
    cluster_slots,
    clusters_fit,
    kernel_class,
    launched_tiles,
    predict,
    variants_for,
)
from cuda_l2_explorer.tuner.wgmma import WgmmaConfig
from hypothesis import given
from hypothesis import strategies as st

FAKE = Path(__file__).parent / "fake_worker.py"
KERNELS = {c.name: c.to_dict() for c in first_catalog()}


def test_candidates_are_deterministic_bounded_and_distinct() -> None:
    for shape in grid_shapes()[::37]:
        a = candidates(*shape.astuple(), KERNELS, limit=12)
        assert a == candidates(*shape.astuple(), KERNELS, limit=12)
        classes = len({kernel_class(p) for p in KERNELS.values()})
        # the limit (or the model's ties), plus at most one per class not yet represented
        assert 1 <= len(a) <= max(12, TIE_LIMIT) + classes
        assert len({c.key for c in a}) == len(a)
        assert all(c.predicted_s > 0 for c in a)


def test_skinny_m_keeps_swap_ab_and_large_keeps_big_tiles() -> None:
    skinny = candidates(64, 8192, 8192, KERNELS, limit=8)
    assert any(KERNELS[c.kernel]["swap_ab"] for c in skinny)
    large = candidates(8192, 8192, 8192, KERNELS, limit=8)
    assert all(KERNELS[c.kernel]["tile_m"] * KERNELS[c.kernel]["tile_n"] >= 128 * 128 for c in large[:4])


def test_variants_follow_the_scheduler() -> None:
    streamk = next(p for p in KERNELS.values() if p["scheduler"] == "streamk" and not p["swap_ab"])
    persistent = next(p for p in KERNELS.values() if p["scheduler"] == "persistent" and not p["swap_ab"])
    few_tiles = variants_for(256, 256, 8192, streamk, 132)
    assert Variant(decomposition=DECOMPOSITION["streamk"]) in few_tiles
    assert any(v.decomposition == DECOMPOSITION["splitk"] for v in few_tiles)
    assert all(v.decomposition == 0 for v in variants_for(256, 256, 8192, persistent, 132))
    many_tiles = variants_for(8192, 8192, 1024, persistent, 132)
    assert {v.raster for v in many_tiles} == {0, 1, 2}


@given(st.integers(1, 400), st.integers(1, 16))
def test_clusters_that_fit_never_need_more_sms_than_the_gpu_has(sms: int, size: int) -> None:
    fit = clusters_fit(size, sms)
    assert fit * size <= sms
    assert fit <= clusters_fit(max(size - 1, 1), sms)  # larger clusters never fit more often
    assert clusters_fit(1, sms) == sms


def test_split_k_over_one_cluster_looks_at_split_counts_that_fill_one_wave() -> None:
    # 512x512x12288 in 128x128 tiles: 16 tiles. 8 splits need 16 clusters of 8 where 15 fit (two
    # waves); 6 splits make 16 clusters of 6, which fit at once (96 CTAs).
    params = WgmmaConfig(128, 128, 64, 6).to_dict()
    splits = {v.splits: v for v in variants_for(512, 512, 12288, params, 132)}
    assert {5, 6} <= set(splits) and 7 not in splits
    time = {s: predict(512, 512, 12288, params, v, 132, 3.35e12) for s, v in splits.items()}
    assert time[6] < time[8] and time[6] < time[4]


def test_a_multicast_pair_is_one_cluster_with_its_splits() -> None:
    # The pair and its splits share a cluster (at most 16 CTAs): x 8 at most, and 512x512 in
    # 128x128 tiles is 8 pairs, so 4 splits make 8 clusters of 8 (15 fit) and 5 make 8 of 10
    # (fit: 7, two waves). An odd N-tile count launches a partner past N.
    pair = WgmmaConfig(128, 128, 64, 6, multicast_a=2).to_dict()
    splits = {v.splits for v in variants_for(512, 512, 12288, pair, 132)}
    assert max(splits) <= 8 and {2, 4} <= splits and 5 not in splits
    assert cluster_size(pair, 4) == 8 and cluster_slots(pair, 4, 132) == 15 * 8
    assert launched_tiles(512, 384, pair) == 4 * 4
    assert launched_tiles(512, 384, {**pair, "multicast_a": 1}) == 4 * 3
    assert 16 in {v.splits for v in variants_for(64, 64, 16384, WgmmaConfig(64, 64, 64, 8).to_dict(), 132)}


@given(st.sampled_from(sorted(KERNELS)), st.integers(1, 16384), st.integers(1, 2048), st.integers(1, 2048))
def test_prediction_is_positive_and_grows_with_k(name: str, m: int, n8: int, k8: int) -> None:
    params = KERNELS[name]
    n, k = 8 * n8, 8 * k8
    t = predict(m, n, k, params, Variant(), 132, 3.35e12)
    assert t > 0
    assert predict(m, n, 2 * k, params, Variant(), 132, 3.35e12) >= t


def test_ping_pong_hides_the_epilogue_only_where_it_is_the_smaller_part() -> None:
    # Same 128x128 tile, two schedules: at K = 64 on large M x N C's store outweighs the main loop
    # and ping-pong hides the main loop behind it; at K = 8192 it hides the store. Either way the
    # cooperative twin pays both. (Convert epilogues: C's store is all their epilogue costs.)
    coop = KERNELS["sm90_128x128x64_c1x1_coop_ps_sauto_bn_cv"]
    pingpong = KERNELS["sm90_128x128x64_c1x1_pp_ps_sauto_bn_cv"]
    store_s = -(-(96 * 96) // 132) * 128 * 128 * 2 / (4.8e12 / 132)  # 70 waves of tiles' C
    gaps = {}
    for k in (64, 256, 8192):
        gaps[k] = predict(12288, 12288, k, coop, Variant(), 132, 4.8e12) - predict(
            12288, 12288, k, pingpong, Variant(), 132, 4.8e12
        )
        assert 0 < gaps[k] <= store_s * (1 + 1e-9)
    assert gaps[8192] == pytest.approx(store_s)  # the main loop is the longer part: all of C hidden
    # the small-K winners measured on an H200 (ping-pong) lead the short list there
    best = candidates(12288, 12288, 256, KERNELS, bandwidth=4.8e12, limit=8)[0]
    assert KERNELS[best.kernel]["schedule"] == "pingpong"
    large = candidates(8192, 8192, 8192, KERNELS, bandwidth=4.8e12, limit=8)[0]
    assert KERNELS[large.kernel]["schedule"] == "cooperative"


def test_the_alpha_multiply_costs_where_the_epilogue_is_not_hidden() -> None:
    # One FP32 multiply an element of C (128 lanes a clock against 4096 tensor flops): the
    # cooperative schedule waits for it at any K, ping-pong hides it behind the other warp group's
    # main loop where that is the longer part (K = 8192) and not where C's store outweighs it (K = 64).
    from cuda_l2_explorer.tuner.search_space import FP32_OPS_PER_TENSOR_FLOP, PEAK_FLOPS

    multiply_s = -(-(96 * 96) // 132) * 128 * 128 / (PEAK_FLOPS / 132 * FP32_OPS_PER_TENSOR_FLOP)
    for schedule, k, cost in (("coop", 256, multiply_s), ("coop", 8192, multiply_s), ("pp", 8192, 0.0)):
        alpha = KERNELS[f"sm90_128x128x64_c1x1_{schedule}_ps_sauto_bn"]
        convert = KERNELS[f"sm90_128x128x64_c1x1_{schedule}_ps_sauto_bn_cv"]
        gap = predict(12288, 12288, k, alpha, Variant(), 132, 4.8e12) - predict(
            12288, 12288, k, convert, Variant(), 132, 4.8e12
        )
        assert gap == pytest.approx(cost, abs=1e-12), (schedule, k)
    alpha, convert = (
        KERNELS["sm90_128x128x64_c1x1_pp_ps_sauto_bn"],
        KERNELS["sm90_128x128x64_c1x1_pp_ps_sauto_bn_cv"],
    )
    assert predict(12288, 12288, 64, alpha, Variant(), 132, 4.8e12) > predict(
        12288, 12288, 64, convert, Variant(), 132, 4.8e12
    )


def test_split_k_costs_partial_traffic_only_where_partials_go_through_memory() -> None:
    # CUTLASS's split-K writes fp32 partials and reads them back; the tiny family reduces them
    # over distributed shared memory: the same tile and splits cost it exactly that traffic less.
    from cuda_l2_explorer.tuner.catalog import SM90_FAMILY
    from cuda_l2_explorer.tuner.tiny import TinyConfig

    tiny = TinyConfig(64, 64, 128, 2, 2, 6).to_dict()
    same_tile_in_cutlass = {**tiny, "family": SM90_FAMILY, "epilogue": "convert"}  # no alpha multiply
    split = Variant(decomposition=DECOMPOSITION["splitk"], splits=16)
    m, n, k, bandwidth = 64, 64, 16384, 3.35e12
    in_memory = predict(m, n, k, same_tile_in_cutlass, split, 132, bandwidth)
    gap = in_memory - predict(m, n, k, tiny, split, 132, bandwidth)
    assert gap == pytest.approx(4.0 * m * n * 16 / bandwidth)


def _entry(m: int = 64, n: int = 64, k: int = 64, **kw) -> dict:
    return {
        "m": m, "n": n, "k": k, "kernel_name": "sm90_x", "kernel": first_catalog()[0].to_dict(),
        "variant": {"raster": 0, "swizzle": 1, "decomposition": 0, "splits": 1},
        "time_us": 3.5, "gpu": "h100", "date": "2026-11-22", "run_id": "r1", **kw,
    }  # fmt: skip


def test_manifest_round_trip_is_byte_stable(tmp_path) -> None:
    data = mf.merge(mf.empty("h100"), [_entry(128, 64, 64), _entry(64, 64, 64)])
    path = tmp_path / "set" / "manifest.json"
    mf.save(data, path)
    first = path.read_bytes()
    mf.save(mf.load(path), path)
    assert path.read_bytes() == first
    assert [e["m"] for e in mf.load(path)["configs"]] == [64, 128]
    replaced = mf.merge(mf.load(path), [_entry(64, 64, 64, time_us=2.0)])
    assert mf.lookup(replaced, 64, 64, 64)["time_us"] == 2.0
    assert len(replaced["configs"]) == 2


@pytest.mark.parametrize(
    "broken, message",
    [
        ({"format": "x"}, "not a kernel manifest"),
        ({"version": 9}, "not supported"),
        ({"configs": [_entry(), _entry()]}, "appears twice"),
        ({"configs": [{**_entry(), "time_us": 0}]}, "time_us"),
        ({"configs": [{**_entry(), "variant": {"raster": 0}}]}, "variant"),
        ({"configs": [{k: v for k, v in _entry().items() if k != "kernel"}]}, "lacks kernel"),
    ],
)
def test_manifest_validation_names_the_problem(broken: dict, message: str) -> None:
    with pytest.raises(mf.ManifestError, match=message):
        mf.validate({**mf.empty("h100"), **broken})


def test_failed_save_keeps_the_old_manifest(tmp_path) -> None:
    path = tmp_path / "manifest.json"
    mf.save(mf.merge(mf.empty("h100"), [_entry()]), path)
    before = path.read_bytes()
    with pytest.raises(mf.ManifestError):
        mf.save({**mf.empty("h100"), "configs": [_entry(), _entry()]}, path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["manifest.json"]


def test_search_logs_every_candidate_resumes_and_keeps_the_fastest(db_path, monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("CUDA_L2_EXPLORER_WORKER", str(FAKE))
    library = tmp_path / "libfake.so"
    library.write_bytes(b"")
    library.with_suffix(".json").write_text('{"cutlass": "4.2.0"}')  # the build's record
    shapes = [Shape(64, 64, 64), Shape(13, 64, 64), Shape(256, 128, 64)]
    run_id, summary = run_search(db_path, search_plan(shapes, library, timeout_s=10), "test")
    assert summary["crashed"] == 1 and summary["done"] == 2
    with Store.open(db_path, with_bundled=False) as store:
        log = store.query(f"SELECT * FROM search_log WHERE run_id = '{run_id}' ORDER BY m, candidate, stage")
        assert len(log) == 2 * (3 + 2 + 1)  # per shape: 3 stage-1, 2 finalists, 1 reference
        assert log.filter(log["chosen"])["candidate"].to_list() == ["fake_1|default"] * 2
        kind, cutlass = store.con.execute(
            "SELECT kind, cutlass FROM runs WHERE run_id = ?", [run_id]
        ).fetchone()
        assert kind == "tune" and cutlass == "4.2.0"
        entries = manifest_entries(store, [run_id])
    assert sorted((e["m"], e["kernel_name"]) for e in entries) == [(64, "fake_1"), (256, "fake_1")]
    e = next(e for e in entries if e["m"] == 64)
    assert e["best_reference"] == "cuBLASLt-heuristic-nn" and e["candidates"] == 3
    assert e["time_us"] == pytest.approx(0.9 * e["best_reference_us"], rel=1e-3)
    mf.validate(mf.merge(mf.empty("h100"), entries))
    # The crashed shape is recorded as done-with-failure: resume does not redo finished shapes.
    plan = search_plan(shapes, library, timeout_s=10)
    with Store.open(db_path, with_bundled=False, views=False) as store:
        params = json.loads(store.scalar("SELECT params FROM runs WHERE run_id = ?", [run_id]))
    _, again = run_search(db_path, plan, "test", resume=(run_id, params))
    assert again["measured_now"] == 0


def test_record_search_replaces_a_config_in_one_transaction(db_path) -> None:
    from cuda_l2_explorer.importer.harness.runner import Outcome

    with Store.open(db_path, with_bundled=False) as store:
        store.con.execute(
            "INSERT INTO runs (run_id, kind, gpu, status, tool_version) "
            "VALUES ('r', 'tune', 'h100', 'running', 't')"
        )
        outcome = Outcome("done", [], {"best": None, "references": {}})
        record_search(store, "r", Shape(64, 64, 64), outcome, 0)
        record_search(store, "r", Shape(64, 64, 64), outcome, 0)
        status, message = store.con.execute("SELECT status, message FROM run_configs").fetchone()
    assert (status, message) == ("error", "no correct candidate")


def test_tune_command_errors_are_one_line(cli, monkeypatch, tmp_path) -> None:
    assert cli("tune", "64", "64").code == 2
    bad = cli("tune", "64", "64", "0x40")
    assert bad.code == 2 and "0x40" in bad.err
    monkeypatch.setenv("CUDA_L2_EXPLORER_TUNER_LIB", str(tmp_path / "missing.so"))
    # With a GPU, a missing library gets the build advice (exit 4); without one, "no GPU" comes first
    from cuda_l2_explorer.db.errors import NotFoundError
    from cuda_l2_explorer.engine.library import library_path

    with pytest.raises(NotFoundError, match=r"python -m cuda_l2_explorer\.tuner\.build"):
        library_path(None)
    monkeypatch.setitem(__import__("sys").modules, "torch", None)  # as on a machine without torch
    (tmp_path / "lib.so").write_bytes(b"")
    for library in (tmp_path / "missing.so", tmp_path / "lib.so"):
        monkeypatch.setenv("CUDA_L2_EXPLORER_TUNER_LIB", str(library))
        no_gpu = cli("tune", "64", "64", "64")
        assert no_gpu.code == 7 and no_gpu.err.count("\n") == 1


def test_keep_faster_merge_keeps_the_better_time() -> None:
    data = mf.merge(mf.empty("h100"), [_entry(time_us=3.0)])
    slower = mf.merge(data, [_entry(time_us=4.0, kernel_name="other")], keep_faster=True)
    assert mf.lookup(slower, 64, 64, 64)["kernel_name"] == "sm90_x"
    faster = mf.merge(data, [_entry(time_us=2.0, kernel_name="other")], keep_faster=True)
    assert mf.lookup(faster, 64, 64, 64)["kernel_name"] == "other"


def test_candidates_the_model_ties_with_the_best_are_measured_beyond_the_limit() -> None:
    """Memory-bound (64x12288x4096: every kernel predicted at the floor): the tied candidates are
    kept up to TIE_LIMIT, not cut at the limit by name; compute-bound (8192^3): fewer tie than the
    default limit of 16, so the default shortlist is what it was."""

    def tied(shape: tuple[int, int, int]) -> set[str]:
        every = candidates(*shape, KERNELS, limit=10_000, sweep_family=0)
        best = min(c.predicted_s for c in every)
        return {c.key for c in every if c.predicted_s <= best * TIE}

    skinny = tied((64, 12288, 4096))
    assert len(skinny) > 16
    chosen = {c.key for c in candidates(64, 12288, 4096, KERNELS, limit=4, sweep_family=0)}
    assert len(chosen) >= min(len(skinny), TIE_LIMIT)
    assert len(chosen & skinny) == min(len(skinny), TIE_LIMIT)
    assert len(tied((8192, 8192, 8192))) < 16
    classes = len({kernel_class(p) for p in KERNELS.values()})
    assert len(candidates(8192, 8192, 8192, KERNELS, sweep_family=0)) <= 16 + classes


def test_every_kernel_class_gets_a_candidate() -> None:
    for shape in (Shape(16384, 16384, 256), Shape(64, 64, 16384), Shape(4096, 4096, 4096)):
        chosen = candidates(*shape.astuple(), KERNELS, limit=4)
        everything = {kernel_class(p) for p in KERNELS.values()}
        assert {kernel_class(KERNELS[c.kernel]) for c in chosen} == everything


def test_a_small_family_is_measured_whole_and_a_large_one_is_pruned() -> None:
    from cuda_l2_explorer.tuner.families import family_of, full_catalog
    from cuda_l2_explorer.tuner.search_space import SWEEP_FAMILY, sweep_group

    kernels = {c.name: c.to_dict() for c in full_catalog()}
    m, n, k = 64, 1024, 16384
    chosen = {c.key for c in candidates(m, n, k, kernels, limit=8)}
    by_family: dict[str, list[str]] = {}
    sizes: dict[str, int] = {}
    for name, params in kernels.items():
        if not family_of(params).supports(m, n, k, params):
            continue  # e.g. the tiny family's one-pass kernels (K up to their tile_k)
        group = sweep_group(params)
        sizes[group] = sizes.get(group, 0) + 1
        for v in variants_for(m, n, k, params, 132):
            by_family.setdefault(group, []).append(f"{name}|{v.label}")
    small = [f for f in by_family if sizes[f] <= SWEEP_FAMILY]
    large = [f for f in by_family if sizes[f] > SWEEP_FAMILY]
    # The wgmma family's two reductions are two groups, each measured whole.
    assert {"sm90_wgmma_splitk/cluster", "sm90_wgmma_splitk/global"} <= set(small) and "cutlass_sm90" in large
    for family in small:
        assert set(by_family[family]) <= chosen, family
    for family in large:
        assert not set(by_family[family]) <= chosen, family
    pruned = {c.key for c in candidates(m, n, k, kernels, limit=8, sweep_family=0)}
    assert pruned < chosen


def test_a_launch_bound_shape_sweeps_the_tiny_family_whole() -> None:
    """At a tiny shape every kernel of the tiny family (more than SWEEP_FAMILY of them) is measured,
    every variant; at a shape whose floor is above TINY_FLOOR_S the tiny family is pruned."""
    from cuda_l2_explorer.db.shapes import Shape, regime
    from cuda_l2_explorer.tuner.families import family_of, full_catalog
    from cuda_l2_explorer.tuner.search_space import SWEEP_FAMILY, TINY_SWEEP_FAMILY, launch_bound, sweep_group

    kernels = {c.name: c.to_dict() for c in full_catalog()}
    tiny = {n: p for n, p in kernels.items() if p["family"] == "sm90_mma_tiny"}
    # pipelined, register-direct, bulk- and tensor-fed (one box a copy, several slab-major, several pitched)
    groups = {sweep_group(p) for p in tiny.values()}
    assert len(groups) == 6
    sizes = [sum(sweep_group(p) == group for p in tiny.values()) for group in groups]
    assert max(sizes) <= TINY_SWEEP_FAMILY
    assert sum(size > SWEEP_FAMILY for size in sizes) >= 2  # whole at tiny shapes only by the tiny rule
    cases = ((Shape(128, 2048, 64), True), (Shape(512, 512, 64), True), (Shape(2048, 2048, 2048), False))
    for shape, whole in cases:
        assert launch_bound(*shape.astuple(), 3.35e12) == (regime(shape) == "tiny") == whole
        chosen = {c.key for c in candidates(*shape.astuple(), kernels, limit=8)}
        runs = {n: p for n, p in tiny.items() if family_of(p).supports(*shape.astuple(), p)}
        every = {f"{n}|{v.label}" for n, p in runs.items() for v in variants_for(*shape.astuple(), p, 132)}
        assert (every <= chosen) == whole, shape


def test_the_wgmma_short_k_tiles_are_swept_whole_beside_the_deep_k_tiles() -> None:
    """The short-K tiles (four stages: N 96 and 192, session 35; 64x64 and 64x128, session 36)
    are a sweep group of their own a reduction, so that neither group outgrows SWEEP_FAMILY; at
    128x12288x256, where nvjet runs 64 x 192 tiles, every variant of every short-K tile that runs
    there is measured."""
    from cuda_l2_explorer.tuner.families import family_of, full_catalog
    from cuda_l2_explorer.tuner.search_space import SWEEP_FAMILY, sweep_group
    from cuda_l2_explorer.tuner.wgmma import SHORT_K_STAGES, WGMMA_FAMILY

    kernels = {c.name: c.to_dict() for c in full_catalog()}
    wgmma = {n: p for n, p in kernels.items() if p["family"] == WGMMA_FAMILY}
    sizes: dict[str, int] = {}
    for p in wgmma.values():
        sizes[sweep_group(p)] = sizes.get(sweep_group(p), 0) + 1
    assert {g for g in sizes if g.endswith("/short_k")} == {
        f"{WGMMA_FAMILY}/{r}/short_k" for r in ("cluster", "global", "sliced")
    }
    assert max(sizes.values()) <= SWEEP_FAMILY
    m, n, k = 128, 12288, 256
    chosen = {c.key for c in candidates(m, n, k, kernels, limit=8, bandwidth=4.8e12)}
    short_k = [(name, p) for name, p in wgmma.items() if p["stages"] <= SHORT_K_STAGES]
    assert len(short_k) == 24 and {p["tile_n"] for _, p in short_k} == {64, 96, 128, 192}
    for name, p in short_k:
        assert family_of(p).supports(m, n, k, p)
        assert {f"{name}|{v.label}" for v in variants_for(m, n, k, p, 132)} <= chosen, name
