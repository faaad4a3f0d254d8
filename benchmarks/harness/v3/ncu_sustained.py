"""torch.matmul calls back to back, for Nsight Compute to profile the last few at the sustained clock.

    ncu --clock-control none --cache-control all --launch-skip WARM --launch-count COUNT -k regex:nvjet \
        --metrics gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second --csv \
        python3 ncu_sustained.py M N K WARM COUNT

ncu's usual run times a kernel alone, after a pause, at the boost clock; harness 3's device time is
what calls back to back cost, power-limited at the compute-bound extremes (REPORT.md). Here WARM
unprofiled calls run first, back to back, so the COUNT profiled ones start on a GPU that has been
running flat out.
"""

from __future__ import annotations

import sys

import torch


def main(m: int, n: int, k: int, warm: int, count: int) -> None:
    a = torch.randn(m, k, device="cuda", dtype=torch.half)
    b = torch.randn(k, n, device="cuda", dtype=torch.half)
    c = torch.empty(m, n, device="cuda", dtype=torch.half)
    for _ in range(warm + count):
        torch.matmul(a, b, out=c)
    torch.cuda.synchronize()


if __name__ == "__main__":
    main(*(int(x) for x in sys.argv[1:6]))
