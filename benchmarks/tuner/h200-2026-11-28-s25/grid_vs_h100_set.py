"""The H200 set's grid against the H100 set's grid on the same H200: merged picks against unchanged.

    python benchmarks/tuner/h200-2026-11-28-s25/grid_vs_h100_set.py OLD_GRID.duckdb NEW_GRID.duckdb

Session 25: OLD is run eb97846e (kernels/h100_F32F16F16F32 on the H200), NEW run bf5c1b4a
(kernels/h200_F32F16F16F32); the merged picks are where the two manifests name another kernel or
variant. Output: grid_vs_h100_set.txt.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from loss_by_regime import grid_times

ROOT = Path(__file__).resolve().parents[3]


def geomean(xs: list[float]) -> float:
    return math.exp(sum(map(math.log, xs)) / len(xs))


def picks(device: str) -> dict[tuple[int, int, int], tuple]:
    data = json.loads((ROOT / f"kernels/{device}_F32F16F16F32/manifest.json").read_text())
    return {
        (e["m"], e["n"], e["k"]): (e["kernel_name"], sorted(e["variant"].items())) for e in data["configs"]
    }


def main(old_path: str, new_path: str) -> None:
    old, new = grid_times(Path(old_path)), grid_times(Path(new_path))
    h100, h200 = picks("h100"), picks("h200")
    merged = {c for c in h100 if h100[c] != h200[c]}
    print("H200 grids: NEW (the H200 set) against OLD (the H100 set), per config device-time medians")
    for name, configs in (("merged picks", merged), ("unchanged picks", set(old) - merged)):
        cs = [c for c in configs if c in new and c in old]
        print(
            f"{name}: {len(cs)} configs; ours old/new {geomean([old[c][1] / new[c][1] for c in cs]):.3f}; "
            f"best baseline old/new {geomean([old[c][0] / new[c][0] for c in cs]):.3f}; "
            f"ours over the best baseline {geomean([old[c][0] / old[c][1] for c in cs]):.3f} -> "
            f"{geomean([new[c][0] / new[c][1] for c in cs]):.3f}"
        )


if __name__ == "__main__":
    main(*sys.argv[1:3])
