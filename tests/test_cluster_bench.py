"""A benchmark run measured on a real Dask cluster's GPU workers (``bench --cluster``): a scheduler
and two worker processes on 127.0.0.1, each declaring ``GPU=1`` and measuring through the stand-in
GPU worker (tests/fake_worker.py). One is killed with SIGKILL while the run goes on: its config is
measured by the other, every config is recorded once, by the driver. A cluster of two GPU types
(the stand-in told to report an H200 on some workers) gets a run per type."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest

pytest.importorskip("distributed")

from build_fixtures import PLANTED32, needs_nvcc
from cuda_l2_explorer.db import writes
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
        # Once w0 has measured a config too: on a loaded machine (the suite in two workers) w1 could
        # measure two before w0's first, slower to start, and w0 was killed having measured none.
        w0_measured = any("w0: done" in line for line in shown)
        if p.done >= 2 and w0_measured and workers[0].poll() is None:
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


def test_a_plan_lost_with_its_only_worker_is_scattered_again(dask_cluster, db_path, monkeypatch):
    """The plan is scattered to the GPU workers a run starts with; Dask may keep one copy of it.
    Here w0 alone holds it: once w0 has measured a config, w1 joins and w0 is killed. The configs
    then cancelled for want of the plan are tried again after the lane scatters it anew (to w1):
    none is recorded as an error."""
    from cuda_l2_explorer.importer.harness import cluster_lane

    env = {"CUDA_L2_EXPLORER_WORKER": str(FAKE), "FAKE_WORKER_DELAY": "0.3"}
    address, workers = dask_cluster(1, *GPU_WORKER, env=env)
    shapes = [Shape(64 * i, 64, 64) for i in range(1, 5)]
    _with_set(db_path)
    scatters: list[int] = []
    scatter_plan = cluster_lane.ClusterLane._scatter_plan
    monkeypatch.setattr(
        cluster_lane.ClusterLane, "_scatter_plan", lambda lane: scatters.append(1) or scatter_plan(lane)
    )
    shown: list[str] = []

    def progress(p: runner.Progress) -> None:
        shown.append(p.current)
        if any("w0: done" in line for line in shown) and workers[0].poll() is None:
            dask_cluster.add_worker(address, "w1", *GPU_WORKER, env=env)
            os.killpg(workers[0].pid, signal.SIGKILL)

    run_id, summary = runner.run_plan(
        runner.store_opener(db_path), _plan(shapes, address), "test", progress=progress
    )
    assert workers[0].wait(timeout=30) == -signal.SIGKILL
    assert len(scatters) >= 2  # scattered again once w0's copy was gone
    assert summary["status"] == "complete" and summary["done"] == len(shapes) == summary["measured_now"]
    with Store.open(db_path) as store:
        details = store.query("SELECT details FROM run_configs WHERE run_id = ?", [run_id]).rows()
    by_worker = [json.loads(d)["cluster_worker"] for (d,) in details]
    assert len(by_worker) == len(shapes) and "w0" in by_worker and "w1" in by_worker


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


# A cluster of two GPU types: w0 reports an H100 (the fake worker's default), w1 and w2 an H200.
H200 = {"FAKE_GPU_NAME": "Fake H200 141GB", "FAKE_GPU_SMS": "140"}
TYPES = {"h100": ("Fake H100 80GB", 132, {"w0"}), "h200": ("Fake H200 141GB", 140, {"w1", "w2"})}


def _mixed_cluster(dask_cluster, delay: str) -> str:
    env = {"CUDA_L2_EXPLORER_WORKER": str(FAKE), "FAKE_WORKER_DELAY": delay}
    address, _ = dask_cluster(3, *GPU_WORKER, env=env, worker_env=[{}, H200, H200])
    return address


def _runs(db_path) -> dict[str, dict]:
    """Each run of the store by its GPU label: id, status, device, and per config (M) the
    cluster worker that measured it, its status and how many measurement rows it has."""
    with Store.open(db_path, read_only=True) as store:
        runs = store.query("SELECT run_id, gpu, gpu_name, sm_count, status FROM runs").rows()
        found = {}
        for run_id, gpu, gpu_name, sm_count, status in runs:
            configs = store.query(
                "SELECT m, status, details FROM run_configs WHERE run_id = ?", [run_id]
            ).rows()
            counts = dict(
                store.query(
                    "SELECT m, count(*) FROM measurements WHERE run_id = ? GROUP BY m", [run_id]
                ).rows()
            )
            found[gpu] = {
                "run_id": run_id,
                "device": (gpu_name, sm_count),
                "status": status,
                "configs": [(m, st, json.loads(d)["cluster_worker"], counts.get(m)) for m, st, d in configs],
            }
        dupes = store.scalar(
            "SELECT count(*) FROM (SELECT run_id, m, n, k, implementation, metric, count(*) c "
            "FROM measurements GROUP BY ALL HAVING c > 1)"
        )
    assert dupes == 0
    return found


def test_a_bench_on_a_cluster_of_two_gpu_types_makes_a_run_per_type(cli, dask_cluster, db_path):
    """One run per GPU type, each with every config once, measured by its own type's workers only
    and labelled with its own device; the CLI's output names both runs."""
    # 1 s a config: long enough that on a loaded machine (the suite in two workers) one H200 worker
    # cannot measure all five before the other, slower to start its first, takes one (at 0.3 s it did)
    address = _mixed_cluster(dask_cluster, "1.0")
    mnk = ["64_64_64", "128_64_64", "192_64_64", "256_64_64", "320_64_64"]
    result = cli(
        "--db", db_path, "bench", "--mnk", ",".join(mnk), "--baselines", "cuBLAS-nn,torch.matmul",
        "--cluster", address, "--progress", "none", "--json",
    )  # fmt: skip
    assert result.code == 0, result.err
    shown = {row["gpu"]: row for row in result.json()}
    runs = _runs(db_path)
    assert sorted(shown) == sorted(runs) == ["h100", "h200"]
    for gpu, (name, sms, workers) in TYPES.items():
        run, row = runs[gpu], shown[gpu]
        assert row["run_id"] == run["run_id"] and row["gpu_name"] == name
        assert row["status"] == run["status"] == "complete" and row["measured_now"] == len(mnk)
        assert row["cluster_workers"] == len(workers)
        assert run["device"] == (name, sms)
        assert sorted(m for m, *_ in run["configs"]) == [int(x.split("_")[0]) for x in mnk]
        assert all(status == "done" and rows == 2 for _, status, _, rows in run["configs"])
        assert {worker for _, _, worker, _ in run["configs"]} <= workers
        assert f"run {run['run_id']}: {len(mnk)} configs measured now" in result.err
    # Both H200 workers took part: the H200 run's configs were shared between them.
    assert {worker for _, _, worker, _ in runs["h200"]["configs"]} == {"w1", "w2"}


