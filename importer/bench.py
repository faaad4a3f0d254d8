"""The benchmark orchestrator: builds, dispatches configs to GPU workers, commits per config.

The parent process owns the store (DuckDB allows one writer) and never touches the GPU itself:
each GPU gets a worker process (``importer.worker``) fed one config at a time. A config whose
worker crashes or hangs is recorded as ``crashed`` / ``timeout`` and retried once without the
kernel, so its baselines still land; the run continues in a fresh worker. Every finished config
is committed in one transaction together with its ``run_configs`` row, so ``--resume`` redoes
exactly what is missing, without duplicates, after Ctrl-C, kill -9 or a lost machine.
"""

from __future__ import annotations

import functools
import json
import os
import queue
import shlex
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from cuda_l2_explorer.db.errors import NoGPUError, NotFoundError, UsageError
from cuda_l2_explorer.db.shapes import Shape
from cuda_l2_explorer.db.store import Store, new_id, tool_version
from cuda_l2_explorer.db.views import BASELINES as ALL_BASELINES
from cuda_l2_explorer.importer.protocol import ProtocolSettings

# 2: the launcher audit runs after the timing, and CUPTI is torn down after it.
HARNESS_VERSION = "2"
_PACKAGE_ROOT = Path(__file__).resolve().parents[1]


@dataclass
class KernelEntry:
    """What a worker needs to run one config's kernel (None module = baselines only)."""

    module: str | None = None
    pad_shape: tuple[int, int, int] | None = None
    build_error: str | None = None
    # A kernel of our library (tuner/) instead of a built module: {"path", "kernel", "variant"}.
    library: dict | None = None

    @property
    def runnable(self) -> bool:
        return self.module is not None or self.library is not None


@dataclass
class BenchPlan:
    shapes: list[Shape]
    settings: ProtocolSettings
    baselines: tuple[str, ...] = ALL_BASELINES
    set_id: str | None = None
    accumulator: str = "F32F16F16F32"
    kernels: dict[Shape, KernelEntry] = field(default_factory=dict)
    gpus: list[int] = field(default_factory=lambda: [0])
    timeout_s: float = 300.0
    l2: str = "cold"
    # 'bench' measures kernels and baselines; 'tune' runs the per-shape kernel search, whose
    # job fields (library path, limits) are in `search`.
    kind: str = "bench"
    search: dict = field(default_factory=dict)
    cutlass: str | None = None  # the CUTLASS version the kernels were built with (provenance)


@dataclass
class Progress:
    done: int
    total: int
    current: str = ""
    phase: str = ""
    eta_s: float | None = None
    failed: int = 0


ProgressCallback = Callable[[Progress], None]


def visible_gpus() -> int:
    """Number of CUDA GPUs torch sees; raises NoGPUError with a one-line reason."""
    try:
        import torch
    except ImportError as exc:
        raise NoGPUError("bench needs torch with CUDA: pip install 'cuda-l2-explorer[gpu]'") from exc
    if not torch.cuda.is_available() or torch.cuda.device_count() == 0:
        raise NoGPUError("no CUDA GPU is visible (torch.cuda.is_available() is False)")
    return torch.cuda.device_count()


def parse_gpus(text: str, available: int) -> list[int]:
    if text == "all":
        return list(range(available))
    try:
        gpus = sorted({int(x) for x in text.split(",") if x.strip()})
    except ValueError:
        raise UsageError(f"--gpus takes 'all' or indexes like 0,1 (got {text!r})") from None
    if not gpus or any(g < 0 or g >= available for g in gpus):
        raise UsageError(f"--gpus {text}: this machine has GPUs 0..{available - 1}")
    return gpus


def gpu_label(name: str) -> str:
    """'NVIDIA H100 80GB HBM3' -> 'h100'; unknown models keep a slug of their name."""
    lowered = name.lower()
    for label in ("h200", "h100", "h800", "a100", "a800", "l40s", "b200", "gb200", "4090", "3090"):
        if label in lowered:
            return label
    return "".join(ch if ch.isalnum() else "-" for ch in lowered).strip("-") or "gpu"


# ------------------------------------------------------------------------------ workers


