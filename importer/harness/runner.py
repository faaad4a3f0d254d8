"""The run orchestrator: dispatches configs to GPU worker processes, commits per config.

The parent process owns the store (DuckDB allows one writer) and never touches the GPU itself:
each GPU gets a worker process (the plan's worker module, by default ``harness.worker``) fed
one config at a time, by a lane in this process for one GPU, by a Dask worker per GPU for
several (a local cluster) or for ``plan.cluster`` (an existing one: harness.cluster_lane). A
config whose worker crashes or hangs is recorded as ``crashed`` / ``timeout`` and retried once
without the kernel, so its baselines still land; the run continues in a fresh worker. Every
finished config is committed in one transaction together with its ``run_configs`` row, so
``--resume`` redoes exactly what is missing, without duplicates, after Ctrl-C, kill -9 or a
lost machine.
"""

from __future__ import annotations

import contextlib
import functools
import json
import queue
import shlex
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from cuda_l2_explorer.db import reads, writes
from cuda_l2_explorer.db.errors import NotFoundError, UsageError
from cuda_l2_explorer.db.shapes import Shape
from cuda_l2_explorer.db.store import Store, new_id
from cuda_l2_explorer.importer.harness.audit import AUDIT_CODES
from cuda_l2_explorer.importer.harness.device import GpuType, gpu_label, nvidia_smi
from cuda_l2_explorer.importer.harness.measurer import (
    ConfigMeasurer,
    Outcome,
    ResultSink,
    Worker,
    start_worker,
)
from cuda_l2_explorer.importer.harness.plan import BenchPlan
from cuda_l2_explorer.importer.harness.protocol import ProtocolSettings

if TYPE_CHECKING:  # Dask is imported only for a cluster
    from cuda_l2_explorer.importer.harness.cluster_lane import ClusterLane


@dataclass
class Progress:
    """Where a run stands: configs done of total, what each GPU is on, the estimate, failures."""

    done: int
    total: int
    current: str = ""
    eta_s: float | None = None
    failed: int = 0


ProgressCallback = Callable[[Progress], None]


# ------------------------------------------------------------------------------ workers


# ------------------------------------------------------------------------------ the store


def create_run(store: Store, plan: BenchPlan, info: dict, command_line: str) -> str:
    """A new run of ``plan`` measured on the GPU described by ``info`` (the worker's hello)."""
    run_id = new_id()
    label = gpu_label(info["gpu_name"])
    with store.transaction():
        writes.record_gpu(
            store, label, info["gpu_name"], info["sm_count"], info["l2_bytes"], info["memory_bytes"]
        )
        writes.start_run(
            store,
            run_id,
            kind=plan.kind,
            set_id=plan.set_id,
            gpu=label,
            mode=plan.settings.mode,
            command_line=command_line,
            device=info,
            cutlass=plan.cutlass,
            params=plan.params(),
        )
    return run_id


def record_result(
    store: Store, run_id: str, shape: Shape, outcome: Outcome, gpu: int, l2: str = "cold"
) -> None:
    """One config's rows, all in one transaction with its run_configs row; ``l2`` is the run's
    cache state ('cold' or 'warm'), which every measurement is labelled with."""
    key = (run_id, shape.m, shape.n, shape.k)
    measurement_rows, sample_rows = [], []
    for row in outcome.rows:
        measurement_rows.append(
            (
                *key,
                row["implementation"],
                row["metric"],
                bool(row.get("padded")),
                l2,
                row["unit"],
                row.get("n_samples"),
                row.get("calls_per_sample"),
                row.get("median"),
                row.get("p10"),
                row.get("p90"),
                row.get("mean"),
                row.get("p99"),
                row.get("min"),
                row.get("max"),
                row["status"],
                row.get("rel_error"),
                row.get("error_ratio"),
                row.get("message"),
            )
        )
        for idx, value in enumerate(row.get("samples") or []):
            sample_rows.append(
                (*key, row["implementation"], row["metric"], bool(row.get("padded")), idx, value)
            )
    # An audit entry is (code, detail) about the kernel, or (code, detail, implementation).
    findings = {(f[2] if len(f) > 2 else "kernel", f[0]): f[1] for f in outcome.audit}
    with store.transaction():
        writes.clear_config(store, *key)
        writes.insert_measurements(store, measurement_rows)
        writes.insert_samples(store, sample_rows)
        writes.insert_audit_findings(
            store, [(*key, impl, code, detail) for (impl, code), detail in findings.items()]
        )
        writes.record_config(
            store,
            *key,
            status=outcome.status,
            gpu_index=gpu,
            seconds=outcome.info.get("seconds"),
            message=outcome.message or None,
            details=outcome.info,
        )


