"""The bundled read-only dataset: layered beside the user's store, shadowed by the user's copy."""

import zipfile
from pathlib import Path

import pytest
from conftest import OFFLINE, SERVER, UPSTREAM
from cuda_l2_explorer.db import bundled
from cuda_l2_explorer.db.schema import SCHEMA_VERSION
from cuda_l2_explorer.db.store import Store
from cuda_l2_explorer.importer.bundle import build


@pytest.fixture
def bundle_dir(tmp_path) -> Path:
    out = tmp_path / "bundle"
    build([OFFLINE, SERVER], [], out, "fixture bundle")
    return out


def test_bundle_is_read_beside_an_empty_store(bundle_dir, db_path):
    with Store.open(db_path, read_only=True, with_bundled=True, bundled_dir=bundle_dir) as store:
        assert store.scalar("SELECT count(*) FROM all_published_speedups") == 160
        assert store.scalar("SELECT bool_and(bundled) FROM all_kernel_sets") is True
    assert not db_path.exists()


def test_user_copy_shadows_the_bundled_one(bundle_dir, db_path, cli, tmp_path):
    changed = tmp_path / OFFLINE.name
    changed.write_text(OFFLINE.read_text().replace("64_64_64,2.000", "64_64_64,3.000"))
    assert cli("--db", db_path, "--no-bundled", "import-results", changed, "-q").code == 0
    with Store.open(db_path, read_only=True, with_bundled=True, bundled_dir=bundle_dir) as store:
        rows = store.query(
            "SELECT mode, bundled, count(*) AS n FROM all_published_speedups GROUP BY ALL ORDER BY mode"
        )
        assert rows.to_dicts() == [
            {"mode": "offline", "bundled": False, "n": 80},  # the user's file
            {"mode": "server", "bundled": True, "n": 80},  # still from the bundle
        ]
        assert store.scalar("SELECT count(*) FROM all_runs") == 2
        assert store.scalar("SELECT count(*) FROM all_kernel_sets") == 1
        assert (
            store.scalar(
                "SELECT speedup FROM speedups WHERE mode='offline' AND m=64 AND n=64 AND k=64 "
                "AND baseline='torch.matmul'"
            )
            == 3.0
        )


def test_older_bundle_reads_new_columns_as_null(bundle_dir, db_path):
    import duckdb

    con = duckdb.connect()
    target = bundle_dir / "kernel_sets.parquet"
    con.execute(
        f"COPY (SELECT * EXCLUDE (description) FROM read_parquet('{target}')) "
        f"TO '{target}.new' (FORMAT parquet)"
    )
    Path(f"{target}.new").replace(target)
    with Store.open(db_path, read_only=True, with_bundled=True, bundled_dir=bundle_dir) as store:
        assert store.scalar("SELECT count(*) FROM all_kernel_sets WHERE description IS NULL") == 1


def test_shipped_bundle_matches_the_schema_and_its_sources():
    shipped = bundled.manifest()
    assert shipped, "db/bundled/ has no dataset: run python -m cuda_l2_explorer.importer.bundle"
    assert shipped["schema_version"] == SCHEMA_VERSION
    with Store.open(None, read_only=True, with_bundled=True) as store:
        assert store.bundled_dir == bundled.default_dir()
        counts = {t: store.scalar(f"SELECT count(*) FROM bundled_{t}") for t in shipped["rows"]}
    assert counts == shipped["rows"]
    # Every published file in tests/data/upstream is in the bundle, row for row.
    assert counts["published_speedups"] == sum(
        10 * (len(p.read_text().strip().splitlines()) - 1) for p in UPSTREAM.glob("*.csv")
    )


def test_sets_list_the_gpus_their_data_came_from():
    """A set made for one GPU and measured on another says so (the H100 set's H200 grid)."""
    from cuda_l2_explorer.db import reads

    with Store.open(None, read_only=True, with_bundled=True) as store:
        rows = {r["set_id"]: r for r in reads.kernel_sets(store).iter_rows(named=True)}
    ours = rows["ours/h100_F32F16F16F32"]
    assert (ours["gpu"], ours["data_gpus"]) == ("h100", "h100,h200")
    assert rows["ours/h200_F32F16F16F32"]["data_gpus"] == "h200"
    assert rows["cuda-l2/a100_F32F16F16F32"]["data_gpus"] == "a100"  # published rows: their run's GPU


def test_wheel_carries_the_bundled_dataset_and_no_kernels_package(project_wheel):
    wheel = project_wheel  # built from the whole repository, kernels/ and all (conftest.py)
    names = zipfile.ZipFile(wheel).namelist()
    assert "cuda_l2_explorer/db/bundled/manifest.json" in names
    assert "cuda_l2_explorer/db/bundled/published_speedups.parquet" in names
    assert "cuda_l2_explorer/importer/harness/csrc/hgemm_baselines.cu" in names
    assert "cuda_l2_explorer/importer/harness/csrc/kernel_wrapper.cpp.in" in names
    # One import namespace: nothing else at the top level of site-packages (SPEC §2).
    top_level = {n.split("/")[0] for n in names}
    assert top_level == {"cuda_l2_explorer", wheel.name.split("-py")[0] + ".dist-info"}, top_level


