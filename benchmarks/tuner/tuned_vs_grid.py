"""A re-search's picks beside a grid run, config by config (device time, best of the seven baselines).

    python benchmarks/tuner/tuned_vs_grid.py MANIFEST MEASUREMENTS [--run RUN_ID]

MANIFEST is the manifest a `tune` run wrote (its ``time_us`` per config); MEASUREMENTS and
``--run`` as in loss_by_regime.py (the grid's raw rows). Prints, per config the manifest holds, the
grid's best baseline, the grid's time of our set, the re-search's time, its kernel and splits,
then the geomeans of best baseline / ours before and after taking the faster of the two. The
re-search and the grid are different runs: a screening figure, confirmed by the next grid.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from loss_by_regime import grid_times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("manifest", type=Path)
    ap.add_argument("measurements", type=Path)
    ap.add_argument("--run", default="", help="a run id (or its prefix)")
    args = ap.parse_args()
    grid = grid_times(args.measurements, args.run)
    before, after, beats = [], [], 0
    print(f"{'config':>18} {'baseline':>9} {'grid ours':>9} {'tuned':>8} {'ratio':>6}  kernel")
    for e in json.loads(args.manifest.read_text())["configs"]:
        shape = (e["m"], e["n"], e["k"])
        if shape not in grid:
            continue
        base, ours = (t * 1e6 for t in grid[shape])
        tuned = e["time_us"]
        before.append(math.log(base / ours))
        after.append(math.log(base / min(ours, tuned)))
        beats += tuned < base
        print(
            f"{'x'.join(map(str, shape)):>18} {base:9.2f} {ours:9.2f} {tuned:8.2f} {base / tuned:6.2f}  "
            f"{e['kernel_name']} x{e['variant']['splits']}"
        )
    n = len(before)
    if not n:
        raise SystemExit("no config of the manifest is in the grid run")
    print(
        f"{n} configs: geomean best baseline / ours {math.exp(sum(before) / n):.3f} -> "
        f"{math.exp(sum(after) / n):.3f} (the faster of grid and re-search); "
        f"the re-search beats the grid's best baseline on {beats}"
    )


if __name__ == "__main__":
    main()
