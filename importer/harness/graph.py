"""Offline device time by CUDA-graph replay, and its CUPTI cross-check (harness 3, SPEC §7).

Python issues a GEMM call in 8-22 us here while a tiny kernel runs in 2-4 us, so R eager calls
between two events time the issue rate, not the kernel. Captured into one CUDA graph, R calls run
back to back on the GPU's timeline as they do in a graph-captured model: elapsed / R is the
device time a call costs. Every implementation (our kernels, imported sets, the seven baselines)
is timed the same way over the same rotating input sets (cold L2).

A launcher that cannot be captured (it synchronises, allocates or uses another stream) is timed
by events over eager calls instead and reported as ``not-capturable``: its figure is another
metric and never enters a geomean of device times.
"""

from __future__ import annotations

import gc
import math
import time
from dataclasses import dataclass
from typing import Any

from cuda_l2_explorer.importer.harness.audit import correlations_in, trace_events
from cuda_l2_explorer.importer.harness.device import spin_cycles_per_second

# Calls in one graph: a multiple of the rotation sets, at least this many, so that one replay
# walks every set and the replay's own launch (~2-3 us) is spread over many calls. A call whose
# physical floor is above LONG_CALL_S hides the replay's launch by itself: its graph holds one
# call per set (a 16384^3 graph of 8 calls would cost 100 ms a replay).
MIN_CALLS_PER_GRAPH = 8
LONG_CALL_S = 20e-6
# SPEC §7: graph-replay and CUPTI kernel time disagreeing by more than this flags the row.
CROSS_CHECK_TOLERANCE = 0.05
# Back to back in a graph, each kernel node also costs its launch gap, which CUPTI's kernel
# durations leave out: measured on an H100 (2026-11-24, benchmarks/harness/v3) at 0.07-0.67 us
# a call for cuBLAS's one or two kernels. A graph slower than CUPTI's sum by more than 5% plus
# this per kernel, or faster than it by more than 5% (work the graph did not time), is flagged.
GRAPH_NODE_GAP_S = 0.5e-6
# Replays of each implementation's graph that CUPTI's cross-check times (see kernel_time_per_call):
# one graph already holds >= MIN_CALLS_PER_GRAPH calls, or one long call per input set.
REPLAYS = 1
# Eager calls per implementation that CUPTI times after the replays (the escaped-capture check): a
# long call needs one. Two replays, four eager calls and 0.15 s of warm replays made the cross-check
# 0.34 s of a long config (H100 grid, 2026-11-24: 78 s of 229 long configs, against 7 s before).
EAGER_CALLS = 4
EAGER_CALLS_LONG = 1
# For long calls the profiled replay is timed by events too (the cross-check compares the two).
# The host queues it under a live profiler, slowly at a graph's first profiled launch: with one
# replay and nothing ahead of it on the stream, the events timed that queueing (64x2048x16384:
# 69 us a call against 28 us of kernels; 874 flagged rows in the H100 grid of 2026-11-24). So a
# spin of CUPTI_HOLD_S holds the stream while the labelled replay and its events are queued; a
# hold the queueing outlasted leaves that implementation unchecked (CuptiTimes.unheld) rather
# than flagged. Every graph is first replayed once unlabelled: the kernels of a graph's first
# profiled replay ran 5-10% slower than the timing's (2048^3, 1024x4096x2048).
CUPTI_HOLD_S = 1e-3
# A long call's labelled replays span at least this much (by the timing's median): the held
# stream still shows each replay's start (~2-5 us from the event to its first kernel), which a
# graph of two 30 us calls cannot hide (64x4096x8192: 7-9% over CUPTI, 328 flagged rows in the
# H100 grid of 2026-11-24 with one replay); over 0.5 ms it is under 1%.
CUPTI_SPAN_S = 0.5e-3
# A graph whose replay takes less than this fraction of the call's CUPTI kernel time did not
# capture the call's work: a launcher that ignores the caller's stream (the legacy default
# stream, as the reference system's kernels use) runs at once during a capture on the harness's
# non-blocking stream and leaves the graph (nearly) empty. Measured on an H100: 0.17 us a replayed
# call against 8.96 us of kernel (ratio 0.02). Such a launcher is re-timed by eager events.
ESCAPED_CAPTURE_RATIO = 0.5


def calls_per_graph_at_least(floor_s: float) -> int:
    """The fewest calls a graph holds for a call whose physical floor is ``floor_s``."""
    return 1 if floor_s >= LONG_CALL_S else MIN_CALLS_PER_GRAPH


def first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0] if text else ''}"