def test_a_run_of_a_mixed_cluster_resumes_on_its_own_gpu_type(dask_cluster, db_path):
    """Both runs stopped by the time budget; resumed, the H200 run is measured by the H200 workers
    alone and finished, nothing twice; the H100 run is left as it was."""
    address = _mixed_cluster(dask_cluster, "1.0")
    shapes = [Shape(64 * i, 64, 64) for i in range(1, 7)]
    _with_set(db_path)
    # A caller that keeps one run's results (the tuner) has the mixed cluster refused, nothing stored.
    with pytest.raises(UsageError, match=r"more than one GPU type \(1 h100, 2 h200\)"):
        runner.run_plan(runner.store_opener(db_path), _plan(shapes, address), "test", mixed_gpus=False)
    with Store.open(db_path, read_only=True) as store:
        assert store.scalar("SELECT count(*) FROM runs") == 0
    plan = _plan(shapes, address)
    plan.time_budget_s = 0.1  # the configs in flight (one per worker) finish, nothing else starts
    shown: list[str] = []
    first_id, summary = runner.run_plan(
        runner.store_opener(db_path), plan, "test", progress=lambda p: shown.append(p.current)
    )
    by_gpu = {r["gpu"]: r for r in summary["runs"]}
    assert first_id == by_gpu["h100"]["run_id"] and summary["gpu"] == "h100"
    assert by_gpu["h100"]["measured_now"] == 1 and by_gpu["h200"]["measured_now"] == 2
    assert all(r["status"] == "interrupted" and r["left"] > 0 for r in by_gpu.values())
    # The progress line says which GPU type each worker's config is measured on (on a loaded
    # machine one H200 worker may measure both of that run's configs, the other none).
    assert any("h100 " in line and "w0: measuring" in line for line in shown)
    assert any("h200 " in line and ("w1: measuring" in line or "w2: measuring" in line) for line in shown)
    before = _runs(db_path)

    with Store.open(db_path) as store:
        found = runner.find_resumable(store, by_gpu["h200"]["run_id"], None, "offline")
    run_id, again = runner.run_plan(
        runner.store_opener(db_path), _plan(shapes, address), "test", resume=found
    )
    assert run_id == by_gpu["h200"]["run_id"] and "runs" not in again
    assert again["gpu"] == "h200" and again["measured_now"] == len(shapes) - 2 and again["left"] == 0
    assert again["cluster_workers"] == 2
    after = _runs(db_path)
    assert after["h100"] == before["h100"]  # untouched: interrupted, its one config
    h200 = after["h200"]
    assert h200["status"] == "complete" and sorted(m for m, *_ in h200["configs"]) == [s.m for s in shapes]
    assert {worker for _, _, worker, _ in h200["configs"]} <= {"w1", "w2"}
    # Each config once: the kernel and the two baselines, one row each.
    assert all(status == "done" and rows == 3 for _, status, _, rows in h200["configs"])


