"""Per regime, how far any kernel could get past the best baseline by the measured movement floor
(issue 15): best baseline (a bundled grid) over the fastest of movement_floor.cu's move_u* rows.

    python benchmarks/tuner/movement_floor/ceilings.py FLOOR_CSV MEASUREMENTS RUN_PREFIX

The floor and the grid were timed in different processes with different rotations (the grid's
sets also hold B column-major), so the floor is carried over through cuBLAS's default algorithm,
measured in both: ceiling = (best baseline / cuBLAS-nn, in the grid) x (cuBLAS / floor, in the
floor run). Prints per regime (db.shapes, the roofline of the run's GPU): configs, the geomean
ceiling, how many configs have a ceiling under 1.10, ours over the best baseline, and the grid's
cuBLAS-nn over the floor run's (how much colder the grid's rotation is); then the ten lowest
ceilings. Where the floor run has tiled rows (bulk_TMxTN, one stage; stream_TMxTN_sS, pipelined TMA
stages; streamr_TMxTN_sS, split with the cluster reduction, never faster than its unreduced twin:
tiled_rows), a second table carries the fastest of them over the same way, per regime and, for the
tiny regime, per K: the ceiling of a kernel that reads a tile's A and B panels (re-reading each
N / TN and M / TM times).
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
TILED = ("bulk_", "stream_", "streamr_")  # the tiled movements' row prefixes


def tiled_rows(rows: dict[str, float]) -> dict[str, float]:
    """A floor run's tiled movements of one config. A stream row split S > 1 ways leaves the splits'
    reduction out, and its streamr twin (session 38) adds our families' cluster reduction; the
    unreduced row stays the bound: a kernel may reduce another way or split less. Measured (H100,
    session 39): in place of their twins the reduced rows put the tiled bound above 168 of grid
    7ad9d33e's picks (our global and sliced reductions, and unsplit tiny kernels at K = 2048-16384,
    ran faster than any cluster-reduced row), so they bound only the cluster reduction."""
    return {name: t for name, t in rows.items() if name.startswith(TILED)}


def floors(path: Path) -> dict[tuple[int, int, int], dict[str, float]]:
    rows: dict[tuple[int, int, int], dict[str, float]] = defaultdict(dict)
    with path.open() as f:
        for r in csv.DictReader(f):
            rows[(int(r["m"]), int(r["n"]), int(r["k"]))][r["impl"]] = float(r["median_us"]) * 1e-6
    return rows


def run_gpu(measurements: str, run: str) -> str:
    """The GPU a bundled run measured on (runs.parquet beside the measurements): the regimes are
    its roofline's, as the README's tables are."""
    runs = str(Path(measurements).with_name("runs.parquet"))
    gpus = (
        duckdb.connect()
        .execute("SELECT DISTINCT gpu FROM read_parquet(?) WHERE starts_with(run_id, ?)", [runs, run])
        .fetchall()
    )
    if len(gpus) != 1:
        sys.exit(f"{runs}: want one GPU for run {run}, found {gpus}")
    return gpus[0][0]


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
    measured, gpu = grid(measurements, run), run_gpu(measurements, run)
    by_regime: dict[str, list[tuple[float, float, float]]] = defaultdict(list)
    lowest = []
    floor = floors(Path(floor_csv))
    for config, d in floor.items():
        if config not in measured:
            continue
        best, nn, ours = measured[config]
        ceiling = best / nn * d["cublas"] / min(d[m] for m in MOVES)
        by_regime[regime(Shape(*config), gpu)].append((ceiling, best / ours, nn / d["cublas"]))
        lowest.append((ceiling, config))

    header = (
        f"regime ({gpu.upper()})",
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
                f"| {name} | {len(rows)} | {gm([r[0] for r in rows]):.3f} "
                f"| {sum(r[0] < 1.10 for r in rows)} | {gm([r[1] for r in rows]):.3f} "
                f"| {gm([r[2] for r in rows]):.3f} |"
            )
    print("lowest ceilings:", ", ".join(f"{m}x{n}x{k} {c:.3f}" for c, (m, n, k) in sorted(lowest)[:10]))
    tiled_table(floor, measured, gpu)


def tiled_table(floor: dict, measured: dict, gpu: str = "h200") -> None:
    """The ceilings by the fastest tiled movement, per regime and per K of the tiny regime."""
    groups: dict[str, list[tuple[float, float, str]]] = defaultdict(list)
    for config, d in floor.items():
        tiled = tiled_rows(d)
        if config not in measured or not tiled:
            continue
        best, nn, ours = measured[config]
        fastest = min(tiled, key=tiled.__getitem__)
        row = (best / nn * d["cublas"] / tiled[fastest], best / ours, fastest)
        name = regime(Shape(*config), gpu)
        groups[name].append(row)
        if name == "tiny":
            groups[f"tiny, K = {config[2]}"].append(row)
    if not groups:
        return
    print()
    print(
        f"| regime ({gpu.upper()}) | configs | ceiling by the fastest tiled movement (geomean) "
        "| ceiling < 1.10 | ours now | fastest rows |"
    )
    print("|---|---|---|---|---|---|")
    order = [r for r in REGIMES if r in groups] + sorted(
        (g for g in groups if g.startswith("tiny, K")), key=lambda g: int(g.split("= ")[1])
    )
    for name in order:
        rows = groups[name]
        counts = defaultdict(int)
        for r in rows:
            counts[r[2]] += 1
        common = ", ".join(f"{n} {c}" for n, c in sorted(counts.items(), key=lambda kv: -kv[1])[:3])
        print(
            f"| {name} | {len(rows)} | {gm([r[0] for r in rows]):.3f} | {sum(r[0] < 1.10 for r in rows)} "
            f"| {gm([r[1] for r in rows]):.3f} | {common} |"
        )


def gm(values: list[float]) -> float:
    return math.exp(sum(map(math.log, values)) / len(values))


if __name__ == "__main__":
    main(*sys.argv[1:4])
