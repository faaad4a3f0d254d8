"""The H200 set's grid against the H100 set's grid on the same H200: merged picks against unchanged.

    python benchmarks/tuner/h200-2026-11-28-s25/grid_vs_h100_set.py OLD_GRID NEW_GRID
        [OLD_MANIFEST NEW_MANIFEST [OLD_RUN]]

Session 25: OLD is run eb97846e (kernels/h100_F32F16F16F32 on the H200), NEW run bf5c1b4a
(kernels/h200_F32F16F16F32); the merged picks are where the two manifests name another kernel or
variant. Output: grid_vs_h100_set.txt. Session 26 compares two versions of the H200 set: the
manifests as files, OLD_GRID the bundled measurements parquet with OLD_RUN a run id prefix.
A grid is a .duckdb store or a measurements .parquet.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from cuda_l2_explorer.tuner.manifest import pick_key
from loss_by_regime import grid_times

ROOT = Path(__file__).resolve().parents[3]


def geomean(xs: list[float]) -> float:
    return math.exp(sum(map(math.log, xs)) / len(xs))


def picks(manifest: Path) -> dict[tuple[int, int, int], tuple]:
    return {(e["m"], e["n"], e["k"]): pick_key(e) for e in json.loads(manifest.read_text())["configs"]}


def main(
    old_path: str,
    new_path: str,
    old_manifest: str = str(ROOT / "kernels/h100_F32F16F16F32/manifest.json"),
    new_manifest: str = str(ROOT / "kernels/h200_F32F16F16F32/manifest.json"),
    old_run: str = "",
) -> None:
    old, new = grid_times(Path(old_path), old_run), grid_times(Path(new_path))
    before, after = picks(Path(old_manifest)), picks(Path(new_manifest))
    merged = {c for c in before if before[c] != after[c]}
    print(f"grids: NEW ({new_manifest}) against OLD ({old_manifest}), per config device-time medians")
    for name, configs in (("merged picks", merged), ("unchanged picks", set(old) - merged)):
        cs = [c for c in configs if c in new and c in old]
        print(
            f"{name}: {len(cs)} configs; ours old/new {geomean([old[c][1] / new[c][1] for c in cs]):.3f}; "
            f"best baseline old/new {geomean([old[c][0] / new[c][0] for c in cs]):.3f}; "
            f"ours over the best baseline {geomean([old[c][0] / old[c][1] for c in cs]):.3f} -> "
            f"{geomean([new[c][0] / new[c][1] for c in cs]):.3f}"
        )


if __name__ == "__main__":
    main(*sys.argv[1:])
