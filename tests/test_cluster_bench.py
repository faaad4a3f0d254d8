"""A benchmark run measured on a real Dask cluster's GPU workers (``bench --cluster``): a scheduler
and two worker processes on 127.0.0.1, each declaring ``GPU=1`` and measuring through the stand-in
GPU worker (tests/fake_worker.py). One is killed with SIGKILL while the run goes on: its config is
measured by the other, every config is recorded once, by the driver."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest

pytest.importorskip("distributed")

from build_fixtures import PLANTED32, needs_nvcc
from cuda_l2_explorer.db.errors import UsageError
from cuda_l2_explorer.db.shapes import Shape
from cuda_l2_explorer.db.store import Store
from cuda_l2_explorer.importer.harness import runner
from cuda_l2_explorer.importer.harness.plan import BenchPlan, KernelEntry
from cuda_l2_explorer.importer.harness.protocol import ProtocolSettings

FAKE = Path(__file__).parent / "fake_worker.py"
SET_ID = "planted/h100_F32F16F16F32"
GPU_WORKER = ("--resources", "GPU=1")


def _plan(shapes, address: str) -> BenchPlan:
    return BenchPlan(
        shapes=list(shapes),
        settings=ProtocolSettings(mode="offline", samples=3),
        baselines=("cuBLAS-nn", "torch.matmul"),
        set_id=SET_ID,
        kernels={s: KernelEntry(module="/fake/module.so") for s in shapes},
        timeout_s=30.0,
        cluster=address,
    )


def _with_set(db_path) -> None:
    with Store.open(db_path) as store, store.transaction():
        store.con.execute(
            "INSERT INTO kernel_sets (set_id, name, gpu, accumulator, origin) "
            f"VALUES ('{SET_ID}', 'planted', 'h100', 'F32F16F16F32', 'imported')"
        )


def test_a_run_on_the_cluster_survives_a_killed_gpu_worker(dask_cluster, db_path):
    env = {"CUDA_L2_EXPLORER_WORKER": str(FAKE), "FAKE_WORKER_DELAY": "0.5"}
    address, workers = dask_cluster(2, *GPU_WORKER, env=env)
    shapes = [Shape(64 * i, 64, 64) for i in range(1, 9)]
    _with_set(db_path)

    shown: list[str] = []

    def progress(p: runner.Progress) -> None:
        shown.append(p.current)
        if p.done >= 2 and workers[0].poll() is None:
            os.killpg(workers[0].pid, signal.SIGKILL)  # while the other worker has one in flight

    run_id, summary = runner.run_plan(
        runner.store_opener(db_path), _plan(shapes, address), "test", progress=progress
    )
    assert workers[0].wait(timeout=30) == -signal.SIGKILL
    assert summary["status"] == "complete" and summary["measured_now"] == len(shapes) == summary["done"]
    assert summary["cluster_workers"] == 2 and summary["cluster_task_seconds"] >= 0.5 * len(shapes)
    with Store.open(db_path) as store:
        rows = store.query("SELECT m, status, details FROM run_configs WHERE run_id = ?", [run_id]).rows()
        dupes = store.scalar(
            "SELECT count(*) FROM (SELECT m, n, k, implementation, metric, count(*) c "
            "FROM measurements GROUP BY ALL HAVING c > 1)"
        )
        params = json.loads(store.scalar("SELECT params FROM runs"))
    assert sorted(m for m, _, _ in rows) == [s.m for s in shapes] and dupes == 0
    assert all(status == "done" for _, status, _ in rows)
    by_worker = [json.loads(d)["cluster_worker"] for _, _, d in rows]
    assert set(by_worker) == {"w0", "w1"} and by_worker.count("w1") > by_worker.count("w0")
    assert params["cluster"] == address
    # Per-worker progress, live: each worker's phases reach the driver's progress line.
    assert any("w0: measuring" in line for line in shown) and any("w1: measuring" in line for line in shown)


@needs_nvcc
def test_bench_of_an_imported_set_compiles_it_on_the_cluster(
    cli, dask_cluster, db_path, fake_config, tmp_path, monkeypatch
):
    """bench --set <imported set> --cluster: its kernels compile on the cluster's workers, for the
    set's GPU (this machine has none), into this machine's cache; the same workers measure them."""
    from cuda_l2_explorer.importer.harness import build as kb

    address, _ = dask_cluster(2, *GPU_WORKER, env={"CUDA_L2_EXPLORER_WORKER": str(FAKE)})
    asked: list[str] = []

    def make_config(device: str = "auto", **_) -> kb.BuildConfig:
        asked.append(device)
        return fake_config  # an H100's, with the fake torch headers

    monkeypatch.setattr(kb, "make_config", make_config)
    monkeypatch.setenv("CUDA_L2_EXPLORER_BUILD_CACHE", str(tmp_path / "kernels"))
    result = cli(
        "--db", db_path, "bench", "--set", PLANTED32, "--mnk", "64_64_64,128_128_128",
        "--baselines", "cuBLAS-nn", "--cluster", address, "--progress", "none", "--json",
    )  # fmt: skip
    assert result.code == 0, result.err
    (run,) = result.json()
    assert run["status"] == "complete" and run["measured_now"] == 2
    assert asked == ["h100"]
    metas = [json.loads(p.read_text()) for p in (tmp_path / "kernels").glob("*/build.json")]
    assert len(metas) == 2 and all(m["built_on"] in {"w0", "w1"} for m in metas)
    with Store.open(db_path, read_only=True) as store:
        assert store.scalar("SELECT count(*) FROM kernels WHERE build_status = 'ok'") == 2


def test_a_cluster_without_gpu_workers_is_refused(dask_cluster, db_path):
    address, _ = dask_cluster(1)  # no --resources GPU=1
    _with_set(db_path)
    with pytest.raises(UsageError, match="no worker of the cluster declares a GPU"):
        runner.run_plan(runner.store_opener(db_path), _plan([Shape(64, 64, 64)], address), "test")


def test_gpus_and_cluster_do_not_go_together(cli, db_path):
    result = cli(
        "--db", db_path, "bench", "--mnk", "64_64_64", "--gpus", "all", "--cluster", "tcp://127.0.0.1:9"
    )
    assert result.code == 2 and "--gpus and --cluster" in result.err


def test_each_worker_gets_its_own_lane():
    """A local cluster's workers are named by their GPU's index and keep it; other names take the
    lowest index left, so two workers never share a gpu_index."""
    from cuda_l2_explorer.importer.harness.cluster_lane import ClusterLane

    lane = ClusterLane(None, _plan([Shape(64, 64, 64)], "tcp://127.0.0.1:9"), None, None, None, slots=3)
    assert [lane._lane(w) for w in ("1", "w0", "w1", "1", "0")] == [1, 0, 2, 1, 3]
