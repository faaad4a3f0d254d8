"""Issue 14: are the last timing-mismatch flags real gaps between a graph's kernels?

    python gap_probe.py OUT.json

After session 15's cross-check (h100-throughput-2026-11-24/README.md) calls of 12-45 us still show
graph time 7-15% above CUPTI's kernel durations, for every baseline alike. For torch.matmul at
flagged shapes (and two controls), this times graphs of N calls (N = 4, 16, 64) replayed back to
back between events, and CUPTI's kernel durations of the same graph's replays right after, with
cold inputs (rotating sets spanning >= 2x L2, as harness 3) and warm ones (one set). If the
per-call excess (graph - CUPTI) stays the same for every N and with warm inputs, it is a gap each
call pays between kernels (launch of the next node, the previous kernel's tail), which a
graph-captured model pays too: the flag then reports a property of the kernels, not a harness
fault. If it shrinks with N, it is a per-replay cost the check should spread.
"""

from __future__ import annotations

import json
import sys
import time

import torch
from cuda_l2_explorer.importer.harness.audit import trace_events
from replay_cupti_probe import cold_inputs
from torch.profiler import ProfilerActivity, profile

SHAPES = [
    (4096, 8192, 128),
    (1024, 12288, 64),
    (2048, 16384, 64),
    (8192, 4096, 256),
    (64, 64, 64),
    (4096, 4096, 4096),
]
CALLS = (4, 16, 64)
TIMED_S = 0.2


def graph_of(calls: int, inputs: list, out) -> torch.cuda.CUDAGraph:
    # Eager calls on a side stream first, as torch's graph docs ask: cuBLAS creates its handle and
    # workspace there (creating them during capture fails with CUBLAS_STATUS_NOT_INITIALIZED).
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for a, b in inputs[:calls]:
            torch.matmul(a, b, out=out)
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for j in range(calls):
            a, b = inputs[j % len(inputs)]
            torch.matmul(a, b, out=out)
    return graph


def per_call(graph, calls: int) -> tuple[float, float]:
    """Events over back-to-back replays for ~TIMED_S, then CUPTI over three replays (us a call)."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(3):
        graph.replay()
    torch.cuda.synchronize()
    replays, t0 = 0, time.perf_counter()
    start.record()
    while time.perf_counter() - t0 < TIMED_S:
        graph.replay()
        replays += 1
    end.record()
    end.synchronize()
    graph_us = start.elapsed_time(end) * 1e3 / (replays * calls)
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(3):
            graph.replay()
        torch.cuda.synchronize()
    kernels = [e.get("dur", 0) for e in trace_events(prof) if e.get("cat") == "kernel"]
    return graph_us, sum(kernels) / (3 * calls)


def main(path: str) -> None:
    rows = []
    for m, n, k in SHAPES:
        sets, out = cold_inputs(m, n, k)
        for label, inputs in (("cold", sets), ("warm", sets[:1])):
            for calls in CALLS:
                graph = graph_of(calls, inputs, out)
                graph_us, cupti_us = per_call(graph, calls)
                row = {
                    "shape": [m, n, k],
                    "l2": label,
                    "calls": calls,
                    "graph_us": graph_us,
                    "cupti_us": cupti_us,
                }
                row["excess_us"] = graph_us - cupti_us
                rows.append(row)
                print(json.dumps(row), flush=True)
                del graph
        del sets, out
        torch.cuda.empty_cache()
    with open(path, "w") as fh:
        json.dump({"device": torch.cuda.get_device_name(0), "rows": rows}, fh, indent=1)


if __name__ == "__main__":
    main(sys.argv[1])
