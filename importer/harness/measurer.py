"""One GPU's measurements: the isolated worker process that runs a plan's jobs (a crash or a hang
costs only that process) and :class:`ConfigMeasurer`, which measures configs through it one at a
time, restarting it after a crash, a hang or a retirement. A local run gives each GPU a lane that
uses one (runner); a cluster run gives each Dask GPU worker one (cluster_lane).
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from cuda_l2_explorer.db.errors import NoGPUError
from cuda_l2_explorer.db.shapes import Shape
from cuda_l2_explorer.importer.harness.device import visible_device
from cuda_l2_explorer.importer.harness.messages import Result
from cuda_l2_explorer.importer.harness.plan import WORKER_MODULE, BenchPlan, job_for


class Worker:
    """One worker process on one GPU, with a reader thread for its answers."""

    def __init__(self, gpu: int, module: str = WORKER_MODULE) -> None:
        self.gpu = gpu
        env = dict(os.environ)
        env["CUDA_VISIBLE_DEVICES"] = visible_device(gpu)
        env["PYTHONUNBUFFERED"] = "1"
        self.log = tempfile.NamedTemporaryFile(prefix=f"l2x-worker{gpu}-", suffix=".log", delete=False)
        # CUDA_L2_EXPLORER_WORKER names another worker script (the CPU tests' stand-in GPU, or a
        # wrapper such as benchmarks/harness/v3/profile_worker.py): it gets the module as argv[1].
        override = os.environ.get("CUDA_L2_EXPLORER_WORKER")
        command = [sys.executable, override, module] if override else [sys.executable, "-m", module]
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


def start_worker(gpu: int, module: str = WORKER_MODULE, timeout: float = 180.0) -> tuple[Worker, dict]:
    """A worker on ``gpu`` that said hello, and its device info; raises NoGPUError otherwise."""
    worker = Worker(gpu, module)
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


class ResultSink(Protocol):
    """Where a lane reports a config's phases and outcome: ``put((kind, lane, shape, payload))``
    (the runner's per-run view of its one results queue)."""

    def put(self, item: tuple) -> None: ...


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


class ConfigMeasurer:
    """Measures configs of ``plan`` one at a time on one GPU through an isolated worker process,
    started on first use and again after a crash, a hang or a retirement. ``on_phase(shape,
    text)`` hears the worker's progress. The local lanes and a cluster's workers both use it."""

    def __init__(
        self,
        gpu: int,
        plan: BenchPlan,
        first: tuple[Worker, dict] | None = None,
        on_phase: Callable[[Shape, str], None] | None = None,
    ) -> None:
        self.gpu, self.plan = gpu, plan
        self.worker: Worker | None = first[0] if first else None
        self.info: dict | None = first[1] if first else None
        self.on_phase = on_phase or (lambda shape, text: None)

    def measure(self, shape: Shape) -> Outcome:
        entry = self.plan.kernels.get(shape)
        if entry is not None and entry.build_error:
            # Baselines still run; the kernel's row records the compiler's message.
            base = self._run(shape, with_kernel=False)
            return Outcome(
                "compile_error",
                base.rows + _failure_rows("compile_error", entry.build_error),
                base.info,
                entry.build_error,
            )
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
        return outcome

    def close(self, kill: bool = False) -> None:
        if self.worker is not None:
            self.worker.stop(kill=kill)
            self.worker = None

    def ensure_worker(self) -> Worker:
        if self.worker is None or self.worker.proc.poll() is not None:
            if self.worker is not None:
                self.worker.stop(kill=True)
            self.worker, self.info = start_worker(self.gpu, self.plan.worker)
        return self.worker

    def _run(self, shape: Shape, with_kernel: bool) -> Outcome:
        try:
            worker = self.ensure_worker()
        except NoGPUError as exc:
            return Outcome("error", message=str(exc))
        worker.send(job_for(self.plan, shape, with_kernel))
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
                self.on_phase(shape, message.get("phase", ""))
            elif op == "result":
                result = Result.from_message(message)
                if result.info.get("retire"):  # it kept device memory: the next job gets a fresh one
                    worker.stop()
                    self.worker = None
                return Outcome("done", result.rows, result.info, "", result.audit)
            elif op == "error":
                if message.get("status") == "crashed":
                    worker.stop(kill=True)
                    self.worker = None
                return Outcome(message.get("status", "error"), message=message.get("message", ""))
