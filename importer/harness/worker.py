"""The GPU worker: measures configs for the runner, one at a time, in its own process.

Run as ``python -m cuda_l2_explorer.importer.harness.worker``. It reads one JSON job per line on
stdin and answers on a private copy of stdout (fd 1 is pointed at stderr so a kernel's printf
cannot corrupt the protocol; ``messages`` has the protocol). Imports stay lean: stdlib, torch and
our ctypes baselines. If a kernel breaks the CUDA context (illegal address), the worker reports
``crashed`` and exits; the parent starts a fresh one for the next config.

This module serves ``config`` jobs (a kernel beside the baselines). Its pieces (input sets,
implementations, correctness, timing backend) and :func:`serve` are for other workers too: the
tuner's worker serves its search jobs and kernels of its compiled library with them.
"""

from __future__ import annotations

import gc
import json
import math
import os
import sys
import time
import traceback
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from cuda_l2_explorer.db.shapes import Shape, floor_seconds, l2_span
from cuda_l2_explorer.importer.harness import messages
from cuda_l2_explorer.importer.harness.audit import audit, capture_blockers
from cuda_l2_explorer.importer.harness.device import (
    StreamGate,
    device_info,
    gpu_label,
    sm_clock_mhz,
    spin_cycles_per_second,
    stream_gate,
)
from cuda_l2_explorer.importer.harness.graph import (
    CuptiTimes,
    GraphBackend,
    cross_check,
    escaped_capture,
    first_line,
    kernel_time_per_call,
    take_cupti_setup,
)
from cuda_l2_explorer.importer.harness.messages import Result
from cuda_l2_explorer.importer.harness.protocol import (
    FINAL_SAMPLES,
    SCREEN_SAMPLES,
    ProtocolSettings,
    classify_correctness,
    measure,
    rotation_sets,
    summarize,
    tuning_finalists,
)

MAX_LT_CANDIDATES = 100
# A worker's first config starts on a GPU that idled while the process started (clocks low): its
# first implementation warms it this long, not just ``warmup_s``, so that it starts where the
# configs after it do. (The first config's 9-13x isolated calls in the H100 server grid of
# 2026-11-24 were not the clocks but the isolated call's hold, sized at the idle clock: fixed in
# TorchBackend.isolated_call; with this warm-up alone 64^3 still measured 34.7 us.)
WORKER_WARMUP_S = 1.0


class KernelCrashed(RuntimeError):
    """The CUDA context is unusable; the worker must exit after reporting."""


class Inputs:
    """Rotating input sets (cold L2) plus, for padded kernels, zero-padded copies."""

    def __init__(
        self, torch, m: int, n: int, k: int, count: int, pad_shape: tuple[int, int, int] | None, seed: int
    ) -> None:
        gen = torch.Generator(device="cuda").manual_seed(seed)
        half = torch.float16
        self.sets = []
        for _ in range(count):
            a = torch.randn(m, k, device="cuda", dtype=half, generator=gen)
            b = torch.randn(k, n, device="cuda", dtype=half, generator=gen)
            b_col = b.t().contiguous().t()  # SPEC §4: the same KxN matrix stored column-major
            c = torch.empty(m, n, device="cuda", dtype=half)
            padded = None
            if pad_shape is not None:
                pm, pn, pk = pad_shape
                ap = torch.zeros(pm, pk, device="cuda", dtype=half)
                bp = torch.zeros(pk, pn, device="cuda", dtype=half)
                ap[:m, :k].copy_(a)
                bp[:k, :n].copy_(b)
                padded = (ap, bp, bp.t().contiguous().t(), torch.empty(pm, pn, device="cuda", dtype=half))
            self.sets.append((a, b, b_col, c, padded))
        self.count = count
        self._rotation = Rotation(count)

    def next(self):
        return self.sets[self._rotation.next()]

    def restart(self) -> None:
        """After a graph replay (every set in order, the last one last): set 0 was read longest ago."""
        self._rotation.restart()


class Rotation:
    """The input set of each eager call, one cursor for every implementation: a set comes back only
    after all the others were read, so with sets spanning >= 2x the L2 every call finds its inputs
    cold. (With a cursor per implementation, the baselines, warmed up alike, read the same set one
    after another within a round and found it in the L2, while the kernel, warmed up longer, read
    others cold: the H100 server grid of 2026-11-25 timed the baselines warm and ours cold.)"""

    def __init__(self, count: int) -> None:
        self.count = count
        self._cursor = 0

    def next(self) -> int:
        index = self._cursor
        self._cursor = (index + 1) % self.count
        return index

    def restart(self) -> None:
        self._cursor = 0


def bytes_per_set(m: int, n: int, k: int, pad_shape: tuple[int, int, int] | None) -> int:
    size = Shape(m, n, k).input_set_bytes
    if pad_shape is not None:
        size += Shape(*pad_shape).input_set_bytes
    return size


