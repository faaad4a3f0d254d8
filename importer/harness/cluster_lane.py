"""A run's configs measured on the GPU workers of a Dask cluster: an existing one (``bench --cluster``),
or one started on this host with a worker per GPU (``--gpus`` with several).

One Dask worker per GPU, as dask-cuda runs them, each declaring the resource ``GPU=1``
(``dask worker tcp://HOST:8786 --nthreads 1 --resources GPU=1``, its CUDA_VISIBLE_DEVICES set to
its GPU). A task measures one config through the same isolated worker process a local run uses
(:class:`measurer.ConfigMeasurer`), kept alive in the Dask worker between tasks, and returns the
outcome as a value: the driver stays the store's only writer. A Dask worker that dies takes its
running config with it and the scheduler gives that config to another worker; a config that
failed on every try (Dask's ``allowed-failures``) is recorded as an error and the run goes on. The
plan, scattered once to every GPU worker, can die with its workers too (Dask's memory manager may
keep a single copy of it): its configs then come back cancelled, "lost dependencies", through no
fault of theirs, so the lane scatters it again and gives them another try.
A cluster whose GPU workers hold several GPU types gets a lane per type, each feeding its own
run with its tasks pinned to that type's workers (harness.runner makes the runs).

The kernels a plan names (our library's ``.so``, an imported set's built modules) must be at the
same path on every worker: one host, or a shared file system.
"""

from __future__ import annotations

import functools
import hashlib
import json
import queue
import threading
import time
from concurrent.futures import CancelledError
from typing import Any

from cuda_l2_explorer.db.errors import UsageError
from cuda_l2_explorer.db.shapes import Shape
from cuda_l2_explorer.importer.cluster import GPU_RESOURCE, worker_name
from cuda_l2_explorer.importer.harness.device import GpuType, gpu_label
from cuda_l2_explorer.importer.harness.measurer import ConfigMeasurer, Outcome, ResultSink
from cuda_l2_explorer.importer.harness.plan import BenchPlan

# The workers publish each config's phases under a topic of this prefix, one per lane (a client
# keeps one handler per topic, and a mixed cluster has a lane per GPU type); the driver's lane
# subscribes, so the progress line shows what every GPU worker is doing, live.
PROGRESS_TOPIC = "cuda-l2-explorer-progress"

# A config cancelled because the plan it reads was lost is tried this many times more before it is
# recorded as an error (each try after scattering the plan anew, where its copies are gone).
LOST_PLAN_RETRIES = 3

# In a Dask worker process: the measurer of the plan its tasks belong to (one at a time).
_measurers: dict[str, ConfigMeasurer] = {}
_lock = threading.Lock()


def plan_key(plan: BenchPlan) -> str:
    """Names a plan across processes (the driver computes it once a run; tasks carry it)."""
    return hashlib.sha256(json.dumps(plan.params(), sort_keys=True, default=str).encode()).hexdigest()


def _measurer(plan: BenchPlan, key: str) -> ConfigMeasurer:
    if key not in _measurers:
        for old in _measurers.values():
            old.close()
        _measurers.clear()
        # GPU 0 of this Dask worker's visible ones: it was started with CUDA_VISIBLE_DEVICES set.
        _measurers[key] = ConfigMeasurer(0, plan)
    return _measurers[key]


def _publish_phase(topic: str, shape: Shape, phase: str) -> None:
    from distributed import get_worker

    # (The scheduler stamps a dict event with "worker", the address: ours is "name".)
    get_worker().log_event(topic, {"name": worker_name(), "shape": str(shape), "phase": phase})


def measure_task(plan: BenchPlan, key: str, shape: Shape, topic: str = PROGRESS_TOPIC) -> Outcome:
    """Runs on a Dask worker: one config, timed there; the outcome says which worker and how long.
    Its phases go to ``topic``, the submitting lane's."""
    with _lock:
        started = time.monotonic()
        measurer = _measurer(plan, key)
        measurer.on_phase = functools.partial(_publish_phase, topic)
        outcome = measurer.measure(shape)
    outcome.info = {
        **outcome.info,
        "cluster_worker": worker_name(),
        "task_seconds": time.monotonic() - started,
    }
    return outcome


def probe_task(plan: BenchPlan, key: str) -> dict:
    """Runs on a Dask worker: its harness worker's hello (the GPU it measures on)."""
    with _lock:
        measurer = _measurer(plan, key)
        measurer.ensure_worker()
        return dict(measurer.info or {})


def open_cluster(plan: BenchPlan):
    """The client a run measures through, for a ``with``: the cluster at ``plan.cluster``, else a
    local one with a worker per GPU of ``plan.gpus``."""
    from cuda_l2_explorer.importer.cluster import client_for, local_gpu_cluster

    return client_for(plan.cluster) if plan.cluster else local_gpu_cluster(plan.gpus)


def gpu_workers(client: Any) -> list[str]:
    """Addresses of the cluster's workers that declare a GPU."""
    workers = client.scheduler_info()["workers"]
    return sorted(a for a, w in workers.items() if w.get("resources", {}).get(GPU_RESOURCE))