class Worker:
    """One ``importer.worker`` process on one GPU, with a reader thread for its answers."""

    def __init__(self, gpu: int) -> None:
        self.gpu = gpu
        env = dict(os.environ)
        env["CUDA_VISIBLE_DEVICES"] = (
            str(gpu)
            if "CUDA_VISIBLE_DEVICES" not in os.environ
            else (os.environ["CUDA_VISIBLE_DEVICES"].split(",")[gpu])
        )
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(_PACKAGE_ROOT), env.get("PYTHONPATH")]))
        env["PYTHONUNBUFFERED"] = "1"
        self.log = tempfile.NamedTemporaryFile(prefix=f"l2x-worker{gpu}-", suffix=".log", delete=False)
        # CUDA_L2_EXPLORER_WORKER names another worker script (the CPU tests' stand-in GPU).
        override = os.environ.get("CUDA_L2_EXPLORER_WORKER")
        command = (
            [sys.executable, override]
            if override
            else [sys.executable, "-m", "cuda_l2_explorer.importer.worker"]
        )
        self.proc = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            text=True,
            env=env,
            start_new_session=True,  # Ctrl-C reaches the parent, which stops workers itself
        )
        self.messages: queue.Queue[dict | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            try:
                self.messages.put(json.loads(line))
            except json.JSONDecodeError:
                continue
        self.messages.put(None)  # EOF: the worker exited

    def send(self, job: dict) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(job) + "\n")
        self.proc.stdin.flush()

    def receive(self, timeout: float) -> dict | None:
        """Next message; None when the worker died; raises queue.Empty on timeout."""
        return self.messages.get(timeout=timeout)

    def log_tail(self, limit: int = 1500) -> str:
        try:
            text = Path(self.log.name).read_text(errors="replace")
        except OSError:
            return ""
        lines = [ln for ln in text.strip().splitlines() if ln.strip()]
        return "\n".join(lines[-12:])[-limit:]

    def stop(self, kill: bool = False) -> None:
        if self.proc.poll() is None:
            if kill:
                self.proc.kill()
            else:
                try:
                    self.send({"op": "exit"})
                    self.proc.wait(timeout=10)
                except (OSError, subprocess.TimeoutExpired, ValueError):
                    self.proc.kill()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        try:
            os.unlink(self.log.name)
        except OSError:
            pass


def start_worker(gpu: int, timeout: float = 180.0) -> tuple[Worker, dict]:
    worker = Worker(gpu)
    try:
        hello = worker.receive(timeout)
    except queue.Empty:
        worker.stop(kill=True)
        raise NoGPUError(f"the worker on GPU {gpu} did not start within {timeout:.0f} s") from None
    if hello is None or hello.get("op") != "hello":
        reason = (hello or {}).get("error") or worker.log_tail() or "it exited"
        worker.stop(kill=True)
        raise NoGPUError(f"the worker on GPU {gpu} could not start: {reason.splitlines()[-1]}")
    return worker, hello["info"]


# ------------------------------------------------------------------------------ the store


def create_run(store: Store, plan: BenchPlan, info: dict, command_line: str) -> str:
    run_id = new_id()
    label = gpu_label(info["gpu_name"])
    params = {
        "harness_version": HARNESS_VERSION,
        "protocol": asdict(plan.settings),
        "baselines": list(plan.baselines),
        "shapes": [str(s) for s in plan.shapes],
        "l2": plan.l2,
        "gpus": plan.gpus,
        "timeout_s": plan.timeout_s,
        "workspace_bytes": 32 << 20,
        "accumulator": plan.accumulator,
        "kernels": {str(s): asdict(e) for s, e in plan.kernels.items()},
        "search": plan.search,
    }
    with store.transaction():
        store.con.execute(
            "INSERT INTO main.gpus (gpu, name, sm_count, l2_bytes, memory_bytes) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT (gpu) DO UPDATE SET name = excluded.name, sm_count = excluded.sm_count, "
            "l2_bytes = excluded.l2_bytes, memory_bytes = excluded.memory_bytes",
            [label, info["gpu_name"], info["sm_count"], info["l2_bytes"], info["memory_bytes"]],
        )
        store.con.execute(
            "INSERT INTO main.runs (run_id, kind, set_id, gpu, mode, status, tool_version, command_line, "
            "gpu_name, sm_count, l2_bytes, clock_start_mhz, driver, cuda, cublas, torch, cutlass, params) "
            "VALUES (?, ?, ?, ?, ?, 'running', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                run_id,
                plan.kind,
                plan.set_id,
                label,
                plan.settings.mode,
                tool_version(),
                command_line,
                info["gpu_name"],
                info["sm_count"],
                info["l2_bytes"],
                info.get("clock_sm_mhz"),
                info.get("driver"),
                info.get("cuda"),
                info.get("cublas"),
                info.get("torch"),
                plan.cutlass,
                json.dumps(params),
            ],
        )
    return run_id


def done_shapes(store: Store, run_id: str) -> set[Shape]:
    rows = store.con.execute("SELECT m, n, k FROM main.run_configs WHERE run_id = ?", [run_id]).fetchall()
    return {Shape(*r) for r in rows}