def _measured_store(path: Path, run_id: str, mode: str, kernel_sha: str) -> Path:
    from test_store import _insert_bench_run

    with Store.open(path, with_bundled=False) as store, store.transaction():
        _insert_bench_run(store, run_id, 256, 512, 1024)
        store.con.execute("UPDATE runs SET mode = ? WHERE run_id = ?", [mode, run_id])
        store.con.execute(
            "INSERT INTO kernels (kernel_id, set_id, m, n, k, source_sha256) "
            "VALUES ('ours/h100_F32F16F16F32/256_512_1024', 'ours/h100_F32F16F16F32', 256, 512, 1024, ?)",
            [kernel_sha],
        )
    return path


def test_one_set_measured_in_two_stores_merges_once(tmp_path):
    offline = _measured_store(tmp_path / "offline.duckdb", "r-off", "offline", "aa")
    server = _measured_store(tmp_path / "server.duckdb", "r-srv", "server", "aa")
    data = build([], [offline, server], tmp_path / "bundle", "two modes")
    assert data["rows"]["kernel_sets"] == 1 and data["rows"]["kernels"] == 1
    assert data["rows"]["runs"] == 2 and data["rows"]["measurements"] == 8


def test_another_systems_kernel_source_is_never_bundled(tmp_path):
    """The reference set is measured from its files; the bundle keeps the measurements and the
    file's sha256, not the code (ours keeps its source: export needs it)."""
    path = _measured_store(tmp_path / "s.duckdb", "r-off", "offline", "aa")
    with Store.open(path, with_bundled=False) as store, store.transaction():
        store.con.execute("UPDATE kernels SET source = 'our code'")
        store.con.execute(
            "INSERT INTO kernel_sets (set_id, name, gpu, accumulator, origin) "
            "VALUES ('cuda-l2/h100_F32F16F16F32', 'cuda-l2', 'h100', 'F32F16F16F32', 'imported')"
        )
        store.con.execute(
            "INSERT INTO kernels (kernel_id, set_id, m, n, k, source_sha256, source, build_log) VALUES "
            "('cuda-l2/h100_F32F16F16F32/64_64_64', 'cuda-l2/h100_F32F16F16F32', 64, 64, 64, 'cc', "
            "'their code', 'a warning quoting their code')"
        )
        store.con.execute("UPDATE runs SET set_id = 'cuda-l2/h100_F32F16F16F32'")
        store.con.execute(
            "INSERT INTO run_configs (run_id, m, n, k, status, message) "
            "VALUES ('r-off', 256, 512, 1024, 'compile_error', ?)",
            [
                "/tmp/k/64_64_64.cu(175): error: no suitable constructor exists\n"
                "        their_call(workspace, device_id);\n"
                "                                 ^\n"
                '1 error detected in the compilation of "wrapper.cu".'
            ],
        )
    out = tmp_path / "bundle"
    build([], [path], out, "foreign sources")
    with Store.open(tmp_path / "read.duckdb", read_only=True, with_bundled=True, bundled_dir=out) as store:
        sql = "SELECT set_id, source_sha256, source, build_log FROM all_kernels ORDER BY 1"
        rows = store.query(sql).rows()
        message = store.scalar("SELECT message FROM all_run_configs WHERE run_id = 'r-off'")
    assert rows == [
        ("cuda-l2/h100_F32F16F16F32", "cc", None, None),
        ("ours/h100_F32F16F16F32", "aa", "our code", None),
    ]
    assert message.splitlines() == [  # the diagnostics, not the code nvcc quotes under them
        "/tmp/k/64_64_64.cu(175): error: no suitable constructor exists",
        '1 error detected in the compilation of "wrapper.cu".',
    ]


def test_two_stores_with_different_kernels_under_one_id_are_refused(tmp_path):
    offline = _measured_store(tmp_path / "offline.duckdb", "r-off", "offline", "aa")
    server = _measured_store(tmp_path / "server.duckdb", "r-srv", "server", "bb")
    with pytest.raises(SystemExit, match="different kernels"):
        build([], [offline, server], tmp_path / "bundle", "two modes")
    assert not (tmp_path / "bundle").exists()