class GraphBackend:
    """protocol.Backend whose offline samples are replays of one CUDA graph per implementation.

    ``offline_sample(name, units)`` replays the graph ``units`` times; ``calls_per_unit(name)``
    says how many calls one unit holds (the graph's calls, or 1 for an eager fallback).
    ``isolated_call`` and ``host_latency`` are always one eager call on an idle GPU (the eager
    backend's): the isolated call between events, the host latency to the end of a synchronize.
    """

    def __init__(self, torch: Any, impls: Any, eager: Any, floor_s: float = 0.0) -> None:
        self.torch = torch
        self.impls = impls
        self.eager = eager
        sets = impls.inputs.count
        self.calls_per_graph = sets * math.ceil(calls_per_graph_at_least(floor_s) / sets)
        self.long_calls = floor_s >= LONG_CALL_S
        self.graphs: dict[str, Any] = {}
        self.not_capturable: dict[str, str] = {}
        self.pool = torch.cuda.graph_pool_handle()
        self.start = torch.cuda.Event(enable_timing=True)
        self.end = torch.cuda.Event(enable_timing=True)

    def prepare(self, names: list[str], eager_only: dict[str, str] | None = None) -> None:
        """Capture every implementation; ``eager_only`` names those the audit's pre-check excluded."""
        for name, why in (eager_only or {}).items():
            self.not_capturable[name] = why
        # torch.cuda.graph() runs gc.collect() on every capture; freezing the live objects first
        # makes those collections nearly free when hundreds of implementations are captured.
        gc.freeze()
        try:
            for name in names:
                if name not in self.not_capturable:
                    self._capture(name)
        finally:
            gc.unfreeze()

    def _capture(self, name: str) -> None:
        torch, impls = self.torch, self.impls
        fn, sets = impls.fns[name], impls.inputs.sets
        graph = torch.cuda.CUDAGraph()
        caller_stream = impls.stream
        torch.cuda.synchronize()
        try:
            with torch.cuda.graph(graph, pool=self.pool):
                # Launchers that take a stream must launch onto the capturing one.
                impls.stream = torch.cuda.current_stream().cuda_stream
                for j in range(self.calls_per_graph):
                    fn(sets[j % len(sets)])
        except Exception as exc:
            self.not_capturable[name] = first_line(exc)
            torch.cuda.synchronize()
            return
        finally:
            impls.stream = caller_stream
        self.graphs[name] = graph

    def captured(self, name: str) -> bool:
        return name in self.graphs

    def uncapture(self, name: str, why: str) -> None:
        """Drop ``name``'s graph: from now on it is timed by eager events, as not capturable."""
        self.graphs.pop(name, None)
        self.not_capturable[name] = why

    def calls_per_unit(self, name: str) -> int:
        return self.calls_per_graph if name in self.graphs else 1

    def offline_sample(self, name: str, units: int) -> tuple[float, float]:
        graph = self.graphs.get(name)
        if graph is None:
            return self.eager.offline_sample(name, units)
        t0 = time.perf_counter()
        self.start.record()
        for _ in range(units):
            graph.replay()
        self.end.record()
        self.end.synchronize()
        host = time.perf_counter() - t0
        # Each replay reads every set in order (calls_per_graph is a multiple of the sets): the
        # eager calls that follow (isolated, host latency) start from the set read longest ago.
        self.impls.inputs.restart()
        return self.start.elapsed_time(self.end) / 1e3, host

    def host_latency(self, name: str) -> float:
        return self.eager.host_latency(name)

    def isolated_call(self, name: str) -> float:
        return self.eager.isolated_call(name)

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


@dataclass
class CuptiTimes:
    """What :func:`kernel_time_per_call` measured, per implementation and per call (seconds)."""

    in_replay: dict[str, tuple[float, float]]  # CUPTI's GPU operations of graph replays, and their count
    replay_graph_s: dict[str, float]  # the same replays timed by events, as the timing does
    eager: dict[str, tuple[float, float]]  # CUPTI's GPU operations of eager calls, and their count
    replayed_calls: dict[str, int]  # per implementation, the calls its in-replay figures span
    eager_calls: int  # calls the eager figures span
    unheld: list[str]  # long calls whose replay's events may include host time (not compared)