def record_result(
    store: Store, run_id: str, shape: Shape, outcome: Outcome, gpu: int, l2: str = "cold"
) -> None:
    """One config's rows, all in one transaction with its run_configs row; ``l2`` is the run's
    cache state ('cold' or 'warm'), which every measurement is labelled with."""
    key = [run_id, shape.m, shape.n, shape.k]
    with store.transaction():
        for table in ("measurements", "samples", "audit_findings", "run_configs"):
            store.con.execute(f"DELETE FROM main.{table} WHERE run_id = ? AND m = ? AND n = ? AND k = ?", key)
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
        store.insert_rows(
            "measurements",
            (
                "run_id",
                "m",
                "n",
                "k",
                "implementation",
                "metric",
                "padded",
                "l2",
                "unit",
                "n_samples",
                "calls_per_sample",
                "median",
                "p10",
                "p90",
                "mean",
                "p99",
                "min",
                "max",
                "status",
                "rel_error",
                "error_ratio",
                "message",
            ),
            measurement_rows,
        )
        store.insert_rows(
            "samples",
            ("run_id", "m", "n", "k", "implementation", "metric", "padded", "idx", "value"),
            sample_rows,
        )
        findings = {code: detail for code, detail in outcome.audit}
        store.insert_rows(
            "audit_findings",
            ("run_id", "m", "n", "k", "implementation", "finding", "detail"),
            [(*key, "kernel", code, detail) for code, detail in findings.items()],
        )
        store.con.execute(
            "INSERT INTO main.run_configs (run_id, m, n, k, status, gpu_index, seconds, message, details) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                *key,
                outcome.status,
                gpu,
                outcome.info.get("seconds"),
                outcome.message or None,
                json.dumps(outcome.info),
            ],
        )


def finish_run(store: Store, run_id: str, status: str, clock_end: int | None) -> None:
    with store.transaction():
        store.con.execute(
            "UPDATE main.runs SET status = ?, finished_at = current_timestamp, clock_end_mhz = ? "
            "WHERE run_id = ?",
            [status, clock_end, run_id],
        )


def find_resumable(
    store: Store, run_id: str | None, set_id: str | None, mode: str, kind: str = "bench"
) -> tuple[str, dict]:
    if run_id:
        row = store.con.execute(
            "SELECT run_id, params, status FROM main.runs WHERE run_id = ? AND kind = ?", [run_id, kind]
        ).fetchone()
        if row is None:
            raise NotFoundError(f"no benchmark run {run_id!r} in this store")
    else:
        row = store.con.execute(
            "SELECT run_id, params, status FROM main.runs WHERE kind = ? AND status <> 'complete' "
            "AND set_id IS NOT DISTINCT FROM ? AND mode = ? ORDER BY started_at DESC LIMIT 1",
            [kind, set_id, mode],
        ).fetchone()
        if row is None:
            raise NotFoundError("no unfinished benchmark run of this set and mode to resume")
    return row[0], json.loads(row[1])


# ------------------------------------------------------------------------------ the loop


def _job(plan: BenchPlan, shape: Shape, with_kernel: bool) -> dict:
    if plan.kind == "tune":
        return {"op": "search", "m": shape.m, "n": shape.n, "k": shape.k, **plan.search}
    entry = plan.kernels.get(shape) if with_kernel else None
    return {
        "op": "config",
        "m": shape.m,
        "n": shape.n,
        "k": shape.k,
        "accumulator": plan.accumulator,
        "baselines": list(plan.baselines),
        "protocol": asdict(plan.settings),
        "l2": plan.l2,
        "kernel_module": entry.module if entry else None,
        "kernel_library": entry.library if entry else None,
        "pad_shape": list(entry.pad_shape) if entry and entry.pad_shape and entry.module else None,
    }


@dataclass
class Outcome:
    """How one config ended: 'done', 'crashed', 'timeout', 'compile_error' or 'error'."""

    status: str
    rows: list[dict] = field(default_factory=list)
    info: dict = field(default_factory=dict)
    message: str = ""
    audit: list = field(default_factory=list)


def _failure_rows(status: str, message: str) -> list[dict]:
    row = {"implementation": "kernel", "metric": "device_time", "unit": "s", "status": status}
    return [{**row, "message": message[:2000]}]