def find_resumable(
    store: Store, run_id: str | None, set_id: str | None, mode: str, kind: str = "bench"
) -> tuple[str, dict]:
    """(run_id, params) of the run to resume: ``run_id``, else the latest unfinished one of this
    set and mode; raises NotFoundError when there is none."""
    found = reads.resumable_run(store, run_id, set_id, mode, kind)
    if found is None:
        if run_id:
            raise NotFoundError(f"no benchmark run {run_id!r} in this store")
        raise NotFoundError("no unfinished benchmark run of this set and mode to resume")
    return found[0], json.loads(found[1])


# ------------------------------------------------------------------------------ the loop


class _GpuLane(threading.Thread):
    """Feeds configs to one local GPU's worker; reports outcomes on ``results``."""

    def __init__(
        self,
        gpu: int,
        plan: BenchPlan,
        jobs: queue.Queue,
        results: ResultSink,
        first: tuple[Worker, dict] | None,
        stop: threading.Event,
    ) -> None:
        super().__init__(daemon=True)
        self.gpu, self.jobs, self.results, self.stop_event = gpu, jobs, results, stop
        self.measurer = ConfigMeasurer(
            gpu, plan, first, lambda shape, text: results.put(("phase", gpu, shape, text))
        )

    def run(self) -> None:
        while not self.stop_event.is_set():
            try:
                shape = self.jobs.get_nowait()
            except queue.Empty:
                break
            self.results.put(("start", self.gpu, shape, None))
            self.results.put(("result", self.gpu, shape, self.measurer.measure(shape)))
        self.measurer.close()

    def kill(self) -> None:
        self.measurer.close(kill=True)

    def summary(self) -> dict:
        return {}


StoreOpener = Callable[[], Store]


def store_opener(path: Path | None) -> StoreOpener:
    """Short writer sessions: the file is held for one commit at a time, so the app and CLI
    queries (readers) and even a second benchmark get their turn between commits."""
    return lambda: Store.open(path, with_bundled=False, views=False)


# A run to continue: (run_id, its params record); a call may continue several, one per GPU type
# (the later batches of a bench over a mixed cluster).
Resume = tuple[str, dict]


@dataclass
class _Run:
    """One run of a call and what it measures: all of the plan's configs on one GPU type."""

    plan: BenchPlan
    type: GpuType  # its device info (the run's provenance) and, on a cluster, its workers
    run_id: str = ""
    total: int = 0
    done: int = 0
    done_earlier: int = 0
    pending: list[Shape] = field(default_factory=list)
    finished_here: int = 0
    status: str = "complete"
    counts: dict[str, int] = field(
        default_factory=lambda: {"done": 0, "crashed": 0, "timeout": 0, "compile_error": 0, "error": 0}
    )

    @property
    def gpu(self) -> str:
        return self.type.label


class _Tagged:
    """A lane's view of the shared results queue: its messages carry its run's index, so one loop
    records the outcomes of every run of the call."""

    def __init__(self, results: queue.Queue, index: int) -> None:
        self.results, self.index = results, index

    def put(self, item: tuple) -> None:
        self.results.put((self.index, *item))


