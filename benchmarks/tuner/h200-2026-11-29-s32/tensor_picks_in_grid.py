"""The tensor- and bulk-fed tiny picks of the H200 set in a grid: ours against the best of the seven
baselines (offline device time, unpadded medians: loss_by_regime.grid_times), one line a pick,
then the geomean.

    python benchmarks/tuner/h200-2026-11-29-s32/tensor_picks_in_grid.py MEASUREMENTS RUN_PREFIX \
        > benchmarks/tuner/h200-2026-11-29-s32/tensor_picks_in_grid.txt

MEASUREMENTS: a grid store (.duckdb) or the bundled measurements.parquet.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from loss_by_regime import grid_times

MANIFEST = "kernels/h200_F32F16F16F32/manifest.json"


def main(measurements: str, run_prefix: str) -> None:
    configs = json.loads(Path(MANIFEST).read_text())["configs"]
    picks = {(e["m"], e["n"], e["k"]): e["kernel_name"] for e in configs}
    times = grid_times(Path(measurements), run_prefix)
    print(
        f"# the tensor- and bulk-fed tiny picks in grid {run_prefix} (offline device time, cold L2): "
        "ours / best of the seven baselines"
    )
    print("config kernel ours_us best_baseline_us speedup")
    logs = []
    for (m, n, k), name in sorted(picks.items()):
        if not name.startswith(("tinyt", "tinyb")):
            continue
        best, ours = (t * 1e6 for t in times[(m, n, k)])
        logs.append(math.log(best / ours))
        print(f"{m}x{n}x{k} {name} {ours:.2f} {best:.2f} {best / ours:.3f}")
    print(f"geomean {math.exp(sum(logs) / len(logs)):.3f} over {len(logs)}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