class Implementations:
    """Name -> callable(set) for the kernel and the baselines on the current stream."""

    def __init__(self, torch, job: dict, baselines, inputs: Inputs, kernel_fn) -> None:
        self.torch = torch
        m, n, k = job["m"], job["n"], job["k"]
        self.m, self.n, self.k = m, n, k
        self.inputs = inputs
        self.baselines = baselines
        self.stream = torch.cuda.current_stream().cuda_stream
        self.fns: dict[str, Callable[[tuple], None]] = {}
        # An imported set's module may synchronise on every call (see may_wait).
        self._module_kernel = bool(job.get("kernel_module"))
        self.notes: dict[str, str] = {}
        self.lt_plans: dict[str, Any] = {}
        self._reference: Reference | None = None
        wanted = job["baselines"]
        lib = baselines
        if "torch.matmul" in wanted:
            if job["accumulator"] == "F16F16F16F16":
                self.notes["torch.matmul"] = "skipped: torch.matmul accumulates in fp32, this set in fp16"
            else:
                self.fns["torch.matmul"] = lambda s: torch.matmul(s[0], s[1], out=s[3])
        for layout in ("nn", "tn"):
            b_index = 1 if layout == "nn" else 2
            if f"cuBLAS-{layout}" in wanted:
                self.fns[f"cuBLAS-{layout}"] = lambda s, lay=layout, bi=b_index: lib.cublas(
                    lay, m, n, k, s[0].data_ptr(), s[bi].data_ptr(), s[3].data_ptr(), self.stream
                )
            if {f"cuBLASLt-heuristic-{layout}", f"cuBLASLt-auto-tuning-{layout}"} & set(wanted):
                plan = lib.lt_prepare(layout, m, n, k, MAX_LT_CANDIDATES)
                self.lt_plans[layout] = plan
                if plan.n_algos == 0:
                    self.notes[f"cuBLASLt-heuristic-{layout}"] = "no cuBLASLt algorithm for this shape"
                    continue
                self.fns[f"lt-candidate-{layout}-0"] = self._lt(lib, plan, 0, b_index)
                if f"cuBLASLt-heuristic-{layout}" in wanted:
                    self.fns[f"cuBLASLt-heuristic-{layout}"] = self._lt(lib, plan, 0, b_index)
                for i in range(1, plan.n_algos):
                    self.fns[f"lt-candidate-{layout}-{i}"] = self._lt(lib, plan, i, b_index)
        if kernel_fn is not None:
            self.fns["kernel"] = lambda s: kernel_fn(s[0], s[1], s[2], s[3])
            if job.get("pad_shape"):
                self.fns["kernel"] = lambda s: kernel_fn(*s[4])

                def with_padding(s):
                    ap, bp, bcp, cp = s[4]
                    ap[:m, :k].copy_(s[0])
                    bp[:k, :n].copy_(s[1])
                    bcp[:k, :n].copy_(s[2])
                    kernel_fn(ap, bp, bcp, cp)
                    s[3].copy_(cp[:m, :n])

                self.fns["kernel+padding"] = with_padding

    def may_wait(self, name: str) -> bool:
        """Whether ``name``'s launcher may wait for its stream, which a gated stream would not let
        end: an imported set's module may; ours and the libraries' (cuBLASLt's auto-tuning
        aliases included, added later) never do."""
        return self._module_kernel and name.startswith("kernel")

    def _lt(self, lib, plan, index: int, b_index: int):
        return lambda s: lib.lt(
            plan, index, s[0].data_ptr(), s[b_index].data_ptr(), s[3].data_ptr(), self.stream
        )

    def release(self) -> None:
        """Drop every callable, plan and tensor this config holds (they form reference cycles)."""
        self.fns.clear()
        self.lt_plans.clear()
        self.inputs.sets.clear()
        self._reference = None

    def reference(self) -> Reference:
        """The fp64 reference of input set 0, computed once per config (every check uses it)."""
        if self._reference is None:
            s = self.inputs.sets[0]
            self._reference = Reference(self.torch, s[0], s[1])
        return self._reference

    def output_of(self, impl: str, s) -> Any:
        if impl == "kernel" and s[4] is not None:
            return s[4][3][: self.m, : self.n]
        return s[3]


# The isolated call's hold grows to at most this many times its first length (0.25 ms at the
# spin's calibration clock): 32x covers a host that takes 8 ms to queue three operations.
MAX_HOLD_GROWTH = 32
# After a call whose hold covered its queueing, the next hold of that implementation aims at
# HOLD_MARGIN x the queueing (never under MIN_HOLD_S) on the GPU's timeline. A fixed cycle count
# holds several times longer whenever the SM clock has dropped (server mode's idle gaps) and kept
# every doubling one stall caused, for every implementation: the H100 server grid of 2026-11-24
# spent 0.21 s a config (1.3 ms an arrival) beyond its gaps and its calls' own time.
HOLD_MARGIN = 2.5
MIN_HOLD_S = 0.1e-3
SLEEP_SPIN_S = 0.3e-3


