"""What cuBLASLt's auto-tuned winner is on the large shapes where our CUTLASS picks lose most.

    python probe.py CONFIGS_FILE > probe.jsonl

For each M_N_K of CONFIGS_FILE and each layout (nn, tn): every heuristic candidate (up to 8, as the
harness's auto-tuning screens them) with its algorithm attributes (tile id, stages id, split-K,
swizzle, waves) and, from the profiler (CUPTI), the kernels one call launches, by name, with their
mean duration over 20 calls that rotate over input sets spanning >= 2x the L2 (cold L2, as the
harness times). cuBLAS's SM90 kernel names spell the tile, cluster and schedule, which is what
our catalog can copy as data. One JSON object per (config, layout, candidate).
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict

import torch
from cuda_l2_explorer.importer.harness.baselines import CublasBaselines
from torch.profiler import ProfilerActivity, profile

CALLS = 20
MAX_ALGOS = 8


def input_sets(m: int, n: int, k: int, l2_bytes: int) -> list[tuple]:
    per_set = 2 * (m * k + k * n + m * n)
    count = max(2, min(16, -(-2 * l2_bytes // per_set)))
    sets = []
    for _ in range(count):
        a = torch.randn(m, k, device="cuda", dtype=torch.float16)
        b = torch.randn(k, n, device="cuda", dtype=torch.float16)
        sets.append((a, b, b.t().contiguous(), torch.empty(m, n, device="cuda", dtype=torch.float16)))
    return sets


def profile_candidate(lt: CublasBaselines, plan, i: int, layout: str, sets: list[tuple]) -> dict:
    """The kernels one call of candidate i launches: name -> calls and mean device time (us)."""
    stream = torch.cuda.current_stream().cuda_stream

    def call(j: int) -> None:
        a, b, bt, c = sets[j % len(sets)]
        lt.lt(plan, i, a.data_ptr(), (b if layout == "nn" else bt).data_ptr(), c.data_ptr(), stream)

    for j in range(3):
        call(j)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for j in range(CALLS):
            call(j)
        torch.cuda.synchronize()
    kernels: dict[str, list[float]] = defaultdict(list)
    for ev in prof.events():
        if ev.device_type == torch.autograd.DeviceType.CUDA:
            kernels[ev.name].append(ev.device_time_total)
    return {name: {"calls": len(us), "mean_us": sum(us) / len(us)} for name, us in kernels.items()}


def probe_shape(lt: CublasBaselines, m: int, n: int, k: int, l2_bytes: int) -> None:
    sets = input_sets(m, n, k, l2_bytes)
    for layout in ("nn", "tn"):
        plan = lt.lt_prepare(layout, m, n, k, MAX_ALGOS)
        for i in range(plan.n_algos):
            kernels = profile_candidate(lt, plan, i, layout, sets)
            row = {"m": m, "n": n, "k": k, "layout": layout, "candidate": i, **lt.lt_algo_info(plan, i)}
            row["kernels"] = kernels
            row["call_us"] = sum(v["calls"] * v["mean_us"] for v in kernels.values()) / CALLS
            print(json.dumps(row), flush=True)


def main(path: str) -> None:
    l2_bytes = torch.cuda.get_device_properties(0).L2_cache_size
    lines = [line for line in open(path).read().splitlines() if not line.startswith("#")]
    shapes = [tuple(int(x) for x in tok.split("_")) for tok in " ".join(lines).replace(",", " ").split()]
    lt = CublasBaselines()
    for m, n, k in shapes:
        probe_shape(lt, m, n, k, l2_bytes)
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main(sys.argv[1])
