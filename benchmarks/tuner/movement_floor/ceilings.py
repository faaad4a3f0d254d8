"""Per regime, how far any kernel could get past the best baseline by the measured movement floor
(issue 15): best baseline (a bundled grid) over the fastest of movement_floor.cu's move_u* rows.

    python benchmarks/tuner/movement_floor/ceilings.py FLOOR_CSV MEASUREMENTS RUN_PREFIX

The floor and the grid were timed in different processes with different rotations (the grid's
sets also hold B column-major), so the floor is carried over through cuBLAS's default algorithm,
measured in both: ceiling = (best baseline / cuBLAS-nn, in the grid) x (cuBLAS / floor, in the
floor run). Prints per regime (db.shapes, H200 roofline): configs, the geomean ceiling, how many
configs have a ceiling under 1.10, ours over the best baseline, and the grid's cuBLAS-nn over the
floor run's (how much colder the grid's rotation is); then the ten lowest ceilings.
"""

from __future__ import annotations

import csv
import math
import sys
from collections import defaultdict
from pathlib import Path

import duckdb
from cuda_l2_explorer.db.shapes import REGIMES, Shape, regime
from cuda_l2_explorer.db.views import BASELINES

MOVES = ("move_u1", "move_u2", "move_u4", "move_u8")


def floors(path: Path) -> dict[tuple[int, int, int], dict[str, float]]:
    rows: dict[tuple[int, int, int], dict[str, float]] = defaultdict(dict)
    with path.open() as f:
        for r in csv.DictReader(f):
            rows[(int(r["m"]), int(r["n"]), int(r["k"]))][r["impl"]] = float(r["median_us"]) * 1e-6
    return rows


def grid(path: str, run: str) -> dict[tuple[int, int, int], tuple[float, float, float]]:
    names = ", ".join(f"'{b}'" for b in BASELINES)
    rows = (
        duckdb.connect()
        .execute(
            f"SELECT m, n, k, min(median) FILTER (WHERE implementation IN ({names})), "
            "min(median) FILTER (WHERE implementation = 'cuBLAS-nn'), "
            "min(median) FILTER (WHERE implementation = 'kernel') FROM read_parquet(?) "
            "WHERE metric = 'device_time' AND status = 'ok' AND NOT padded AND starts_with(run_id, ?) "
            "GROUP BY ALL",
            [path, run],
        )
        .fetchall()
    )
    return {(m, n, k): (best, nn, ours) for m, n, k, best, nn, ours in rows if best and nn and ours}


def main(floor_csv: str, measurements: str, run: str) -> None:
    measured = grid(measurements, run)
    by_regime: dict[str, list[tuple[float, float, float]]] = defaultdict(list)
    lowest = []
    for config, d in floors(Path(floor_csv)).items():
        if config not in measured:
            continue
        best, nn, ours = measured[config]
        ceiling = best / nn * d["cublas"] / min(d[m] for m in MOVES)
        by_regime[regime(Shape(*config), "h200")].append((ceiling, best / ours, nn / d["cublas"]))
        lowest.append((ceiling, config))

    def gm(values: list[float]) -> float:
        return math.exp(sum(map(math.log, values)) / len(values))

    header = (
        "regime (H200)",
        "configs",
        "ceiling by the movement floor (geomean)",
        "ceiling < 1.10",
        "ours now",
    )
    print("| " + " | ".join((*header, "grid cuBLAS-nn / floor run's")) + " |")
    print("|---|---|---|---|---|---|")
    for name in REGIMES:
        rows = by_regime.get(name)
        if rows:
            print(
                f"| {name} | {len(rows)} | {gm([r[0] for r in rows]):.3f} | {sum(r[0] < 1.10 for r in rows)} "
                f"| {gm([r[1] for r in rows]):.3f} | {gm([r[2] for r in rows]):.3f} |"
            )
    print("lowest ceilings:", ", ".join(f"{m}x{n}x{k} {c:.3f}" for c, (m, n, k) in sorted(lowest)[:10]))


if __name__ == "__main__":
    main(*sys.argv[1:4])