class TorchBackend:
    """protocol.Backend over CUDA events and eager calls on the rotating input sets.

    Its offline samples time the rate at which Python issues calls whenever a call is shorter
    than the issue cost (harness 2's method, kept for ``timing="eager"`` and for launchers that
    cannot be captured); ``isolated_call`` and ``host_latency`` time one call each.
    """

    def __init__(self, torch, impls: Implementations, gate: StreamGate | None = None) -> None:
        self.torch = torch
        self.impls = impls
        self.gate = gate  # holds the stream exactly as long as queueing takes (device.StreamGate)
        self._ungated: set[str] = set()
        self.start = torch.cuda.Event(enable_timing=True)
        self.end = torch.cuda.Event(enable_timing=True)
        self.held_from = torch.cuda.Event(enable_timing=True)
        # How long the stream is held while an isolated call is queued: Python queues the events
        # and a call in 30-60 us here; a hold that turns out too short doubles (isolated_call).
        self.hold_s = 0.25e-3  # the first hold of each implementation
        self._spin_hz: float | None = None
        self._hold_cycles: dict[str, int] = {}  # per implementation: their queueing differs
        self._max_hold_cycles = 0
        self.held_s = 0.0  # the GPU time every hold took, retries included (run_configs.details)
        self.retries = 0
        self.clock = time.perf_counter  # the host's clock (a test replaces it)

    def calls_per_unit(self, impl: str) -> int:
        return 1

    def offline_sample(self, impl: str, calls: int) -> tuple[float, float]:
        fn, nxt = self.impls.fns[impl], self.impls.inputs.next
        sets = [nxt() for _ in range(calls)]
        t0 = time.perf_counter()
        self.start.record()
        for s in sets:
            fn(s)
        self.end.record()
        self.end.synchronize()
        host = time.perf_counter() - t0
        return self.start.elapsed_time(self.end) / 1e3, host

    def host_latency(self, impl: str) -> float:
        """What the reference system measured: one call on an idle GPU, from the Python call to
        the end of a synchronize (launch, launcher and kernel; no event is recorded inside)."""
        s = self.impls.inputs.next()
        fn = self.impls.fns[impl]
        self.torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn(s)
        self.torch.cuda.synchronize()
        return time.perf_counter() - t0

    def isolated_call(self, impl: str) -> float:
        """One call between two events with the host's issue time kept out, as nvbench's
        blocking kernel does: a spin kernel holds the stream while the start event, the call and
        the end event are queued behind it, so the events span the call's own time on the GPU
        (plus the events' and front end's floor, ~2.5-3 us on an H100). The hold is checked on
        the GPU's own timeline (an event before the spin): should queueing outlast most of it,
        the hold doubles and the call is timed again; once it covered the queueing, the next
        hold is sized from what this one took (HOLD_MARGIN)."""
        torch = self.torch
        s = self.impls.inputs.next()
        fn = self.impls.fns[impl]
        if self.gate is not None and not self.impls.may_wait(impl) and impl not in self._ungated:
            measured = self._gated_call(fn, s)
            if not self.gate.timed_out:
                return measured
            # The host did not open the gate in time: the launcher waited for its stream (or the
            # host stalled). Time it with the spin from now on, which a synchronising launcher ends.
            self._ungated.add(impl)
            self.retries += 1
            s = self.impls.inputs.next()
        if self._spin_hz is None:
            self._spin_hz = spin_cycles_per_second(torch)
            self._max_hold_cycles = int(self.hold_s * self._spin_hz) * MAX_HOLD_GROWTH
        cycles = self._hold_cycles.get(impl) or int(self.hold_s * self._spin_hz)
        for _ in range(4):
            torch.cuda.synchronize()
            t0 = self.clock()
            self.held_from.record()
            torch.cuda._sleep(cycles)
            self.start.record()
            fn(s)
            self.end.record()
            queued = self.clock() - t0
            self.end.synchronize()
            # A spin counts SM cycles, and the clock it runs at varies (idle, boost, power
            # limited): hence the hold the GPU really gave, not the intended one.
            held = self.held_from.elapsed_time(self.start) / 1e3
            self.held_s += held
            if queued < 0.8 * held:
                target = max(MIN_HOLD_S, HOLD_MARGIN * queued)
                cycles = int(min(self._max_hold_cycles, max(1.0, cycles * target / max(held, 1e-9))))
                break
            # Bounded: a launcher that synchronises waits for the spin itself, and no hold is
            # long enough for it (its isolated call then includes its own host time, as it does
            # for a user).
            cycles = min(2 * cycles, self._max_hold_cycles)
            self.retries += 1
        self._hold_cycles[impl] = cycles
        return self.start.elapsed_time(self.end) / 1e3

    def _gated_call(self, fn: Callable, s) -> float:
        """The isolated call behind a closed gate, opened once the end event is queued."""
        self.torch.cuda.synchronize()
        self.held_from.record()
        self.gate.close(self.impls.stream)
        try:
            self.start.record()
            fn(s)
            self.end.record()
        finally:
            self.gate.open()
        self.end.synchronize()
        self.held_s += self.held_from.elapsed_time(self.start) / 1e3
        return self.start.elapsed_time(self.end) / 1e3

    def sleep(self, seconds: float) -> None:
        """Idle ``seconds``: the OS's sleep for all but the last SLEEP_SPIN_S, which is spun (a
        sleep overshoots by ~0.1 ms, and server mode sleeps 160 times a config)."""
        deadline = self.clock() + seconds
        if seconds > SLEEP_SPIN_S:
            time.sleep(seconds - SLEEP_SPIN_S)
        while self.clock() < deadline:
            pass


