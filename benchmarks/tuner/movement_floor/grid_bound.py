"""The best grid any kernel library could reach by the bounds measured on this hardware (issue 15:
whether the 1.10 target over the best baseline is reachable at all, and where it is not).

    python benchmarks/tuner/movement_floor/grid_bound.py MEASUREMENTS RUN_PREFIX FLOOR_CSV... [--busy CSV]

Per config of a bundled grid (device time, best of the seven baselines), the ceiling of our
speedup is the lowest of:
- the analytic bound (h200-2026-11-28-s28/regime_ceilings.py: bytes at the measured copy rate,
  the empty kernel's launch floor, 2MNK at the tensor peak at the highest clock);
- the movement floor (the fastest move_u* row of a FLOOR_CSV: every byte moved once, no math),
  carried over through cuBLAS as ceilings.py does;
- the tiled movement (the fastest bulk_*, stream_* or streamr_* row: a tiling's panels read, no
  math; a split row without its reduction, which a kernel may do another way: ceilings.tiled_rows),
  over the tilings measured only: another tiling could move less;
- for the large regime from K = 1024 up, 1 / 0.982: the best baseline's tensor pipe was busy
  98.2% of the cycles at 12288x12288x2048 (h200-2026-11-28-s28/call3/ncu3), so at the same clock
  no kernel takes more than 1.8% fewer (one config measured, applied to its neighbours; on the
  H200 only, where it was measured);
- with ``--busy CSV`` (m,n,k,busy: h100-2026-12-08-s42/large_bound.py from Nsight Compute's profile
  of each config's best baseline), the same bound per measured config, and for the run GPU's
  other large configs from K = 1024 up that of the nearest measured one (log2 distance of M, N, K),
  named apart ("tensor busy (nearest)"): a neighbour's busy share is an estimate, not a measurement.
The regimes and the copy rate are those of the run's GPU (its row in runs.parquet beside
MEASUREMENTS); FLOOR_CSVs should come from the same GPU (movement_floor/run.sh names it in gpu.csv).
Printed per regime: configs, ours now, the geomean ceiling, configs whose ceiling is under 1.10,
and which bound was the lowest how often; then the whole grid's geomean if every config reached its
ceiling, the most any library could show on this grid by these measurements.
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "h200-2026-11-28-s28")]
from ceilings import MOVES, floors, gm, grid, run_gpu, tiled_rows  # noqa: E402
from cuda_l2_explorer.db.shapes import REGIMES, Shape, regime  # noqa: E402
from regime_ceilings import ceiling_seconds  # noqa: E402

LARGE_TENSOR_BUSY = {"h200": 0.982}  # nvjet's tensor pipe at 12288x12288x2048 (session 28, ncu)
TARGET = 1.10
Config = tuple[int, int, int]


def config_bounds(
    config: tuple[int, int, int],
    best: float,
    nn: float | None,
    floor_rows: list[dict[str, float]],
    gpu: str = "h200",
    busy: dict[tuple[int, int, int], float] | None = None,
) -> dict[str, float]:
    """Every ceiling that applies to the config, by name (the lowest is its ceiling); ``busy``:
    the best baseline's tensor-pipe share at the configs where it was profiled (--busy)."""
    shape = Shape(*config)
    bounds = {"analytic": best / ceiling_seconds(shape, gpu)}
    if busy and config in busy:
        bounds["tensor busy"] = 1 / busy[config]
    elif regime(shape, gpu) == "large" and config[2] >= 1024:
        if busy:
            bounds["tensor busy (nearest)"] = 1 / busy[nearest(config, busy)]
        elif gpu in LARGE_TENSOR_BUSY:
            bounds["tensor busy"] = 1 / LARGE_TENSOR_BUSY[gpu]
    for rows in floor_rows:
        if nn is None or "cublas" not in rows:
            continue
        carry = best / nn * rows["cublas"]
        moves = [rows[m] for m in MOVES if m in rows]
        tiled = list(tiled_rows(rows).values())
        # Across floor runs the fastest movement counts (a bound must hold for every kernel).
        if moves:
            bounds["movement"] = max(bounds.get("movement", 0.0), carry / min(moves))
        if tiled:
            bounds["tiled movement"] = max(bounds.get("tiled movement", 0.0), carry / min(tiled))
    return bounds


def nearest(config: Config, measured: dict[Config, float]) -> Config:
    """The measured config nearest in log2 space (M, N, K alike), the first in sorted order on a tie."""
    return min(
        sorted(measured), key=lambda c: sum(math.log2(a / b) ** 2 for a, b in zip(c, config, strict=True))
    )


def read_busy(path: str) -> dict[Config, float]:
    with open(path) as f:
        return {(int(r["m"]), int(r["n"]), int(r["k"])): float(r["busy"]) for r in csv.DictReader(f)}


def main(measurements: str, run: str, floor_csvs: list[str], busy_csv: str | None = None) -> None:
    busy = read_busy(busy_csv) if busy_csv else None
    measured = grid(measurements, run)  # (best baseline, cuBLAS-nn, ours) per config
    gpu = run_gpu(measurements, run)
    floor_by_csv = [floors(Path(p)) for p in floor_csvs]
    per_regime: dict[str, list[tuple[float, float]]] = defaultdict(list)
    lowest: dict[str, Counter] = defaultdict(Counter)
    for config, (best, nn, ours) in measured.items():
        bounds = config_bounds(config, best, nn, [f[config] for f in floor_by_csv if config in f], gpu, busy)
        name = min(bounds, key=bounds.__getitem__)
        r = regime(Shape(*config), gpu)
        per_regime[r].append((bounds[name], best / ours))
        lowest[r][name] += 1
    print(
        f"| regime ({gpu.upper()}) | configs | ours now | ceiling (geomean) | ceiling < 1.10 | lowest bound |"
    )
    print("|---|---|---|---|---|---|")
    everything = []
    for r in REGIMES:
        rows = per_regime.get(r)
        if not rows:
            continue
        everything += rows
        which = ", ".join(f"{n} {c}" for n, c in lowest[r].most_common())
        print(
            f"| {r} | {len(rows)} | {gm([o for _, o in rows]):.3f} | {gm([c for c, _ in rows]):.3f} "
            f"| {sum(c < TARGET for c, _ in rows)} | {which} |"
        )
    print(
        f"\nall {len(everything)} configs: ours {gm([o for _, o in everything]):.3f}; every config at its "
        f"ceiling {gm([c for c, _ in everything]):.3f} (the target: {TARGET})"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="the grid's ceilings by the bounds measured so far")
    parser.add_argument("measurements")
    parser.add_argument("run", help="a run-id prefix")
    parser.add_argument("floor_csvs", nargs="*", metavar="FLOOR_CSV")
    parser.add_argument("--busy", help="m,n,k,busy: the best baselines' tensor-pipe shares (large_bound.py)")
    args = parser.parse_intermixed_args()  # --busy before or after the floor CSVs
    main(args.measurements, args.run, args.floor_csvs, args.busy)
