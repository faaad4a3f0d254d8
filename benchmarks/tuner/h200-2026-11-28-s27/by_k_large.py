"""Ours over the best baseline by K on large M x N (M, N >= 4096), two grids side by side.

    git show 10883b1:db/bundled/measurements.parquet >/tmp/m0188.parquet
    python benchmarks/tuner/h200-2026-11-28-s27/by_k_large.py /tmp/m0188.parquet 0188a20e \
        db/bundled/measurements.parquet 64e9f81d
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from loss_by_regime import grid_times


def speedup(times: dict, configs: list) -> float:
    """Geomean of best baseline / ours over ``configs``."""
    return math.exp(sum(math.log(times[c][0] / times[c][1]) for c in configs) / len(configs))


def main(old_path: str, old_run: str, new_path: str, new_run: str) -> None:
    old, new = grid_times(Path(old_path), old_run), grid_times(Path(new_path), new_run)
    print(f"K on M, N >= 4096: ours over the best baseline (geomean), grids {old_run} and {new_run}")
    for k in sorted({c[2] for c in old}):
        configs = [c for c in old if c[2] == k and c[0] >= 4096 and c[1] >= 4096]
        print(f"| {k} | {len(configs)} | {speedup(old, configs):.3f} | {speedup(new, configs):.3f} |")


if __name__ == "__main__":
    main(*sys.argv[1:5])