def cluster_gpu_types(client: Any, plan: BenchPlan) -> list[GpuType]:
    """The cluster's GPU workers grouped by GPU type (its label, as the store names GPUs), in
    label order: a bench makes one run per type, each measured on that type's workers."""
    addresses = gpu_workers(client)
    if not addresses:
        raise UsageError(
            f"no worker of the cluster declares a GPU: start them with --resources {GPU_RESOURCE}=1 "
            "(one worker per GPU, --nthreads 1)"
        )
    infos = client.run(probe_task, plan, plan_key(plan), workers=addresses)
    types: dict[str, GpuType] = {}
    for address in sorted(infos):
        label = gpu_label(infos[address]["gpu_name"])
        types.setdefault(label, GpuType(label, infos[address], [])).workers.append(address)
    return [types[label] for label in sorted(types)]


class ClusterLane(threading.Thread):
    """Feeds configs to the cluster, one in flight per GPU worker, so that a stop (the time budget)
    leaves only the configs in flight to finish; reports outcomes on ``results`` as they arrive,
    under a lane index per Dask worker (its ``gpu_index`` in the store). ``workers``: the addresses
    its tasks are pinned to (one GPU type's, on a cluster of several); None: any GPU worker."""

    def __init__(
        self,
        client: Any,
        plan: BenchPlan,
        jobs: queue.Queue,
        results: ResultSink,
        stop: threading.Event,
        slots: int,
        workers: list[str] | None = None,
    ) -> None:
        super().__init__(daemon=True)
        self.client, self.plan, self.jobs, self.results, self.stop_event = client, plan, jobs, results, stop
        self.slots = max(1, slots)
        self.workers = workers
        self.topic = f"{PROGRESS_TOPIC}-{id(self)}"
        self.plan_key = plan_key(plan)
        self.lanes: dict[str, int] = {}
        self.futures: dict[str, tuple[Any, Shape]] = {}
        self.task_seconds = 0.0
        self.plan_data: Any = None
        self.lost_plan_tries: dict[Shape, int] = {}
        self.killed = False

    def run(self) -> None:
        from distributed import as_completed

        self.plan_data = self._scatter_plan()
        self.client.subscribe_topic(self.topic, self._on_phase)
        arriving = as_completed([], loop=self.client.loop)
        for _ in range(self.slots):
            self._submit(arriving)
        try:
            self._collect(arriving)
        finally:
            self.client.unsubscribe_topic(self.topic)

    def _scatter_plan(self) -> Any:
        return self.client.scatter(self.plan, workers=self.workers, broadcast=True, hash=False)

    def _retry_after_lost_plan(self, exc: Exception, shape: Shape) -> bool:
        """Whether ``shape``'s task was cancelled for want of the plan (not by ``kill``, not by its
        own failures) and has tries left; if so the plan is scattered again where it was lost."""
        tries = self.lost_plan_tries.get(shape, 0)
        if self.killed or not isinstance(exc, CancelledError) or tries >= LOST_PLAN_RETRIES:
            return False
        self.lost_plan_tries[shape] = tries + 1
        if self.plan_data.status != "finished":
            self.plan_data = self._scatter_plan()
        return True

    def _lane(self, worker: str) -> int:
        # A local cluster's workers are named by their GPU's index: it is their lane. Other names
        # (or an index already taken) get the lowest index no worker has.
        if worker not in self.lanes:
            taken = set(self.lanes.values())
            wanted = int(worker) if worker.isdigit() else -1
            self.lanes[worker] = (
                wanted if wanted >= 0 and wanted not in taken else min(set(range(len(taken) + 1)) - taken)
            )
        return self.lanes[worker]

    def _on_phase(self, event: tuple[float, dict]) -> None:
        message = event[1]
        self.results.put(
            (
                "phase",
                self._lane(message["name"]),
                message["shape"],
                f"{message['name']}: {message['phase']}",
            )
        )

    def _collect(self, arriving: Any) -> None:
        for future in arriving:
            _, shape = self.futures.pop(future.key)
            try:
                outcome = future.result()
            except Exception as exc:  # every try failed (workers died): the config, not the run
                if self._retry_after_lost_plan(exc, shape):
                    self._submit(arriving, shape)
                    continue
                outcome = Outcome("error", message=f"the cluster could not measure it: {exc}"[:2000])
            worker = str(outcome.info.get("cluster_worker", "?"))
            lane = self._lane(worker)
            self.task_seconds += outcome.info.get("task_seconds", 0.0)
            self.results.put(("phase", lane, shape, f"{worker}: done"))
            self.results.put(("result", lane, shape, outcome))
            if not self.stop_event.is_set():
                self._submit(arriving)

    def _submit(self, arriving: Any, shape: Shape | None = None) -> None:
        """A config to a GPU worker: ``shape`` (another try), else the next one queued."""
        if shape is None:
            try:
                shape = self.jobs.get_nowait()
            except queue.Empty:
                return
        future = self.client.submit(
            measure_task,
            self.plan_data,
            self.plan_key,
            shape,
            self.topic,
            workers=self.workers,
            resources={GPU_RESOURCE: 1},
            pure=False,
            key=f"bench-{shape}-{id(self)}-{self.lost_plan_tries.get(shape, 0)}",
        )
        self.futures[future.key] = (future, shape)
        arriving.add(future)

    def kill(self) -> None:
        self.killed = True
        self.client.cancel([future for future, _ in self.futures.values()])

    def summary(self) -> dict:
        """The cluster's share of the run: its GPU workers, and the seconds its tasks spent
        measuring (the run's wall time x workers minus this is what scheduling and transfer cost)."""
        return {"cluster_workers": self.slots, "cluster_task_seconds": round(self.task_seconds, 3)}
