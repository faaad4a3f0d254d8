"""The tensor- and bulk-fed tiny picks of the H200 set in a grid store: ours against the best of
the seven baselines (offline device time, unpadded medians), one line a pick, then the geomean.

    python benchmarks/tuner/h200-2026-11-29-s32/tensor_picks_in_grid.py GRID_STORE RUN_PREFIX \
        > benchmarks/tuner/h200-2026-11-29-s32/tensor_picks_in_grid.txt
"""

from __future__ import annotations

import json
import math
import sys

import duckdb

MANIFEST = "kernels/h200_F32F16F16F32/manifest.json"


def main(store: str, run_prefix: str) -> None:
    picks = {(e["m"], e["n"], e["k"]): e["kernel_name"] for e in json.load(open(MANIFEST))["configs"]}
    con = duckdb.connect(store, read_only=True)
    rows = con.execute(
        "SELECT m, n, k, implementation, median FROM measurements WHERE starts_with(run_id, ?) "
        "AND metric = 'device_time' AND NOT padded AND status = 'ok'",
        [run_prefix],
    ).fetchall()
    us: dict[tuple[int, int, int], dict[str, float]] = {}
    for m, n, k, impl, seconds in rows:
        us.setdefault((m, n, k), {})[impl] = seconds * 1e6
    print(
        f"# the tensor- and bulk-fed tiny picks in grid {run_prefix} (offline device time, cold L2): "
        "ours / best of the seven baselines"
    )
    print("config kernel ours_us best_baseline_us speedup")
    logs = []
    for key, name in sorted(picks.items()):
        if not name.startswith(("tinyt", "tinyb")):
            continue
        times = us[key]
        ours, best = times["kernel"], min(t for impl, t in times.items() if impl != "kernel")
        logs.append(math.log(best / ours))
        m, n, k = key
        print(f"{m}x{n}x{k} {name} {ours:.2f} {best:.2f} {best / ours:.3f}")
    print(f"geomean {math.exp(sum(logs) / len(logs)):.3f} over {len(logs)}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
