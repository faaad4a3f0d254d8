"""Why isolated calls and ncu disagree with graph replay: one process, torch.matmul, printed as JSON.

    TEARDOWN_CUPTI=1 python3 benchmarks/harness/v3/isolated_probe.py

For 64^3 (launch-bound) the isolated call (one call between events after a synchronize) is timed
in a fresh process, after CUDA-graph replays, after a torch.profiler session, and as a one-call
graph; for 4096^3 and 8192^3 (compute-bound) the per-call time of back-to-back graph replays is
set beside one call after an idle pause, with the SM clock nvidia-smi reads during each.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import time

os.environ.setdefault("TEARDOWN_CUPTI", "1")
import torch


def sm_clock() -> int:
    out = subprocess.run(
        ["nvidia-smi", "--query-gpu=clocks.sm", "--format=csv,noheader,nounits"],
        capture_output=True,
        text=True,
    )
    return int(out.stdout.split()[0])


def operands(n: int, sets: int = 1):
    return [
        (
            torch.randn(n, n, device="cuda", dtype=torch.half),
            torch.randn(n, n, device="cuda", dtype=torch.half),
            torch.empty(n, n, device="cuda", dtype=torch.half),
        )
        for _ in range(sets)
    ]


def isolated(fn, repeats: int = 30, pause_s: float = 0.0) -> dict:
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    device, host = [], []
    for _ in range(repeats):
        torch.cuda.synchronize()
        if pause_s:
            time.sleep(pause_s)
        start.record()
        t0 = time.perf_counter()
        fn()
        end.record()
        torch.cuda.synchronize()
        host.append(time.perf_counter() - t0)
        device.append(start.elapsed_time(end) * 1e3)
    return {"device_us": statistics.median(device), "host_us": statistics.median(host) * 1e6}


def graph_of(fn, calls: int):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(calls):
            fn()
    return g


def replay_per_call(g, calls: int, replays: int) -> float:
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(replays):
        g.replay()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) * 1e3 / (calls * replays)


def main() -> None:
    out: dict = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__}
    ((a, b, c),) = operands(64)
    call = lambda: torch.matmul(a, b, out=c)  # noqa: E731
    for _ in range(20):
        call()
    out["64: fresh process"] = isolated(call)
    g = graph_of(call, 8)
    out["64: graph of 8, per call"] = replay_per_call(g, 8, 200)
    out["64: after graph replays"] = isolated(call)
    one = graph_of(call, 1)
    out["64: one-call graph replayed alone"] = isolated(one.replay)
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]):
        for _ in range(4):
            call()
        torch.cuda.synchronize()
    out["64: after a profiler session"] = isolated(call)
    for n in (4096, 8192):
        sets = operands(n, 4)
        fns = [lambda x=x: torch.matmul(x[0], x[1], out=x[2]) for x in sets]
        for f in fns:
            f()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for f in fns * 2:
                f()
        replay_per_call(g, 8, 5)
        t_end = time.time() + 2.0
        clocks, per_call = [], []
        while time.time() < t_end:
            per_call.append(replay_per_call(g, 8, 10))
            clocks.append(sm_clock())
        out[f"{n}: back-to-back graph replays, per call"] = {
            "us": statistics.median(per_call),
            "sm_mhz": statistics.median(clocks),
        }
        time.sleep(1.0)
        single = graph_of(fns[0], 1)
        out[f"{n}: one call after a 0.2 s pause (one-call graph)"] = isolated(single.replay, 8, pause_s=0.2)
        out[f"{n}: sm clock idle"] = sm_clock()
        del g, single, sets, fns
        torch.cuda.empty_cache()
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
