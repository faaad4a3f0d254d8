"""The reference system's H100 configs we measure: a stratified sample of SPEC section 3's grid.

Issue #17 asks for at least 250 configs stratified over the regimes. Each regime (db/shapes.py:
tiny, skinny, small-K, large) gets a share of ``--total`` proportional to its size in the grid,
drawn with a fixed seed, plus the 20 harness-3 validation configs. The list is written in a
round-robin order over the regimes, so that any prefix of it (a chunk a device call finished) is
itself stratified.

    python benchmarks/refset/sample.py [--total 300] [--seed 17] > benchmarks/refset/configs.txt
"""

from __future__ import annotations

import argparse
import random
from itertools import zip_longest
from pathlib import Path

from cuda_l2_explorer.db.shapes import REGIMES, Shape, grid_shapes, parse_mnk, regime

VALIDATION = Path(__file__).parents[1] / "harness" / "v3" / "configs.txt"


def validation_configs() -> list[Shape]:
    words = " ".join(line for line in VALIDATION.read_text().splitlines() if not line.startswith("#"))
    return [parse_mnk(w) for w in words.split()]


def stratified(total: int, seed: int) -> list[Shape]:
    grid = grid_shapes()
    by_regime = {r: [s for s in grid if regime(s) == r] for r in REGIMES}
    fixed = validation_configs()
    rng = random.Random(seed)
    per_regime: dict[str, list[Shape]] = {}
    for r, shapes in by_regime.items():
        share = round(total * len(shapes) / len(grid))
        chosen = [s for s in fixed if regime(s) == r]
        rest = [s for s in shapes if s not in chosen]
        chosen += rng.sample(rest, max(0, share - len(chosen)))
        per_regime[r] = chosen
    order = [s for group in zip_longest(*per_regime.values()) for s in group if s is not None]
    return order


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--total", type=int, default=300)
    parser.add_argument("--seed", type=int, default=17)
    args = parser.parse_args()
    shapes = stratified(args.total, args.seed)
    counts = {r: sum(regime(s) == r for s in shapes) for r in REGIMES}
    print(f"# {len(shapes)} configs, seed {args.seed}: " + ", ".join(f"{r} {n}" for r, n in counts.items()))
    print("# written by benchmarks/refset/sample.py; round-robin over the regimes (any prefix is stratified)")
    for i in range(0, len(shapes), 10):
        print(" ".join("_".join(map(str, s.astuple())) for s in shapes[i : i + 10]))


if __name__ == "__main__":
    main()