def kernel_time_per_call(
    torch: Any,
    impls: Any,
    names: list[str],
    backend: GraphBackend | None = None,
    per_call_s: dict[str, float] | None = None,
) -> CuptiTimes:
    """Per call, the summed duration of every GPU operation it launched, from CUPTI, and how many
    operations that was.

    Kernels, memsets and copies alike (a split-K reduction or a workspace memset belongs to the
    call); each implementation inside its own named range, so that GPU work is attributed through
    the launches' correlation ids. One profiler session, right after the timing:
    - "in replay": ``backend``'s graph of each captured implementation replayed REPLAYS times
      (a long call: enough replays to span CUPTI_SPAN_S by its timing's ``per_call_s``), and
      the same replays timed by events. For long calls the cross-check compares the two: the
      clock of the timing's many samples drifts with the power limit (back-to-back large GEMMs
      run an H100 at 700 W and ~1.4 GHz, a burst after a pause at 1.98 GHz; the profiler's start
      is such a pause: benchmarks/harness/v3/REPLAY_CUPTI.md), the same replays' two timers do not.
    - "eager": EAGER_CALLS eager calls over the rotating sets (EAGER_CALLS_LONG for long calls),
      which show the work a launch that escaped its graph did.
    """
    from torch.profiler import ProfilerActivity, profile, record_function

    captured = [n for n in names if backend is not None and backend.captured(n)]
    replayed = {name: f"l2x_rp_{i}" for i, name in enumerate(captured)}
    eager = {name: f"l2x_xc_{i}" for i, name in enumerate(names)}
    calls = EAGER_CALLS_LONG if backend is not None and backend.long_calls else EAGER_CALLS
    marks = {
        name: (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
        for name in captured
    }
    long_calls = backend is not None and backend.long_calls
    hold_cycles = int(CUPTI_HOLD_S * spin_cycles_per_second(torch)) if long_calls and captured else 0
    held_from = torch.cuda.Event(enable_timing=True)
    unheld = []
    per_graph = backend.calls_per_graph if backend is not None else 1
    replays = {name: REPLAYS for name in captured}
    for name in captured if long_calls else ():
        replay_s = (per_call_s or {}).get(name, 0.0) * per_graph
        if replay_s > 0:
            replays[name] = max(REPLAYS, math.ceil(CUPTI_SPAN_S / replay_s))
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for name, label in replayed.items():
            graph = backend.graphs[name]
            graph.replay()  # its first profiled launch, unlabelled
            if long_calls:
                held_from.record()
                torch.cuda._sleep(hold_cycles)
            queue_start = time.perf_counter()
            with record_function(label):
                marks[name][0].record()
                for _ in range(replays[name]):
                    graph.replay()
                marks[name][1].record()
            if long_calls:
                queued = time.perf_counter() - queue_start
                marks[name][1].synchronize()
                if queued >= 0.8 * held_from.elapsed_time(marks[name][0]) / 1e3:
                    unheld.append(name)
        torch.cuda.synchronize()
        for name, label in eager.items():
            fn = impls.fns[name]
            sets = [impls.inputs.next() for _ in range(calls)]
            with record_function(label):
                for s in sets:
                    fn(s)
            torch.cuda.synchronize()
    events = trace_events(prof)
    gpu = [e for e in events if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    replayed_calls = {name: replays[name] * per_graph for name in captured}
    return CuptiTimes(
        in_replay=_per_call(events, gpu, replayed, replayed_calls),
        replay_graph_s={
            n: a.elapsed_time(b) / 1e3 / replayed_calls[n] for n, (a, b) in marks.items() if n not in unheld
        },
        eager=_per_call(events, gpu, eager, dict.fromkeys(eager, calls)),
        replayed_calls=replayed_calls,
        eager_calls=calls,
        unheld=unheld,
    )


def _per_call(events: list[dict], gpu: list[dict], ranges: dict[str, str], calls: dict[str, int]) -> dict:
    out: dict[str, tuple[float, float]] = {}
    for name, label in ranges.items():
        launches = correlations_in(events, label)
        ops = [e.get("dur", 0) for e in gpu if e.get("args", {}).get("correlation") in launches]
        if sum(ops) > 0:
            out[name] = (sum(ops) / 1e6 / calls[name], len(ops) / calls[name])
    return out


def take_cupti_setup(torch: Any) -> None:
    """CUPTI's first profiler session in a process spends seconds setting up (7.4 s on an H100,
    2026-11-24), in which the GPU idles back to full clock: take it before any timing, so that
    the first config's cross-check runs as the later ones do."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]):
        torch.cuda.synchronize()


def escaped_capture(graph_s: float, cupti_s: float | None) -> str | None:
    """Why a call's work escaped its graph (see ESCAPED_CAPTURE_RATIO), None when it did not."""
    if cupti_s is None or cupti_s <= 0 or graph_s >= ESCAPED_CAPTURE_RATIO * cupti_s:
        return None
    return (
        f"its launch escaped the CUDA graph (replay {graph_s * 1e6:.2f} us a call against CUPTI's "
        f"{cupti_s * 1e6:.2f} us of kernel): it ignores the caller's stream"
    )


def cross_check(graph_s: float, cupti_s: float | None, kernels: float = 1.0) -> tuple[str, str] | None:
    """An audit finding when graph-replay time and CUPTI's kernel time disagree (see above)."""
    if cupti_s is None or graph_s <= 0:
        return None
    ratio = graph_s / cupti_s
    slack = CROSS_CHECK_TOLERANCE * cupti_s + kernels * GRAPH_NODE_GAP_S
    if cupti_s * (1 - CROSS_CHECK_TOLERANCE) <= graph_s <= cupti_s + slack:
        return None
    detail = (
        f"graph replay {graph_s * 1e6:.2f} us/call vs CUPTI kernel time {cupti_s * 1e6:.2f} us "
        f"(ratio {ratio:.3f}; allowed: -5% to +5% plus {GRAPH_NODE_GAP_S * 1e6:.1f} us a kernel)"
    )
    if ratio > 1:
        # benchmarks/harness/v3/gap_probe.py (H100, 2026-11-24): the same excess a call in graphs of
        # 4, 16 and 64 calls, cold or warm, so it is paid between kernels, not once per replay.
        detail += (
            f": {(graph_s - cupti_s) * 1e6:.2f} us a call passes between the graph's kernels, outside "
            "CUPTI's kernel durations; a graph-captured model pays it too"
        )
    return "timing-mismatch", detail