def test_a_retuned_set_replaces_its_kernels_and_what_it_says_it_was_tuned_with(tmp_path):
    first = _measured_store(tmp_path / "first.duckdb", "r-1", "offline", "aa")
    retuned = _measured_store(tmp_path / "retuned.duckdb", "r-2", "offline", "bb")
    for path, library in ((first, "libA"), (retuned, "libB")):
        with Store.open(path, with_bundled=False) as store:
            store.con.execute("UPDATE kernel_sets SET description = ?", [f"tuned with {library}.so"])
    build([], [first], tmp_path / "base", "base")
    with pytest.raises(SystemExit, match="different kernels"):  # not without being told
        build([], [retuned], tmp_path / "refused", "retuned", base=tmp_path / "base")
    out = tmp_path / "bundle"
    build([], [retuned], out, "retuned", base=tmp_path / "base", replace_kernels=True, drop_runs=["r-1"])
    with Store.open(tmp_path / "read.duckdb", read_only=True, with_bundled=True, bundled_dir=out) as store:
        assert store.query("SELECT source_sha256 FROM all_kernels").rows() == [("bb",)]
        assert store.scalar("SELECT description FROM all_kernel_sets") == "tuned with libB.so"


def test_a_search_log_goes_in_without_the_scratch_set_its_search_wrote(tmp_path):
    """A search on a GPU machine writes its picks to a scratch set (``p/tuned``); the picks that
    won were measured and merged into one of ours. Its log is the evidence behind them: that goes
    in, the scratch set does not."""
    tune = tmp_path / "tune.duckdb"
    with Store.open(tune, with_bundled=False) as store, store.transaction():
        store.con.execute(
            "INSERT INTO runs (run_id, kind, gpu, status, tool_version) "
            "VALUES ('t-1', 'tune', 'h200', 'complete', 't')"
        )
        store.con.execute(
            "INSERT INTO run_configs (run_id, m, n, k, status) VALUES ('t-1', 256, 512, 1024, 'done')"
        )
        store.con.execute(
            "INSERT INTO search_log (run_id, m, n, k, candidate, stage, kernel, status, median, chosen) "
            "VALUES "
            "('t-1', 256, 512, 1024, 'a|v', 2, 'a', 'ok', 1e-5, true), "
            "('t-1', 256, 512, 1024, 'b|v', 1, 'b', 'ok', 2e-5, false)"
        )
        store.con.execute(
            "INSERT INTO kernel_sets (set_id, name, gpu, accumulator, origin) "
            "VALUES ('p/tuned', 'p', 'h200', 'F32F16F16F32', 'ours')"
        )
        store.con.execute(
            "INSERT INTO kernels (kernel_id, set_id, m, n, k, source_sha256) "
            "VALUES ('p/tuned/256_512_1024', 'p/tuned', 256, 512, 1024, 'aa')"
        )
    out = tmp_path / "bundle"
    measured = _measured_store(tmp_path / "grid.duckdb", "r-off", "offline", "aa")
    data = build([], [measured], out, "with a search", search_logs=[tune])
    assert data["rows"]["search_log"] == 2 and data["rows"]["kernel_sets"] == 1
    with Store.open(tmp_path / "read.duckdb", read_only=True, with_bundled=True, bundled_dir=out) as store:
        assert store.scalar("SELECT count(*) FROM all_kernel_sets WHERE set_id = 'p/tuned'") == 0
        assert store.scalar("SELECT gpu FROM all_runs WHERE run_id = 't-1'") == "h200"
        chosen = store.query("SELECT candidate FROM all_search_log WHERE chosen").rows()
    assert chosen == [("a|v",)]


def test_a_superseded_run_is_dropped_from_the_base_whole(tmp_path, db_path):
    """A re-measured set replaces its old run: every row of the dropped run goes, nothing else."""
    base = bundled.default_dir()
    with Store.open(db_path, read_only=True, with_bundled=True, bundled_dir=base) as store:
        old = store.scalar(
            "SELECT run_id FROM all_runs WHERE kind = 'bench' AND mode = 'offline' "
            "ORDER BY started_at LIMIT 1"
        )
        before = store.query("SELECT run_id, count(*) AS n FROM all_measurements GROUP BY ALL").rows()
    assert old is not None
    out = tmp_path / "bundle"
    build([], [], out, "dropped", base=base, drop_runs=[old])
    after_db = tmp_path / "after.duckdb"
    with Store.open(after_db, read_only=True, with_bundled=True, bundled_dir=out) as store:
        after = store.query("SELECT run_id, count(*) AS n FROM all_measurements GROUP BY ALL").rows()
        for table in ("runs", "samples", "run_configs", "audit_findings", "search_log"):
            assert store.scalar(f"SELECT count(*) FROM all_{table} WHERE run_id = ?", [old]) == 0, table
    assert sorted(after) == sorted(r for r in before if r[0] != old)
    with pytest.raises(SystemExit, match="not in"):
        build([], [], tmp_path / "again", "dropped", base=out, drop_runs=[old])
