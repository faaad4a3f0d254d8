"""Issue 14: why graph replay is slower than CUPTI's kernel time on large shapes (MISMATCH.md).

    python replay_cupti_probe.py OUT.json    (beside: nvidia-smi logging clocks and power)

For torch.matmul at each shape, over rotating input sets spanning >= 2x L2 (cold, as harness 3):
- ``graph_us``: per-call time of back-to-back replays of a captured graph between two events
  (harness 3's device time), ~1 s of replays after a ~1 s warm-up;
- ``cupti_in_replay_us``: CUPTI's kernel durations of the calls inside replays of that same graph,
  right after (the same sustained state);
- ``cupti_eager_us``: CUPTI's kernel durations of 4 eager calls after a 0.5 s pause (what the
  harness's cross-check takes today).
Phase start times (``time.time()``) are recorded so that the nvidia-smi log can be read against them.
"""

from __future__ import annotations

import json
import sys
import time

import torch
from cuda_l2_explorer.importer.harness.audit import trace_events
from torch.profiler import ProfilerActivity, profile

SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (2048, 2048, 2048), (16384, 4096, 4096)]
CALLS_PER_GRAPH = 8


def kernel_us(prof, calls: int) -> float:
    """Summed duration of the GPU kernels in a profile (its Chrome trace, as the harness reads it),
    per call (us)."""
    return sum(e.get("dur", 0) for e in trace_events(prof) if e.get("cat") == "kernel") / calls


def cold_inputs(m: int, n: int, k: int) -> tuple[list, torch.Tensor]:
    """Input sets (A, B) spanning >= 2x the L2 (at least two; cold, as harness 3) and an output."""
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    sets = max(2, -(-2 * l2 // (2 * (m * k + k * n))))
    inputs = [
        (
            torch.randn(m, k, device="cuda", dtype=torch.float16),
            torch.randn(k, n, device="cuda", dtype=torch.float16),
        )
        for _ in range(sets)
    ]
    return inputs, torch.empty(m, n, device="cuda", dtype=torch.float16)


def probe(m: int, n: int, k: int, phases: list) -> dict:
    inputs, out = cold_inputs(m, n, k)
    sets = len(inputs)
    calls = sets * -(-CALLS_PER_GRAPH // sets)
    for a, b in inputs:
        torch.matmul(a, b, out=out)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for j in range(calls):
            a, b = inputs[j % sets]
            torch.matmul(a, b, out=out)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    def replay_for(seconds: float) -> tuple[float, int]:
        t0, replays = time.perf_counter(), 0
        start.record()
        while time.perf_counter() - t0 < seconds:
            for _ in range(4):
                graph.replay()
            replays += 4
            end.record()
            end.synchronize()
        return start.elapsed_time(end) * 1e3 / (replays * calls), replays

    label = f"{m}x{n}x{k}"
    phases.append((time.time(), label, "warm-up replays"))
    replay_for(1.0)
    phases.append((time.time(), label, "timed replays"))
    graph_us, replays = replay_for(1.0)
    phases.append((time.time(), label, "CUPTI during replays"))
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(4):
            graph.replay()
        torch.cuda.synchronize()
    in_replay = kernel_us(prof, 4 * calls)
    phases.append((time.time(), label, "pause, then CUPTI over 4 eager calls"))
    time.sleep(0.5)
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for j in range(4):
            a, b = inputs[j % sets]
            torch.matmul(a, b, out=out)
        torch.cuda.synchronize()
    eager = kernel_us(prof, 4)
    phases.append((time.time(), label, "done"))
    return {
        "shape": label,
        "sets": sets,
        "calls_per_graph": calls,
        "timed_replays": replays,
        "graph_us": round(graph_us, 2),
        "cupti_in_replay_us": round(in_replay, 2),
        "cupti_eager_us": round(eager, 2),
        "graph_over_cupti_in_replay": round(graph_us / in_replay, 4),
        "graph_over_cupti_eager": round(graph_us / eager, 4),
    }


def main(path: str) -> None:
    torch.backends.cuda.matmul.allow_tf32 = False
    phases: list = []
    results = [probe(m, n, k, phases) for m, n, k in SHAPES]
    for r in results:
        print(json.dumps(r))
    with open(path, "w") as f:
        json.dump({"gpu": torch.cuda.get_device_name(0), "results": results, "phases": phases}, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1])