def run_plan(
    open_store: StoreOpener,
    plan: BenchPlan,
    command_line: str | None,
    resume: Resume | list[Resume] | None = None,
    progress: ProgressCallback | None = None,
    recorder: Callable[[Store, str, Shape, Outcome, int], None] | None = None,
    mixed_gpus: bool = True,
) -> tuple[str, dict]:
    """Run (or resume) ``plan``; returns (run_id, summary). Ctrl-C marks the run interrupted.

    On a cluster whose GPU workers hold several GPU types, one run per type, each measuring every
    config on its own type's workers, all at once; the first run (in GPU label order) is returned
    and ``summary["runs"]`` lists every run's summary with its ``run_id``. A resumed run continues
    on its own type's workers only. ``mixed_gpus=False`` refuses such a cluster instead (a caller
    that keeps one run's results).

    ``recorder`` writes one finished config (default: :func:`record_result`; the tuner passes
    its search-log writer); it must write the config's run_configs row in the same transaction.
    ``command_line`` None: the call continues the runs it opened itself (a later batch of one
    bench), whose stored command lines already name it.
    """
    resumes = [resume] if isinstance(resume, tuple) else list(resume or [])
    if command_line is None and not resumes:
        raise ValueError("a new run needs the command line that starts it")
    if resumes and resumes[0][1].get("protocol"):
        # A run never mixes two protocols: resumed, it measures as it started, whatever the
        # options given now (samples, QPS, rotation cap, warm or cold L2).
        plan.settings = ProtocolSettings.from_record(resumes[0][1]["protocol"])
        plan.l2 = resumes[0][1].get("l2", plan.l2)
    record = recorder or functools.partial(record_result, l2=plan.l2)
    client, first = None, None
    cluster = contextlib.ExitStack()
    try:
        if plan.cluster or len(plan.gpus) > 1:  # several GPUs: a local cluster, one worker per GPU
            from cuda_l2_explorer.importer.harness.cluster_lane import cluster_gpu_types, open_cluster

            client = cluster.enter_context(open_cluster(plan))
            types = cluster_gpu_types(client, plan)
            if len(types) > 1 and not mixed_gpus:
                listing = ", ".join(f"{len(t.workers)} {t.label}" for t in types)
                raise UsageError(
                    f"the GPU workers hold more than one GPU type ({listing}): this measures one type a run"
                )
        else:
            first = start_worker(plan.gpus[0], plan.worker)
            types = [GpuType(gpu_label(first[1]["gpu_name"]), first[1])]
        with open_store() as store:
            runs = _open_runs(store, plan, command_line, resumes, types, client is not None)
    except BaseException:
        cluster.close()
        if first is not None:
            first[0].stop(kill=True)
        raise
    results: queue.Queue = queue.Queue()
    stop = threading.Event()
    lanes: list[_GpuLane | ClusterLane] = []
    for index, run in enumerate(runs):
        jobs: queue.Queue[Shape] = queue.Queue()
        for shape in run.pending:
            jobs.put(shape)
        tagged = _Tagged(results, index)
        if client is not None:
            from cuda_l2_explorer.importer.harness.cluster_lane import ClusterLane

            # One type: its tasks go to any GPU worker, as they always did; several: each run's
            # tasks are pinned to its own type's workers.
            pinned = run.type.workers if len(types) > 1 else None
            lanes.append(ClusterLane(client, run.plan, jobs, tagged, stop, len(run.type.workers), pinned))
        else:
            lanes.append(_GpuLane(plan.gpus[0], run.plan, jobs, tagged, first, stop))
    for lane in lanes:
        lane.start()
    total = sum(run.total for run in runs)
    started = time.monotonic()
    current: dict[tuple[int, int], str] = {}
    try:
        while any(lane.is_alive() for lane in lanes) or not results.empty():
            if plan.time_budget_s is not None and time.monotonic() - started > plan.time_budget_s:
                stop.set()  # configs in flight finish, no other starts; the runs stay resumable
            try:
                index, kind, gpu, shape, payload = results.get(timeout=0.5)
            except queue.Empty:
                continue
            run = runs[index]
            # Runs side by side: each worker's line says which GPU type it measures.
            where = f"{run.gpu} " if len(runs) > 1 else ""
            if kind == "start":
                current[index, gpu] = f"{where}{shape}"
            elif kind == "phase":
                current[index, gpu] = f"{where}{shape} {payload}"
            elif kind == "result":
                with open_store() as store:
                    record(store, run.run_id, shape, payload, gpu)
                run.counts[payload.status] = run.counts.get(payload.status, 0) + 1
                run.done += 1
                run.finished_here += 1
            if progress is not None:
                done = sum(r.done for r in runs)
                finished_here = sum(r.finished_here for r in runs)
                rate = (time.monotonic() - started) / finished_here if finished_here else None
                eta = rate * (total - done) if rate is not None else None
                failed = sum(v for r in runs for k, v in r.counts.items() if k != "done")
                progress(Progress(done, total, " | ".join(current.values()), eta, failed))
    except KeyboardInterrupt:
        for run in runs:
            run.status = "interrupted"
        stop.set()
        for lane in lanes:
            lane.kill()
        raise
    finally:
        cluster.close()
        clock_end = None
        try:
            clock_end = nvidia_smi().get("clock_sm_mhz")
        except Exception:
            pass
        with open_store() as store:
            for run in runs:
                if run.status == "complete" and len(reads.done_configs(store, run.run_id)) < run.total:
                    run.status = "interrupted"
                with store.transaction():
                    writes.finish_run(store, run.run_id, run.status, clock_end)
    seconds = time.monotonic() - started
    summaries = [_summary(run, lane, seconds) for run, lane in zip(runs, lanes, strict=True)]
    if len(runs) > 1:
        summaries[0]["runs"] = [{"run_id": run.run_id, **s} for run, s in zip(runs, summaries, strict=True)]
    return runs[0].run_id, summaries[0]


