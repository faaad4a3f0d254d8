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
from dataclasses import dataclass
from pathlib import Path

from cuda_l2_explorer.db import reads, writes
from cuda_l2_explorer.db.errors import NotFoundError
from cuda_l2_explorer.db.shapes import Shape
from cuda_l2_explorer.db.store import Store, new_id
from cuda_l2_explorer.importer.harness.audit import AUDIT_CODES
from cuda_l2_explorer.importer.harness.device import gpu_label, nvidia_smi
from cuda_l2_explorer.importer.harness.measurer import ConfigMeasurer, Outcome, Worker, start_worker
from cuda_l2_explorer.importer.harness.plan import BenchPlan
from cuda_l2_explorer.importer.harness.protocol import ProtocolSettings


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
        results: queue.Queue,
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


def run_plan(
    open_store: StoreOpener,
    plan: BenchPlan,
    command_line: str,
    resume: tuple[str, dict] | None = None,
    progress: ProgressCallback | None = None,
    recorder: Callable[[Store, str, Shape, Outcome, int], None] | None = None,
) -> tuple[str, dict]:
    """Run (or resume) ``plan``; returns (run_id, summary). Ctrl-C marks the run interrupted.

    ``recorder`` writes one finished config (default: :func:`record_result`; the tuner passes
    its search-log writer); it must write the config's run_configs row in the same transaction.
    """
    if resume is not None and resume[1].get("protocol"):
        # A run never mixes two protocols: resumed, it measures as it started, whatever the
        # options given now (samples, QPS, rotation cap, warm or cold L2).
        plan.settings = ProtocolSettings.from_record(resume[1]["protocol"])
        plan.l2 = resume[1].get("l2", plan.l2)
    record = recorder or functools.partial(record_result, l2=plan.l2)
    client, first, slots = None, None, 0
    cluster = contextlib.ExitStack()
    if plan.cluster or len(plan.gpus) > 1:  # several GPUs: a local cluster, one worker per GPU
        from cuda_l2_explorer.importer.harness.cluster_lane import cluster_gpu_info, open_cluster

        try:
            client = cluster.enter_context(open_cluster(plan))
            info, slots = cluster_gpu_info(client, plan)
        except BaseException:
            cluster.close()
            raise
    else:
        first = start_worker(plan.gpus[0], plan.worker)
        info = first[1]
    with open_store() as store:
        if resume is None:
            run_id = create_run(store, plan, info, command_line)
        else:
            run_id = resume[0]
            with store.transaction():
                writes.reopen_run(store, run_id)
        finished = reads.done_configs(store, run_id)
        done_earlier = sum(1 for s in plan.shapes if s in finished)
        pending = [
            s for s in plan.shapes
            if s not in finished and (plan.measure_only is None or s in plan.measure_only)
        ]  # fmt: skip
        tuned = any(b.startswith("cuBLASLt-auto-tuning") for b in plan.baselines)
        if plan.settings.mode == "server" and tuned:
            plan.lt_choices = reads.autotune_choices(
                store, gpu_label(info["gpu_name"]), plan.accumulator, info.get("cublas"), plan.l2
            )
        if plan.settings.mode == "server":
            kernels = plan.params()["kernels"]
            plan.audits = reads.offline_audits(
                store, gpu_label(info["gpu_name"]), plan.set_id, kernels, AUDIT_CODES
            )
    total = len(plan.shapes)
    done = done_earlier
    jobs: queue.Queue[Shape] = queue.Queue()
    for shape in pending:
        jobs.put(shape)
    results: queue.Queue = queue.Queue()
    stop = threading.Event()
    if client is not None:
        from cuda_l2_explorer.importer.harness.cluster_lane import ClusterLane

        lane: _GpuLane | ClusterLane = ClusterLane(client, plan, jobs, results, stop, slots)
    else:
        lane = _GpuLane(plan.gpus[0], plan, jobs, results, first, stop)
    lane.start()
    counts = {"done": 0, "crashed": 0, "timeout": 0, "compile_error": 0, "error": 0}
    started = time.monotonic()
    finished_here = 0
    current: dict[int, str] = {}
    status = "complete"
    try:
        while lane.is_alive() or not results.empty():
            if plan.time_budget_s is not None and time.monotonic() - started > plan.time_budget_s:
                stop.set()  # configs in flight finish, no other starts; the run stays resumable
            try:
                kind, gpu, shape, payload = results.get(timeout=0.5)
            except queue.Empty:
                continue
            if kind == "start":
                current[gpu] = str(shape)
            elif kind == "phase":
                current[gpu] = f"{shape} {payload}"
            elif kind == "result":
                with open_store() as store:
                    record(store, run_id, shape, payload, gpu)
                counts[payload.status] = counts.get(payload.status, 0) + 1
                done += 1
                finished_here += 1
            if progress is not None:
                rate = (time.monotonic() - started) / finished_here if finished_here else None
                eta = rate * (total - done) if rate is not None else None
                progress(
                    Progress(
                        done,
                        total,
                        " | ".join(current.values()),
                        eta,
                        sum(v for k, v in counts.items() if k != "done"),
                    )
                )
    except KeyboardInterrupt:
        status = "interrupted"
        stop.set()
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
            if status == "complete" and len(reads.done_configs(store, run_id)) < total:
                status = "interrupted"
            with store.transaction():
                writes.finish_run(store, run_id, status, clock_end)
    return run_id, {
        "configs": total,
        "measured_now": finished_here,
        "done_earlier": done_earlier,
        "left": total - done,
        **counts,
        "seconds": time.monotonic() - started,
        "status": status,
        "autotune_reused": sum(1 for s in pending if s in plan.lt_choices),
        "audit_reused": sum(1 for s in pending if s in plan.audits),
        "gpu": gpu_label(info["gpu_name"]),
        "gpu_name": info["gpu_name"],
        **lane.summary(),
    }


def command_line_of(argv: Sequence[str]) -> str:
    return shlex.join(["cuda-l2-explorer", *argv])
