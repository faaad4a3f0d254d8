"""The launcher audit of SPEC §7: per-call synchronisation, per-call allocation, work on other
streams or threads (work hidden from the timed stream).

:func:`audit` observes a launcher on the GPU (torch is passed in by the worker, never imported
here); :func:`audit_findings` turns the observation into findings and is pure, so the CPU tests
check the rules.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

_SYNC_APIS = (
    "cudaDeviceSynchronize",
    "cudaStreamSynchronize",
    "cudaEventSynchronize",
    "cuCtxSynchronize",
    "cuStreamSynchronize",
)
_MALLOC_APIS = (
    "cudaMalloc",
    "cudaFree",
    "cudaMallocAsync",
    "cudaFreeAsync",
    "cuMemAlloc",
    "cuMemFree",
    "cudaMallocManaged",
    "cudaMallocHost",
)


# Every code audit_findings can give: the launcher's own properties, the same in every mode.
AUDIT_CODES = ("sync_per_call", "alloc_per_call", "hidden_stream_work", "extra_threads", "audit_partial")


@dataclass(frozen=True)
class AuditObservation:
    """What :func:`audit` saw while running a launcher a few times."""

    calls: int
    sync_api_calls: int = 0  # cudaDeviceSynchronize / cudaStreamSynchronize / ... in the trace
    blocked_behind_sleep: bool = False  # the call returned only after a queued sleep kernel ended
    malloc_api_calls: int = 0  # cudaMalloc / cudaFree / cudaMallocAsync ... in the trace
    torch_allocations: int = 0  # torch caching-allocator requests during the calls
    foreign_stream_kernels: int = 0  # kernels or copies on streams other than the caller's
    new_threads: int = 0  # OS threads still alive that the calls started
    trace_available: bool = True


def audit_findings(obs: AuditObservation) -> list[tuple[str, str]]:
    """Launcher audit rules (SPEC §7): each finding is (code, one-line detail)."""
    out = []
    if obs.sync_api_calls >= obs.calls or obs.blocked_behind_sleep:
        how = []
        if obs.sync_api_calls:
            how.append(f"{obs.sync_api_calls} synchronize calls in {obs.calls} launches")
        if obs.blocked_behind_sleep:
            how.append("the call waited for earlier GPU work to finish")
        out.append(("sync_per_call", "device synchronisation on every call: " + "; ".join(how)))
    if obs.malloc_api_calls >= obs.calls or obs.torch_allocations >= obs.calls:
        out.append(
            (
                "alloc_per_call",
                f"allocation on every call ({obs.malloc_api_calls} CUDA allocation calls, "
                f"{obs.torch_allocations} torch allocations in {obs.calls} launches)",
            )
        )
    if obs.foreign_stream_kernels:
        out.append(
            (
                "hidden_stream_work",
                f"{obs.foreign_stream_kernels} GPU operations ran on streams other than the caller's: "
                "work hidden from the timed stream",
            )
        )
    if obs.new_threads:
        out.append(("extra_threads", f"{obs.new_threads} threads started by the launcher"))
    if not obs.trace_available:
        out.append(
            ("audit_partial", "the CUDA trace (profiler) was unavailable; stream and API checks skipped")
        )
    return out


def audit(torch, fn: Callable, next_inputs: Callable[[], Any], calls: int = 5) -> list[tuple[str, str]]:
    """Per-call sync, per-call allocation, work on other streams or threads (SPEC §7).

    ``fn(inputs)`` is the launcher; ``next_inputs()`` hands out the next rotating input set.
    """
    sets = [next_inputs() for _ in range(calls)]
    torch.cuda.synchronize()
    # Threads and allocations are counted on plain calls: the profiler starts threads of its own.
    threads_before = set(os.listdir("/proc/self/task"))
    allocs = _torch_allocations(torch, fn, sets)
    new_threads = len(set(os.listdir("/proc/self/task")) - threads_before)
    trace = _profile(torch, fn, sets)
    blocked = _blocks_behind_sleep(torch, fn, next_inputs())
    obs = AuditObservation(
        calls=calls,
        sync_api_calls=trace.get("sync", 0),
        blocked_behind_sleep=blocked,
        malloc_api_calls=trace.get("malloc", 0),
        torch_allocations=allocs,
        foreign_stream_kernels=trace.get("foreign", 0),
        new_threads=new_threads,
        trace_available=trace.get("ok", False),
    )
    return audit_findings(obs)


def capture_blockers(torch, fn: Callable, next_inputs: Callable[[], Any], calls: int = 3) -> str | None:
    """Why ``fn`` must not be timed inside a CUDA graph, or None.

    Captured, a per-call allocation is served once from the graph's private pool and a per-call
    synchronisation fails or vanishes: the graph would time a launcher cheaper than the one a
    user calls. Both are seen on plain calls, before any profiler runs (it must not be live
    while we measure); side streams are caught by the capture itself or by the audit.
    """
    allocations = _torch_allocations(torch, fn, [next_inputs() for _ in range(calls)])
    if allocations >= calls:
        return f"allocates on every call ({allocations} allocations in {calls} calls)"
    if _blocks_behind_sleep(torch, fn, next_inputs()):
        return "synchronises the device on every call"
    return None


def _torch_allocations(torch, fn: Callable, sets: list) -> int:
    """Allocations torch's caching allocator served while ``fn`` ran once per input set."""
    torch.cuda.synchronize()
    before = torch.cuda.memory_stats().get("allocation.all.allocated", 0)
    for s in sets:
        fn(s)
    torch.cuda.synchronize()
    return torch.cuda.memory_stats().get("allocation.all.allocated", 0) - before