def _open_runs(
    store: Store,
    plan: BenchPlan,
    command_line: str | None,
    resumes: list[Resume],
    types: list[GpuType],
    on_cluster: bool,
) -> list[_Run]:
    """The call's runs, created (one per GPU type) or reopened (each on its own GPU type's
    workers), with the configs each has left."""
    if not on_cluster and len(resumes) > 1:  # one local GPU worker cannot feed two runs' lanes
        raise UsageError("one GPU continues one run: several runs resume together only on a cluster")
    by_label = {t.label: t for t in types}
    chosen: list[tuple[str | None, GpuType]] = [] if resumes else [(None, t) for t in types]
    for run_id, _ in resumes:
        label = reads.run_gpu(store, run_id)
        if not on_cluster:  # this machine's GPU, as it always was
            chosen.append((run_id, types[0]))
        elif label in by_label:
            chosen.append((run_id, by_label[label]))
        else:  # checked for every run before any is reopened
            have = ", ".join(f"{len(t.workers)} {t.label}" for t in types)
            raise UsageError(
                f"run {run_id} measures on {label} GPUs and the cluster has no {label} worker "
                f"(its GPU workers: {have}): resume it on a cluster with one"
            )
    runs = []
    for index, (run_id, gpu_type) in enumerate(chosen):
        # Each run its own plan: the reused auto-tuning choices and audits are per GPU type.
        run = _Run(plan if index == 0 else replace(plan), gpu_type)
        info = gpu_type.info
        if run_id is None:
            assert command_line is not None  # run_plan refuses a new run without one
            run.run_id = create_run(store, plan, info, command_line)
        else:
            run.run_id = run_id
            with store.transaction():
                writes.reopen_run(store, run_id, command_line)
        finished = reads.done_configs(store, run.run_id)
        run.total = len(plan.shapes)
        run.done = run.done_earlier = sum(1 for s in plan.shapes if s in finished)
        run.pending = [
            s for s in plan.shapes
            if s not in finished and (plan.measure_only is None or s in plan.measure_only)
        ]  # fmt: skip
        tuned = any(b.startswith("cuBLASLt-auto-tuning") for b in plan.baselines)
        if plan.settings.mode == "server" and tuned:
            run.plan.lt_choices = reads.autotune_choices(
                store, run.gpu, plan.accumulator, info.get("cublas"), plan.l2
            )
        if plan.settings.mode == "server":
            kernels = plan.params()["kernels"]
            run.plan.audits = reads.offline_audits(store, run.gpu, plan.set_id, kernels, AUDIT_CODES)
        runs.append(run)
    return runs


def _summary(run: _Run, lane: _GpuLane | ClusterLane, seconds: float) -> dict:
    return {
        "configs": run.total,
        "measured_now": run.finished_here,
        "done_earlier": run.done_earlier,
        "left": run.total - run.done,
        **run.counts,
        "seconds": seconds,
        "status": run.status,
        "autotune_reused": sum(1 for s in run.pending if s in run.plan.lt_choices),
        "audit_reused": sum(1 for s in run.pending if s in run.plan.audits),
        "gpu": run.gpu,
        "gpu_name": run.type.info["gpu_name"],
        **lane.summary(),
    }


def command_line_of(argv: Sequence[str]) -> str:
    return shlex.join(["cuda-l2-explorer", *argv])
