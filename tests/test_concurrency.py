"""One store, several processes: a benchmark writing while the CLI and the app read, and two
benchmarks at once. DuckDB allows one writer; the benchmark holds the file only for each commit
and readers only for each query, both waiting their turn (CUDA_L2_EXPLORER_LOCK_WAIT_S)."""

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from cuda_l2_explorer.db.store import Store

ROOT = Path(__file__).resolve().parents[1]
FAKE = Path(__file__).parent / "fake_worker.py"


def _start_bench(db_path: Path, tmp_path: Path, name: str, count: int, delay: float) -> subprocess.Popen:
    script = tmp_path / f"bench_{name}.py"
    script.write_text(
        textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(ROOT)!r})
        from pathlib import Path
        from cuda_l2_explorer.db.shapes import Shape
        from cuda_l2_explorer.db.store import Store
        from cuda_l2_explorer.importer.harness import runner
        from cuda_l2_explorer.importer.harness.plan import BenchPlan, KernelEntry
        from cuda_l2_explorer.importer.harness.protocol import ProtocolSettings
        set_id = "{name}/h100_F32F16F16F32"
        with Store.open({str(db_path)!r}) as store, store.transaction():
            store.con.execute(
                "INSERT INTO kernel_sets (set_id, name, gpu, accumulator, origin) "
                "VALUES (?, ?, 'h100', 'F32F16F16F32', 'imported') ON CONFLICT DO NOTHING",
                [set_id, "{name}"],
            )
        shapes = [Shape(64 * i, 64, 64) for i in range(1, {count} + 1)]
        plan = BenchPlan(shapes=shapes, settings=ProtocolSettings(samples=3), baselines=("cuBLAS-nn",),
                         set_id=set_id,
                         kernels={{s: KernelEntry(module="/fake.so") for s in shapes}})
        runner.run_plan(runner.store_opener(Path({str(db_path)!r})), plan, "test")
    """)
    )
    env = {
        **os.environ,
        "CUDA_L2_EXPLORER_WORKER": str(FAKE),
        "FAKE_WORKER_DELAY": str(delay),
        "CUDA_L2_EXPLORER_LOCK_WAIT_S": "30",
    }
    return subprocess.Popen([sys.executable, str(script)], env=env)


def _cli_json(db_path: Path, *args: str) -> tuple[int, object]:
    env = {**os.environ, "CUDA_L2_EXPLORER_LOCK_WAIT_S": "30"}
    done = subprocess.run(
        [sys.executable, "-m", "cuda_l2_explorer", "--db", str(db_path), *args, "--json"],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )
    return done.returncode, json.loads(done.stdout) if done.returncode == 0 else done.stderr


def test_cli_reads_committed_results_during_a_run(db_path, tmp_path):
    Store.open(db_path).close()
    bench = _start_bench(db_path, tmp_path, "alpha", count=12, delay=0.2)
    seen = []
    try:
        while bench.poll() is None:
            code, rows = _cli_json(db_path, "sets")
            assert code == 0, rows  # never an error while the benchmark writes
            seen.append(sum(r["configs"] for r in rows))
            time.sleep(0.2)
    finally:
        bench.wait(timeout=120)
    assert bench.returncode == 0
    assert seen == sorted(seen)  # readers see a growing, committed picture
    assert any(0 < x < 12 for x in seen) or len(seen) < 3  # and saw the run in progress
    code, rows = _cli_json(db_path, "sets")
    assert code == 0 and rows[0]["configs"] == 12


def test_two_benchmarks_share_one_store(db_path, tmp_path):
    Store.open(db_path).close()
    first = _start_bench(db_path, tmp_path, "alpha", count=8, delay=0.1)
    second = _start_bench(db_path, tmp_path, "beta", count=8, delay=0.1)
    assert first.wait(timeout=120) == 0 and second.wait(timeout=120) == 0
    with Store.open(db_path, read_only=True) as store:
        assert store.scalar("SELECT count(*) FROM runs WHERE status = 'complete'") == 2
        assert store.scalar("SELECT count(*) FROM run_configs") == 16
        assert (
            store.scalar(
                "SELECT count(*) FROM (SELECT run_id, m, implementation, metric, count(*) c "
                "FROM measurements "
                "GROUP BY ALL HAVING c > 1)"
            )
            == 0
        )


def test_app_data_source_reads_during_a_run(db_path, tmp_path, monkeypatch):
    from cuda_l2_explorer.app.data import DataSource

    monkeypatch.setenv("CUDA_L2_EXPLORER_LOCK_WAIT_S", "30")
    Store.open(db_path).close()
    source = DataSource(db_path, with_bundled=False)
    bench = _start_bench(db_path, tmp_path, "alpha", count=10, delay=0.2)
    counts = []
    try:
        while bench.poll() is None:
            selections = source.selections()
            if selections:
                counts.append(source.config_table(selections[0]).height)
            time.sleep(0.15)
    finally:
        bench.wait(timeout=120)
    assert bench.returncode == 0 and counts == sorted(counts)
    assert source.config_table(source.selections()[0]).height == 10