def check_correctness(torch, impls: Implementations, names: list[str], accumulator: str) -> dict[str, dict]:
    """Fresh N(0,1) inputs, C poisoned with NaN, error against an fp64 reference.

    A call that raises is recorded as ``crashed`` with its message (and left out of the timing);
    one that breaks the CUDA context ends the job (KernelCrashed).
    """
    s = impls.inputs.sets[0]
    reference = impls.reference()
    raw: dict[str, tuple[float, bool]] = {}
    out: dict[str, dict] = {}
    for name in names:
        result = impls.output_of(name, s)
        s[3].fill_(float("nan"))
        if s[4] is not None:
            s[4][3].fill_(float("nan"))
        try:
            impls.fns[name](s)
            torch.cuda.synchronize()
        except Exception as exc:
            if _context_broken(torch):
                raise KernelCrashed(f"{name}: {first_line(exc)}") from exc
            out[name] = {
                "status": "crashed",
                "rel_error": None,
                "error_ratio": None,
                "findings": [],
                "message": f"the call raised: {first_line(exc)}",
            }
            continue
        finite = bool(torch.isfinite(result).all())
        err = reference.error(result) if finite else math.inf
        raw[name] = (err, finite)
    cublas_error = next((raw[n][0] for n in ("cuBLAS-nn", "cuBLAS-tn", "torch.matmul") if n in raw), None)
    for name, (err, finite) in raw.items():
        verdict = classify_correctness(err, cublas_error, accumulator, finite)
        out[name] = {
            "status": verdict.status,
            "rel_error": err if math.isfinite(err) else None,
            "error_ratio": verdict.error_ratio,
            "findings": list(verdict.findings),
        }
    for name, verdict in out.items():
        if verdict["status"] == "crashed":
            impls.fns.pop(name, None)
    return out