class _GpuLane(threading.Thread):
    """Feeds configs to one GPU's worker; reports outcomes on ``results``."""

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
        self.gpu, self.plan, self.jobs, self.results, self.stop_event = gpu, plan, jobs, results, stop
        self.worker: Worker | None = first[0] if first else None
        self.info: dict | None = first[1] if first else None

    def run(self) -> None:
        while not self.stop_event.is_set():
            try:
                shape = self.jobs.get_nowait()
            except queue.Empty:
                break
            self.results.put(("start", self.gpu, shape, None))
            entry = self.plan.kernels.get(shape)
            if entry is not None and entry.build_error:
                # Baselines still run; the kernel's row records the compiler's message.
                base = self._run(shape, with_kernel=False)
                outcome = Outcome(
                    "compile_error",
                    base.rows + _failure_rows("compile_error", entry.build_error),
                    base.info,
                    entry.build_error,
                )
            else:
                outcome = self._run(shape, with_kernel=entry is not None and entry.runnable)
                if outcome.status in ("crashed", "timeout") and entry is not None and entry.runnable:
                    # Keep the baselines of this config: run it again without the kernel.
                    retry = self._run(shape, with_kernel=False)
                    outcome = Outcome(
                        outcome.status,
                        retry.rows + _failure_rows(outcome.status, outcome.message),
                        retry.info,
                        outcome.message,
                    )
            self.results.put(("result", self.gpu, shape, outcome))
        if self.worker is not None:
            self.worker.stop()
            self.worker = None

    def _ensure_worker(self) -> Worker:
        if self.worker is None or self.worker.proc.poll() is not None:
            if self.worker is not None:
                self.worker.stop(kill=True)
            self.worker, self.info = start_worker(self.gpu)
        return self.worker

    def _run(self, shape: Shape, with_kernel: bool) -> Outcome:
        try:
            worker = self._ensure_worker()
        except NoGPUError as exc:
            return Outcome("error", message=str(exc))
        worker.send(_job(self.plan, shape, with_kernel))
        deadline = time.monotonic() + self.plan.timeout_s
        while True:
            remaining = deadline - time.monotonic()
            try:
                message = worker.receive(max(remaining, 0.01))
            except queue.Empty:
                worker.stop(kill=True)
                self.worker = None
                return Outcome(
                    "timeout", message=f"no result within {self.plan.timeout_s:.0f} s (hang?); worker killed"
                )
            if message is None:
                tail = worker.log_tail()
                worker.stop(kill=True)
                self.worker = None
                return Outcome("crashed", message=f"worker died: {tail or 'no message'}")
            op = message.get("op")
            if op == "progress":
                self.results.put(("phase", self.gpu, shape, message.get("phase", "")))
            elif op == "result":
                return Outcome(
                    "done", message.get("rows", []), message.get("info", {}), "", message.get("audit", [])
                )
            elif op == "error":
                if message.get("status") == "crashed":
                    worker.stop(kill=True)
                    self.worker = None
                return Outcome(message.get("status", "error"), message=message.get("message", ""))


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
    record = recorder or functools.partial(record_result, l2=plan.l2)
    first = start_worker(plan.gpus[0])
    info = first[1]
    with open_store() as store:
        if resume is None:
            run_id = create_run(store, plan, info, command_line)
        else:
            run_id = resume[0]
            with store.transaction():
                store.con.execute("UPDATE main.runs SET status = 'running' WHERE run_id = ?", [run_id])
        pending = [s for s in plan.shapes if s not in done_shapes(store, run_id)]
    total = len(plan.shapes)
    done = total - len(pending)
    jobs: queue.Queue[Shape] = queue.Queue()
    for shape in pending:
        jobs.put(shape)
    results: queue.Queue = queue.Queue()
    stop = threading.Event()
    lanes = [_GpuLane(g, plan, jobs, results, first if g == plan.gpus[0] else None, stop) for g in plan.gpus]
    for lane in lanes:
        lane.start()
    counts = {"done": 0, "crashed": 0, "timeout": 0, "compile_error": 0, "error": 0}
    started = time.monotonic()
    finished_here = 0
    current: dict[int, str] = {}
    status = "complete"
    try:
        while any(lane.is_alive() for lane in lanes) or not results.empty():
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
                        "",
                        eta,
                        sum(v for k, v in counts.items() if k != "done"),
                    )
                )
    except KeyboardInterrupt:
        status = "interrupted"
        stop.set()
        for lane in lanes:
            if lane.worker is not None:
                lane.worker.stop(kill=True)
        raise
    finally:
        clock_end = None
        try:
            from cuda_l2_explorer.importer.worker import nvidia_smi

            clock_end = nvidia_smi().get("clock_sm_mhz")
        except Exception:
            pass
        with open_store() as store:
            if status == "complete" and len(done_shapes(store, run_id)) < total:
                status = "interrupted"
            finish_run(store, run_id, status, clock_end)
    return run_id, {
        "configs": total,
        "measured_now": finished_here,
        **counts,
        "seconds": time.monotonic() - started,
        "gpu": gpu_label(info["gpu_name"]),
        "gpu_name": info["gpu_name"],
    }


def command_line_of(argv: Sequence[str]) -> str:
    return shlex.join(["cuda-l2-explorer", *argv])
