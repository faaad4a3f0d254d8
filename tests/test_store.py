"""Store round trips on real DuckDB files, migrations, and every way a store can be unusable."""

import os

import duckdb
import pytest
from cuda_l2_explorer.db.errors import StoreError
from cuda_l2_explorer.db.schema import SCHEMA_VERSION
from cuda_l2_explorer.db.store import Store


def _insert_bench_run(store: Store, run_id="r1", m=256, n=512, k=1024):
    """A measured run: kernel vs two cuBLAS layouts, device time in seconds."""
    store.con.execute(
        "INSERT INTO gpus (gpu, name, sm_count, l2_bytes) "
        "VALUES ('h100', 'NVIDIA H100', 132, 52428800) ON CONFLICT DO NOTHING"
    )
    store.con.execute(
        "INSERT INTO kernel_sets (set_id, name, gpu, accumulator, origin) "
        "VALUES ('ours/h100_F32F16F16F32', 'ours', 'h100', 'F32F16F16F32', 'ours') ON CONFLICT DO NOTHING"
    )
    store.con.execute(
        "INSERT INTO runs (run_id, kind, set_id, gpu, mode, status, tool_version) "
        "VALUES (?, 'bench', 'ours/h100_F32F16F16F32', 'h100', 'offline', 'complete', 'test')",
        [run_id],
    )
    rows = [
        # implementation, median, p10, p90
        ("kernel", 10e-6, 9.9e-6, 10.1e-6),
        ("cuBLAS-nn", 12e-6, 11.9e-6, 12.1e-6),  # clear win for the kernel
        ("cuBLAS-tn", 10.05e-6, 9.95e-6, 10.15e-6),  # inside the spread: 'same'
        ("torch.matmul", 8e-6, 7.9e-6, 8.1e-6),  # clear loss
    ]
    store.insert_rows(
        "measurements",
        (
            "run_id",
            "m",
            "n",
            "k",
            "implementation",
            "metric",
            "unit",
            "n_samples",
            "median",
            "p10",
            "p90",
            "status",
        ),
        [
            (run_id, m, n, k, impl, "device_time", "s", 20, med, p10, p90, "ok")
            for impl, med, p10, p90 in rows
        ],
    )
    store.insert_rows(
        "samples",
        ("run_id", "m", "n", "k", "implementation", "metric", "idx", "value"),
        [(run_id, m, n, k, "kernel", "device_time", i, 10e-6 + i * 1e-9) for i in range(20)],
    )


def test_round_trip_on_a_real_file(db_path):
    with Store.open(db_path) as store:
        assert store.schema_version() == SCHEMA_VERSION
        with store.transaction():
            _insert_bench_run(store)
    assert db_path.stat().st_size > 0
    with Store.open(db_path, read_only=True) as store:
        samples = store.query("SELECT value FROM all_samples ORDER BY idx")
        assert samples.height == 20 and samples["value"][0] == pytest.approx(10e-6)
        speed = store.query("SELECT baseline, speedup, outcome, kernel_s FROM speedups ORDER BY baseline")
        by = {r["baseline"]: r for r in speed.iter_rows(named=True)}
        assert by["cuBLAS-nn"]["speedup"] == pytest.approx(1.2)
        assert by["cuBLAS-nn"]["outcome"] == "win"
        assert by["cuBLAS-tn"]["outcome"] == "same"
        assert by["torch.matmul"]["outcome"] == "loss"
        # derived: fastest layout and fastest of all
        assert by["cuBLAS-max"]["speedup"] == pytest.approx(1.005)
        assert by["best-baseline"]["speedup"] == pytest.approx(0.8)
        assert by["best-baseline"]["kernel_s"] == pytest.approx(10e-6)


def test_failed_transaction_leaves_nothing(db_path):
    with Store.open(db_path) as store:
        with pytest.raises(RuntimeError), store.transaction():
            _insert_bench_run(store)
            raise RuntimeError("boom")
        assert store.scalar("SELECT count(*) FROM measurements") == 0
        assert store.scalar("SELECT count(*) FROM runs") == 0


def test_migrations_are_recorded_once(db_path):
    Store.open(db_path).close()
    Store.open(db_path).close()
    con = duckdb.connect(str(db_path), read_only=True)
    assert con.execute("SELECT count(*), max(version) FROM schema_info").fetchone() == (
        SCHEMA_VERSION,
        SCHEMA_VERSION,
    )
    con.close()


def test_read_only_open_of_a_missing_store_creates_nothing(db_path):
    with Store.open(db_path, read_only=True) as store:
        assert store.scalar("SELECT count(*) FROM all_kernel_sets") == 0
    assert not db_path.exists()


