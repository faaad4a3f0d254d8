"""What a user following the lookup gets on a GPU's grid: for every config of a grid run, the answer
`cuda-l2-explorer lookup M N K --gpu GPU --mode offline` gives (a kernel, or the baseline to keep)
and that answer's measured speedup over the best of the seven baselines at the config (a kept
baseline: the best baseline's time over the kept one's). Issue 15's target: never below 0.98.

    python benchmarks/tuner/recommendation_floor.py RUN_PREFIX [--gpu h200] [--set SET]

Reads the store the CLI reads (the bundled dataset beside an empty user store).
"""

from __future__ import annotations

import argparse
import math
import tempfile
from collections import Counter
from pathlib import Path

from cuda_l2_explorer.db.shapes import Shape
from cuda_l2_explorer.engine.lookup import lookup, open_lookup_store


def grid_shapes(store, run_prefix: str) -> list[Shape]:
    store.use_tables("measurements")  # the all_ view: the user's rows and the bundled ones
    rows = store.con.execute(
        "SELECT DISTINCT m, n, k FROM all_measurements WHERE run_id LIKE ? ORDER BY m, n, k",
        [run_prefix + "%"],
    ).fetchall()
    return [Shape(m, n, k) for m, n, k in rows]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run", help="the grid run's id or a prefix of it")
    ap.add_argument("--gpu", default="h200")
    ap.add_argument("--set", dest="set_", default=None, help="answer from this set only (default: all)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = open_lookup_store(Path(tmp) / "empty.duckdb")
        ratios: dict[Shape, float] = {}
        kinds: Counter[str] = Counter()
        for shape in grid_shapes(store, args.run):
            result = lookup(store, shape, gpu=args.gpu, mode="offline", set_=args.set_, machine_gpu=None)
            win = result.winner
            if win is None:
                kinds["no answer"] += 1
                continue
            c = win.candidate
            if result.keep_baseline:
                kinds["keep a baseline"] += 1
                ratios[shape] = (c.best_baseline_s or c.kernel_s) / c.kernel_s if c.kernel_s else 1.0
            else:
                kinds[f"{win.tier} kernel of {c.set_id}"] += 1
                ratios[shape] = c.speedup_best if c.speedup_best else math.nan
    values = [r for r in ratios.values() if not math.isnan(r)]
    geo = math.exp(sum(math.log(r) for r in values) / len(values))
    print(f"grid run {args.run} on {args.gpu}, offline device time: {len(values)} configs answered")
    for kind, count in kinds.most_common():
        print(f"  {count:5}  {kind}")
    print(
        f"answer over the best baseline: geomean {geo:.3f}, min {min(values):.3f}, "
        f"below 0.98: {sum(r < 0.98 for r in values)}, below 1.0: {sum(r < 1.0 for r in values)}"
    )
    worst = sorted(ratios.items(), key=lambda kv: kv[1])[:8]
    print("lowest:", ", ".join(f"{s} {r:.3f}" for s, r in worst))


if __name__ == "__main__":
    main()