def test_an_imported_set_built_in_batches_keeps_one_run_per_gpu_type(dask_cluster, db_path):
    """An imported set's kernels are built and measured a batch at a time: every batch after the
    first continues the runs the first made, one per GPU type, instead of starting new ones."""
    from cuda_l2_explorer.engine.bench import BenchRun, measure_in_batches

    address = _mixed_cluster(dask_cluster, "0")
    shapes = [Shape(64 * i, 64, 64) for i in range(1, 6)]
    _with_set(db_path)
    plan = _plan(shapes, address)
    plan.kernels = {}

    def build(batch: list[Shape]) -> dict:
        return {s: KernelEntry(module="/fake/module.so") for s in batch}

    def measure(batch_plan: BenchPlan, batch_resume, continued: bool) -> BenchRun:
        command = None if continued else "test"
        return BenchRun(*runner.run_plan(runner.store_opener(db_path), batch_plan, command, batch_resume))

    last = measure_in_batches(plan, shapes, build, 2, None, measure)
    runs = _runs(db_path)
    assert sorted(runs) == ["h100", "h200"]  # three batches, two runs
    assert {r.run_id for r in last.runs()} == {r["run_id"] for r in runs.values()}
    for gpu, (_, _, workers) in TYPES.items():
        assert runs[gpu]["status"] == "complete"
        assert sorted(m for m, *_ in runs[gpu]["configs"]) == [s.m for s in shapes]
        assert {worker for _, _, worker, _ in runs[gpu]["configs"]} <= workers
    with Store.open(db_path) as store:  # each run reopened by two later batches, named once
        assert store.query("SELECT DISTINCT command_line FROM runs").rows() == [("test",)]


def test_a_run_is_not_resumed_on_a_cluster_without_its_gpu_type(dask_cluster, db_path):
    address, _ = dask_cluster(1, *GPU_WORKER, env={"CUDA_L2_EXPLORER_WORKER": str(FAKE)})  # an H100
    _with_set(db_path)
    plan = _plan([Shape(64, 64, 64)], address)
    device = {"gpu_name": "Fake H200 141GB", "sm_count": 140, "l2_bytes": 60 << 20, "memory_bytes": 141 << 30}
    with Store.open(db_path) as store:
        run_id = runner.create_run(store, plan, device, "test")
        with store.transaction():
            writes.finish_run(store, run_id, "interrupted", None)
        found = runner.find_resumable(store, run_id, None, "offline")
    with pytest.raises(UsageError, match=rf"run {run_id} measures on h200 GPUs and the cluster has no h200"):
        runner.run_plan(runner.store_opener(db_path), plan, "test", resume=found)
    with Store.open(db_path, read_only=True) as store:
        assert store.scalar("SELECT status FROM runs") == "interrupted"  # not reopened
        assert store.scalar("SELECT count(*) FROM run_configs") == 0


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