def _profile(torch, fn, sets) -> dict:
    """Count sync / allocation API calls inside the calls, and GPU work off the caller's stream."""
    try:
        from torch.profiler import ProfilerActivity, profile, record_function

        marker = torch.empty(1024, device="cuda")
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            with record_function("l2x_marker"):  # kernels that identify the caller's stream
                for _ in range(2 * len(sets) + 2):
                    marker.fill_(1.0)
            for s in sets:
                with record_function("l2x_call"):
                    fn(s)
            torch.cuda.synchronize()
        events = trace_events(prof)
    except Exception as exc:
        print(f"audit: profiler unavailable: {exc}", file=sys.stderr)
        return {"ok": False}
    windows = _windows(events, "l2x_call")

    def inside(e) -> bool:
        ts = e.get("ts", -1)
        return any(lo <= ts <= hi for lo, hi in windows)

    gpu = [e for e in events if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    marker_ids = correlations_in(events, "l2x_marker")
    caller_stream = _caller_stream(gpu, marker_ids)
    runtime = [e for e in events if e.get("cat") in ("cuda_runtime", "cuda_driver") and inside(e)]
    foreign = [
        e
        for e in gpu
        if e.get("args", {}).get("correlation") not in marker_ids
        and e.get("args", {}).get("stream") != caller_stream
    ]
    return {
        "ok": caller_stream is not None,
        "sync": sum(1 for e in runtime if e.get("name") in _SYNC_APIS),
        "malloc": sum(1 for e in runtime if e.get("name") in _MALLOC_APIS),
        "foreign": len(foreign) if caller_stream is not None else 0,
    }


def trace_events(prof) -> list[dict]:
    """The events of a finished torch.profiler session (its Chrome trace)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.json")
        prof.export_chrome_trace(path)
        with open(path) as f:
            return json.load(f).get("traceEvents", [])


def _windows(events: list[dict], range_name: str) -> list[tuple[float, float]]:
    """Host-side time ranges of a record_function (not its GPU-side annotation)."""
    return [
        (e["ts"], e["ts"] + e.get("dur", 0))
        for e in events
        if e.get("name") == range_name and e.get("cat") == "user_annotation"
    ]


def correlations_in(events: list[dict], range_name: str) -> set:
    """Correlation ids of the runtime launches made inside the named record_function ranges."""
    windows = _windows(events, range_name)
    return {
        e.get("args", {}).get("correlation")
        for e in events
        if e.get("cat") in ("cuda_runtime", "cuda_driver")
        and any(lo <= e.get("ts", -1) <= hi for lo, hi in windows)
    } - {None}


def _caller_stream(gpu: list[dict], marker_ids: set):
    """The stream of the marker kernels (by correlation), else the stream most GPU ops used."""
    streams = [
        e.get("args", {}).get("stream") for e in gpu if e.get("args", {}).get("correlation") in marker_ids
    ]
    if not streams:
        streams = [e.get("args", {}).get("stream") for e in gpu]
    streams = [x for x in streams if x is not None]
    return max(set(streams), key=streams.count) if streams else None


# The GPU sleep queued before a call, and how long the call must take to have waited for it.
# A call is issued in well under a millisecond here (its module is loaded by the earlier
# correctness check); twice per config, this costs ~16 ms a config (a 20 ms sleep cost 40).
BLOCKING_SLEEP_S = 0.008
BLOCKED_AFTER_S = 0.006


def _blocks_behind_sleep(torch, fn, s) -> bool:
    """Queue a GPU sleep, then call: a launcher that synchronises waits it out."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    torch.cuda._sleep(1_000_000)
    end.record()
    end.synchronize()
    per_cycle = start.elapsed_time(end) / 1e3 / 1_000_000
    cycles = int(BLOCKING_SLEEP_S / max(per_cycle, 1e-12))
    torch.cuda._sleep(cycles)
    t0 = time.perf_counter()
    fn(s)
    waited = time.perf_counter() - t0
    torch.cuda.synchronize()
    return waited > BLOCKED_AFTER_S