def test_newer_schema_is_refused(db_path):
    Store.open(db_path).close()
    con = duckdb.connect(str(db_path))
    con.execute("INSERT INTO schema_info (version, description, tool_version) VALUES (99, 'future', '9.9')")
    con.close()
    for read_only in (False, True):
        with pytest.raises(StoreError, match="newer"):
            Store.open(db_path, read_only=read_only)


def test_corrupt_and_foreign_files_are_refused(tmp_path):
    corrupt = tmp_path / "corrupt.duckdb"
    corrupt.write_bytes(os.urandom(64 * 1024))
    with pytest.raises(StoreError, match="corrupt"):
        Store.open(corrupt)
    foreign = tmp_path / "foreign.duckdb"
    con = duckdb.connect(str(foreign))
    con.execute("CREATE TABLE something (x INTEGER)")
    con.close()
    with pytest.raises(StoreError, match="not a cuda-l2-explorer store"):
        Store.open(foreign)
    with pytest.raises(StoreError, match="directory"):
        Store.open(tmp_path)


def test_read_only_file_is_refused_for_writing(db_path):
    Store.open(db_path).close()
    os.chmod(db_path, 0o444)
    try:
        with pytest.raises(StoreError, match="read-only"):
            Store.open(db_path)
        with Store.open(db_path, read_only=True) as store:  # reading still works
            assert store.schema_version() == SCHEMA_VERSION
    finally:
        os.chmod(db_path, 0o644)


def test_locked_store_is_reported(db_path):
    from conftest import store_locked_by_another_process

    Store.open(db_path).close()
    with (
        store_locked_by_another_process(db_path),
        pytest.raises(StoreError, match="in use by another process"),
    ):
        Store.open(db_path)


def test_tool_version_is_the_installed_distribution():
    import importlib.metadata

    from cuda_l2_explorer.db.store import tool_version

    assert tool_version() == importlib.metadata.version("cuda-l2-explorer")


def _make_store_at_version(path, version: int) -> None:
    """A real store file as an older cuda-l2-explorer left it: migrations 1..version only."""
    from cuda_l2_explorer.db.schema import MIGRATIONS

    con = duckdb.connect(str(path))
    for number, description, statements in MIGRATIONS:
        if number > version:
            break
        for statement in statements:
            con.execute(statement)
        con.execute(
            "INSERT INTO schema_info (version, description, tool_version) VALUES (?, ?, 'old')",
            [number, description],
        )
    con.execute("INSERT INTO gpus (gpu) VALUES ('h100')")
    con.execute(
        "INSERT INTO kernel_sets (set_id, name, gpu, accumulator, origin) "
        "VALUES ('old/h100_F32F16F16F32', 'old', 'h100', 'F32F16F16F32', 'imported')"
    )
    con.execute(
        "INSERT INTO kernels (kernel_id, set_id, m, n, k) VALUES ('k1', 'old/h100_F32F16F16F32', 64, 64, 64)"
    )
    con.close()


@pytest.mark.parametrize("version", range(1, SCHEMA_VERSION))
def test_read_only_open_of_an_older_store_reads_it_without_writing(tmp_path, version):
    """Browsing an older store must not migrate it: it reads through, missing columns as NULL."""
    from cuda_l2_explorer.db import reads

    path = tmp_path / "old.duckdb"
    _make_store_at_version(path, version)
    before = path.read_bytes()
    with Store.open(path, read_only=True, with_bundled=False) as store:
        assert store.schema_version() == version
        assert reads.kernel_sets(store)["set_id"].to_list() == ["old/h100_F32F16F16F32"]
        kernel = store.query("SELECT kernel_id, build_status FROM all_kernels").rows()
        assert kernel == [("k1", None)]  # build_status came with migration 2
        assert store.scalar("SELECT count(*) FROM all_search_log") == 0  # table of migration 3
    assert path.read_bytes() == before, "a read-only open wrote to the store"
    # With the bundled dataset beside it, too (its views read every current column).
    with Store.open(path, read_only=True, with_bundled=True) as store:
        assert store.scalar("SELECT count(*) FROM all_kernel_sets WHERE NOT bundled") == 1
        assert store.scalar("SELECT count(*) FROM all_kernel_sets WHERE bundled") > 0
    assert path.read_bytes() == before
    # A writable open still migrates it.
    with Store.open(path, with_bundled=False) as store:
        assert store.schema_version() == SCHEMA_VERSION
        assert store.scalar("SELECT count(*) FROM all_kernels") == 1


def test_read_only_open_of_an_older_read_only_file(tmp_path):
    """A store file without write permission is browsable even when its schema is older."""
    path = tmp_path / "old.duckdb"
    _make_store_at_version(path, 1)
    os.chmod(path, 0o444)
    try:
        with Store.open(path, read_only=True, with_bundled=False) as store:
            assert store.scalar("SELECT count(*) FROM all_kernels") == 1
    finally:
        os.chmod(path, 0o644)