class Reference:
    """A·B in fp64 for ||out - A·B||_F / ||A·B||_F. Computed once when it fits in a quarter of
    the free memory; otherwise in row blocks for every check, so a 16384^3 problem on a nearly
    full GPU is checked too."""

    def __init__(self, torch, a, b) -> None:
        self.torch, self.a, self.bd = torch, a, b.double()
        m, k = a.shape
        n = b.shape[1]
        free, _ = torch.cuda.mem_get_info()
        self.rows = max(1, min(m, int(0.4 * free) // (8 * (k + 2 * n))))
        self.full = None
        if self.rows == m and 8 * m * n < 0.25 * free:
            self.full = a.double() @ self.bd
            self.full_norm = float(torch.linalg.norm(self.full))

    def error(self, out) -> float:
        norm = self.torch.linalg.norm
        if self.full is not None:
            return float(norm(out.double() - self.full)) / self.full_norm if self.full_norm else math.inf
        err_sq = ref_sq = 0.0
        for start in range(0, self.a.shape[0], self.rows):
            ref = self.a[start : start + self.rows].double() @ self.bd
            err_sq += float(norm(out[start : start + self.rows].double() - ref)) ** 2
            ref_sq += float(norm(ref)) ** 2
            del ref
        return math.sqrt(err_sq / ref_sq) if ref_sq > 0 else math.inf


def autotune(
    torch,
    impls: Implementations,
    settings: ProtocolSettings,
    layout: str,
    accumulator: str,
    floor_s: float = 0.0,
    reuse: int | None = None,
) -> dict | None:
    """Choose the cuBLASLt auto-tuning algorithm of ``layout``; alias it in ``impls``: a screen of
    every correct candidate, then a final of its contenders (the rule and its constants are the
    protocol's: SCREEN_SAMPLES, FINAL_SAMPLES, tuning_finalists).

    ``reuse``: the algorithm an earlier offline run chose for this config (same GPU, cuBLAS and
    accumulator); when it is still offered and correct it is kept without timing (server mode).
    """
    names = sorted(
        (n for n in impls.fns if n.startswith(f"lt-candidate-{layout}-")),
        key=lambda n: int(n.rsplit("-", 1)[1]),
    )
    if not names:
        return None
    alias = f"cuBLASLt-auto-tuning-{layout}"
    kept = f"lt-candidate-{layout}-{reuse}"
    if reuse is not None and kept in names:
        # Only the reused algorithm is called: checking the others would be server mode's waste.
        verdict = check_correctness(torch, impls, [kept], accumulator)[kept]
        if verdict["status"] == "ok":
            impls.fns[alias] = impls.fns[kept]
            return {
                "layout": layout,
                "candidates": len(names),
                "chosen": reuse,
                "verdict": verdict,
                "reused": True,
            }
    correct = check_correctness(torch, impls, names, accumulator)
    usable = [n for n in names if correct[n]["status"] == "ok"]
    if not usable:
        return None
    screen = ProtocolSettings(
        mode="offline",
        samples=SCREEN_SAMPLES,
        min_samples=SCREEN_SAMPLES,
        latency_samples=0,
        warmup_s=settings.warmup_s,
        sample_target_s=settings.sample_target_s / 4,
        seed=settings.seed + 7,
        timing=settings.timing,
    )
    # Chosen on the figure the run reports: graph-replayed device time unless timing is eager.
    backend = offline_backend(torch, impls, screen, usable, lambda _phase: None, floor_s)
    screened = measure(backend, usable, screen)
    finalists = tuning_finalists({n: summarize(screened[n].device).median for n in usable})
    timed = {}
    if len(finalists) > 1:
        final = replace(
            screen,
            samples=FINAL_SAMPLES,
            min_samples=FINAL_SAMPLES,
            sample_target_s=settings.sample_target_s,
            sample_budget_s=settings.sample_budget_s,
            warmup_s=0.0,
            seed=settings.seed + 11,
        )
        timed = measure(backend, finalists, final)
    best = min(finalists, key=lambda n: summarize(timed[n].device).median) if timed else finalists[0]
    impls.fns[alias] = impls.fns[best]

    def index(name: str) -> str:
        return name.rsplit("-", 1)[1]

    return {
        "layout": layout,
        "candidates": len(names),
        "chosen": int(index(best)),
        "verdict": correct[best],
        "screen_us": {index(n): summarize(screened[n].device).median * 1e6 for n in usable},
        "times_us": {index(n): summarize(timed[n].device).median * 1e6 for n in timed},
    }


def offline_backend(
    torch,
    impls: Implementations,
    settings: ProtocolSettings,
    names: list[str],
    progress: Callable[[str], None],
    floor_s: float = 0.0,
):
    """The backend a measurement runs on: CUDA-graph replay for offline device time (harness 3),
    eager calls for server mode and for ``timing="eager"``. ``floor_s``, the config's physical
    floor, sizes the graphs (see graph.calls_per_graph_at_least)."""
    eager = TorchBackend(torch, impls, stream_gate(torch, impls.baselines))
    if settings.mode != "offline" or settings.timing != "graph":
        return eager
    progress("capturing CUDA graphs")
    # A launcher that allocates or synchronises on every call would hide that cost inside a
    # graph (allocations land in the graph's pool) or fail to capture: time it eagerly.
    eager_only = {}
    for name in ("kernel", "kernel+padding"):
        if name in names:
            reason = capture_blockers(torch, impls.fns[name], impls.inputs.next)
            if reason:
                eager_only[name] = reason
    backend = GraphBackend(torch, impls, eager, floor_s)
    backend.prepare(names, eager_only)
    return backend


def _per_call_metric(backend, name: str) -> str:
    """What the offline per-call figure of ``name`` is: device time only when a graph replayed it."""
    if isinstance(backend, GraphBackend) and backend.captured(name):
        return "device_time"
    return "issue_bound_time"


def _escaped_captures(
    backend: GraphBackend, names: list[str], samples: dict, kernel_times: dict[str, tuple[float, float]]
) -> list[str]:
    """The captured implementations whose graphs missed their work (graph.escaped_capture): each is
    dropped from graph timing, so that it is re-timed by events and reported as not capturable."""
    escaped = []
    for name in names:
        cupti = kernel_times.get(name)
        if not backend.captured(name) or cupti is None or not samples[name].device:
            continue
        why = escaped_capture(summarize(samples[name].device).median, cupti[0])
        if why:
            backend.uncapture(name, why)
            escaped.append(name)
    return escaped


def _timing_findings(backend: GraphBackend, name: str, device: list[float], cupti: CuptiTimes) -> list:
    """Audit entries (code, detail, implementation) about how ``name`` was timed: not capturable,
    or graph time against CUPTI's kernel time of the replays after the timing. Short calls compare
    the timing's own median (their clock holds; under a live profiler, events around tiny replays
    also time CUPTI's overhead); long calls, whose power-limited clock drifts over the timing's
    samples, compare the profiled replays timed by events (H100: benchmarks/harness/v3/REPLAY_CUPTI.md)."""
    impl = "kernel" if name == "kernel+padding" else name
    if not backend.captured(name):
        why = backend.not_capturable.get(name, "")
        return [("not-capturable", f"timed by events over eager calls: {why}", impl)]
    timed = summarize(device).median if device else None
    graph_s = cupti.replay_graph_s.get(name) if backend.long_calls else timed
    kernels = cupti.in_replay.get(name)
    mismatch = cross_check(graph_s, *kernels) if graph_s and kernels else None
    return [(*mismatch, impl)] if mismatch else []


# A job kind's handler: (torch, job, state, progress) -> Result. ``state`` lives as long as the
# worker (device info under "info", loaded libraries); ``progress(phase)`` reports a phase.
JobHandler = Callable[[Any, dict, dict, Callable[[str], None]], Result]
# Loads the kernel a config job names under "kernel_library": (torch, job, state) -> callable.
LibraryLoader = Callable[[Any, dict, dict], Callable]


class PhaseClock:
    """Reports each phase of a job and adds up the seconds spent in each (run_configs.details
    keeps them: where a grid's time goes)."""

    def __init__(self, progress: Callable[[str], None]) -> None:
        self.progress = progress
        self.seconds: dict[str, float] = {}
        self.phase = "start"
        self.since = time.perf_counter()

    def enter(self, phase: str) -> None:
        now = time.perf_counter()
        self.seconds[self.phase] = self.seconds.get(self.phase, 0.0) + now - self.since
        self.phase, self.since = phase, now
        self.progress(phase)

    def totals(self) -> dict[str, float]:
        self.enter("done")
        return {name: round(sec, 4) for name, sec in self.seconds.items()}


def baselines_for(state: dict, compute16: bool):
    """The native cuBLAS / cuBLASLt baselines (one per accumulator), loaded once per worker."""
    from cuda_l2_explorer.importer.harness import baselines

    key = ("baselines", compute16)
    if key not in state:
        state[key] = baselines.CublasBaselines(compute16=compute16)
    return state[key]


def run_config(
    torch,
    job: dict,
    state: dict,
    progress: Callable[[str], None],
    load_library_kernel: LibraryLoader | None = None,
) -> Result:
    """Measure one config: its kernel (a built module, or a library kernel when this worker has
    a ``load_library_kernel``) beside the baselines, under the job's protocol."""
    m, n, k = job["m"], job["n"], job["k"]
    started = time.perf_counter()
    clock = PhaseClock(progress)
    settings = ProtocolSettings(**job["protocol"])
    if not state.get("gpu_warmed"):
        settings = replace(settings, warmup_s=max(settings.warmup_s, WORKER_WARMUP_S))
        if settings.mode == "offline" and settings.timing == "graph":
            take_cupti_setup(torch)
        state["gpu_warmed"] = True
    floor_s = floor_seconds(Shape(m, n, k), gpu_label(state["info"]["gpu_name"])) or 0.0
    accumulator = job["accumulator"]
    lib = baselines_for(state, accumulator == "F16F16F16F16")
    kernel_fn = None
    kernel_error = None
    if job.get("kernel_library"):
        clock.enter("loading kernel")
        try:
            if load_library_kernel is None:
                raise RuntimeError("this worker has no loader for library kernels (see plan.worker)")
            kernel_fn = load_library_kernel(torch, job, state)
        except Exception as exc:
            kernel_error = f"could not load the library kernel: {exc}"
    elif job.get("kernel_module"):
        clock.enter("loading kernel")
        try:
            from cuda_l2_explorer.importer.harness.build import load_module

            kernel_fn = load_module(job["kernel_module"])
        except Exception as exc:
            kernel_error = f"could not load the built kernel: {exc}"
    pad_shape = tuple(job["pad_shape"]) if job.get("pad_shape") else None
    free, _total = torch.cuda.mem_get_info()
    l2 = state["info"]["l2_bytes"] or 50 * 2**20
    per_set = bytes_per_set(m, n, k, pad_shape)
    cold = job.get("l2", "cold") == "cold"
    count = rotation_sets(per_set, l2, free, max_sets=settings.rotation_cap) if cold else 1
    clock.enter("allocating inputs")
    inputs = Inputs(torch, m, n, k, count, pad_shape, settings.seed)
    impls = Implementations(torch, job, lib, inputs, kernel_fn)
    measured_names = [b for b in job["baselines"] if b in impls.fns or b.startswith("cuBLASLt-auto-tuning")]
    clock.enter("checking correctness")
    check_names = [x for x in impls.fns if not x.startswith("lt-candidate")]
    correctness = check_correctness(torch, impls, check_names, accumulator)
    findings: list[tuple[str, str]] = []
    if "kernel" in impls.fns:
        findings += [tuple(f) for f in correctness["kernel"]["findings"]]
    tuning = {}
    reuse = job.get("lt_choices") or {}
    for layout in ("nn", "tn"):
        if f"cuBLASLt-auto-tuning-{layout}" in job["baselines"]:
            clock.enter(f"auto-tuning cuBLASLt {layout}")
            result = autotune(torch, impls, settings, layout, accumulator, floor_s, reuse.get(layout))
            if result:
                correctness[f"cuBLASLt-auto-tuning-{layout}"] = result.pop("verdict")
                tuning[layout] = result
    names = [x for x in ("kernel", "kernel+padding", *measured_names) if x in impls.fns]
    backend = offline_backend(torch, impls, settings, names, clock.enter, floor_s)
    clock.enter(f"measuring ({settings.mode})")
    samples = measure(
        backend,
        names,
        settings,
        on_round=lambda i, total: progress(f"measuring ({settings.mode}) {i}/{total}"),
    )
    # The SM clock as the timing ends: back-to-back large GEMMs run power-limited, below boost.
    clock.enter("reading clocks")
    sm_clock = sm_clock_mhz(torch)
    kernel_times: dict[str, tuple[float, float, int]] = {}
    unheld: list[str] = []
    if isinstance(backend, GraphBackend):
        # After the timing, as the audit: CUPTI must not be live while we measure.
        clock.enter("cross-checking with CUPTI")
        medians = {n: summarize(samples[n].device).median for n in names if samples[n].device}
        cupti = kernel_time_per_call(torch, impls, names, backend, medians)
        escaped = _escaped_captures(backend, names, samples, cupti.eager)
        if escaped:
            clock.enter("re-timing launches that escaped the graph")
            samples.update(measure(backend, escaped, settings))
        # Stored: the graph's own kernels as replayed after the timing; a launch that escaped its
        # graph keeps its eager kernel time (what its work costs).
        kernel_times = {
            n: (*cupti.in_replay[n], cupti.replayed_calls[n]) for n in cupti.in_replay if backend.captured(n)
        }
        kernel_times |= {
            n: (*cupti.eager[n], cupti.eager_calls) for n in cupti.eager if n not in kernel_times
        }
        for name in names:
            findings += _timing_findings(backend, name, samples[name].device, cupti)
        unheld = cupti.unheld
    earlier = job.get("audit_reuse")
    if "kernel" in impls.fns and earlier is not None:
        # The same kernel's audit from an offline run (server mode): the launcher is what it observes.
        findings += [
            (code, f"{detail} (audited in offline run {earlier['run_id'][:8]})")
            for code, detail in earlier["findings"]
        ]
    elif "kernel" in impls.fns:
        clock.enter("auditing the launcher")
        findings += audit(torch, impls.fns["kernel"], impls.inputs.next)
    flops = 2.0 * m * n * k
    rows = []
    for name in names:
        impl_name = "kernel" if name == "kernel+padding" else name
        verdict = correctness.get("kernel" if name == "kernel+padding" else name, {})
        base = dict(
            implementation=impl_name,
            padded=name == "kernel+padding",
            status=verdict.get("status", "ok"),
            rel_error=verdict.get("rel_error"),
            error_ratio=verdict.get("error_ratio"),
            message=None,
        )
        if name.startswith("cuBLASLt-auto-tuning") and name.rsplit("-", 1)[1] in tuning:
            t = tuning[name.rsplit("-", 1)[1]]
            base["message"] = f"algorithm {t['chosen']} of {t['candidates']} heuristic candidates"
        s = samples[name]
        # (metric, per-sample values, unit, calls each sample spans)
        series = [
            (_per_call_metric(backend, name), s.device, "s", s.calls_per_sample),
            ("isolated_call", s.isolated, "s", 1),
            ("host_latency", s.host, "s", 1),
            ("reference_tflops", [flops / h / 1e12 for h in s.host], "TFLOP/s", 1),
        ]
        if name in kernel_times:
            series.append(("cupti_kernel_time", [kernel_times[name][0]], "s", kernel_times[name][2]))
        for metric, values, unit, calls in series:
            if not values:
                continue
            stats = summarize(values)
            rows.append(
                {
                    **base,
                    "metric": metric,
                    "unit": unit,
                    "n_samples": stats.n,
                    "calls_per_sample": calls,
                    "median": stats.median,
                    "p10": stats.p10,
                    "p90": stats.p90,
                    "mean": stats.mean,
                    "p99": stats.p99,
                    "min": stats.min,
                    "max": stats.max,
                    "samples": values if metric != "reference_tflops" else [],
                }
            )
    for name, verdict in correctness.items():
        if verdict["status"] == "crashed":
            rows.append(
                {
                    "implementation": name.replace("kernel+padding", "kernel"),
                    "padded": name == "kernel+padding",
                    "status": "crashed",
                    "metric": "device_time",
                    "unit": "s",
                    "message": verdict.get("message"),
                }
            )
    for name, note in impls.notes.items():
        rows.append(
            {
                "implementation": name,
                "padded": False,
                "status": "skipped",
                "metric": "device_time",
                "unit": "s",
                "message": note,
            }
        )
    if kernel_error:
        rows.append(
            {
                "implementation": "kernel",
                "padded": False,
                "status": "crashed",
                "metric": "device_time",
                "unit": "s",
                "message": kernel_error,
            }
        )
    torch.cuda.synchronize()
    info = {
        "rotation_sets": count,
        "bytes_per_set": per_set,
        "autotune": tuning,
        "timing": settings.timing,
        "warmup_s": settings.warmup_s,
    }
    if earlier is not None and "kernel" in impls.fns:
        info["audit_from"] = earlier["run_id"]
    # SPEC §7 cold L2 wants the sets to span >= 2x the L2; the set cap leaves small shapes below
    # (db.views flags them). Warm-L2 runs rotate over one set and say so in every row.
    info["l2_span"] = round(l2_span(count, per_set, l2), 4)
    info["sm_clock_after_timing_mhz"] = sm_clock
    if isinstance(backend, GraphBackend):
        info["calls_per_graph"] = backend.calls_per_graph
        info["not_capturable"] = backend.not_capturable
        info["cupti_unheld"] = unheld
    eager = backend.eager if isinstance(backend, GraphBackend) else backend
    info["isolated_hold_s"] = round(eager.held_s, 6)
    info["isolated_retries"] = eager.retries
    # The implementations' closures hold them in reference cycles, with the inputs and graphs:
    # released here, the config's device memory goes back at once, without a full collection.
    impls.release()
    del backend
    info["phase_s"] = clock.totals()
    return Result(m, n, k, rows, findings, {**info, "seconds": time.perf_counter() - started})


def serve(jobs: Mapping[str, JobHandler]) -> int:
    """The worker's life: say hello, then answer each job with its kind's handler until 'exit'."""
    channel = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # stray prints (a kernel's printf) go to stderr, not into the protocol
    # Kineto leaves CUPTI's callbacks installed after a profiler session unless told to tear it
    # down (pytorch/pytorch#144455); they slow every later launch, so the audit of one config
    # would inflate the launch-bound timings of the next. Set before torch is imported.
    os.environ.setdefault("TEARDOWN_CUPTI", "1")
    try:
        import torch

        if not torch.cuda.is_available():
            messages.send(channel, messages.fatal("no CUDA GPU visible to torch"))
            return 7
        torch.backends.cuda.matmul.allow_tf32 = False
        info = device_info()
    except Exception as exc:
        messages.send(channel, messages.fatal(f"{type(exc).__name__}: {exc}"))
        return 1
    messages.send(channel, messages.hello(info, os.getpid()))
    state: dict = {"info": info}
    fresh_bytes = torch.cuda.memory_allocated()
    for line in sys.stdin:
        if not line.strip():
            continue
        job = json.loads(line)
        if job.get("op") == "exit":
            break

        def progress(phase: str, job=job) -> None:
            messages.send(channel, messages.progress(job, phase))

        try:
            handler = jobs.get(job.get("op", "config"))
            if handler is None:
                raise ValueError(
                    f"this worker serves no {job.get('op')!r} jobs (it serves {', '.join(jobs)})"
                )
            result = handler(torch, job, state, progress)
            # A job's tensors must be gone after it (run_config releases them). Left to the cycle
            # collector, a grid's worker filled 78 GiB after ~250 configs; memory that stays
            # allocated even after a full collection retires this process after its answer: the
            # runner starts a fresh one for the next job.
            kept = torch.cuda.memory_allocated() - fresh_bytes
            if kept > RETIRE_AFTER_BYTES // 4:
                gc.collect()
                kept = torch.cuda.memory_allocated() - fresh_bytes
            if kept > RETIRE_AFTER_BYTES:
                result.info["retire"] = {"kept_bytes": kept, "leak": leak_report(torch)}
            messages.send(channel, result.to_message())
            if kept > RETIRE_AFTER_BYTES:
                return 0
        except Exception as exc:
            text = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"
            broken = _context_broken(torch)
            status = "crashed" if broken else "error"
            messages.send(channel, messages.error(job, status, text, traceback.format_exc()[-4000:]))
            if broken:
                return 3
            if isinstance(exc, torch.OutOfMemoryError):
                return 4  # whatever held the memory goes with this process; the next job gets a fresh one
    return 0


# Device memory a worker may keep allocated between jobs before it retires (see serve).
RETIRE_AFTER_BYTES = 4 << 30


def leak_report(torch, limit: int = 6) -> list[str]:
    """The largest CUDA tensors still alive between jobs and what holds each (for the log)."""
    tensors = []
    for obj in gc.get_objects():
        try:
            if isinstance(obj, torch.Tensor) and obj.is_cuda:
                tensors.append(obj)
        except Exception:
            continue
    tensors.sort(key=lambda t: t.untyped_storage().nbytes(), reverse=True)
    report = []
    for t in tensors[:limit]:
        holders = [type(r).__name__ for r in gc.get_referrers(t) if r is not tensors][:4]
        mib = t.untyped_storage().nbytes() >> 20
        report.append(f"{tuple(t.shape)} {t.dtype} {mib} MiB held by {holders}")
    return report


def main() -> int:
    return serve({"config": run_config})


def _context_broken(torch) -> bool:
    try:
        torch.cuda.synchronize()
        torch.zeros(1, device="cuda").add_(1).item()
        return False
    except Exception:
        return True


if __name__ == "__main__":
    sys.exit(main())
