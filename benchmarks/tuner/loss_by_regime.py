"""Where our set loses, per regime, from a grid's raw rows (device time, best of the seven baselines).

    python benchmarks/tuner/loss_by_regime.py MEASUREMENTS [--run RUN] [--tuned MANIFEST] [--picks MANIFEST]
    python benchmarks/tuner/loss_by_regime.py MEASUREMENTS --run RUN --list large:0.98  # a re-search list

MEASUREMENTS is a store (.duckdb) or a measurements Parquet file with a harness-3 offline run of
our set (an older bundle: ``git show 6c93c21:db/bundled/measurements.parquet > m.parquet``);
``--run`` picks one run (a run-id prefix) where it holds several.
Prints, per regime (db.shapes.regime, of ``--gpu``'s roofline: default h100), the configs, the
geomean of best-baseline time / ours and the sum of its logs (how much of the grid's total loss the
regime holds), then the geomean fraction of the physical floor (SPEC section 7,
db.shapes.floor_seconds) that ours and the best baseline reach per regime. With ``--tuned`` (a
manifest a re-search wrote), the same over the configs it re-searched: ours as the grid measured it
against min(grid, the re-search's own time), both over the grid's best baseline. With ``--picks``
(the set's manifest the grid measured), the same geomean and sum of logs per regime and kernel
family (the kernel name's first word): which family holds a regime's loss.
"""

from __future__ import annotations

import argparse
import json
import math
from collections import defaultdict
from pathlib import Path

import duckdb
from cuda_l2_explorer.db.shapes import REGIMES, Shape, floor_seconds, regime
from cuda_l2_explorer.db.views import BASELINES

Config = tuple[int, int, int]


def grid_times(path: Path, run: str = "") -> dict[Config, tuple[float, float]]:
    """(best baseline, ours) device time in seconds per config."""
    con = duckdb.connect()
    source = f"read_parquet('{path}')"
    if path.suffix == ".duckdb":
        con.execute(f"ATTACH '{path}' AS g (READ_ONLY)")
        source = "g.measurements"
    baselines = ", ".join(f"'{b}'" for b in BASELINES)
    rows = con.execute(
        f"SELECT m, n, k, min(median) FILTER (WHERE implementation IN ({baselines})), "
        f"min(median) FILTER (WHERE implementation = 'kernel') FROM {source} "
        "WHERE metric = 'device_time' AND status = 'ok' AND NOT padded AND starts_with(run_id, ?) "
        "GROUP BY ALL",
        [run],
    ).fetchall()
    return {(m, n, k): (base, ours) for m, n, k, base, ours in rows if base and ours}


def _logs_by(ratios: dict[Config, float], key) -> dict:
    """The logs of the ratios, grouped by ``key(config)``."""
    logs: dict = defaultdict(list)
    for config, ratio in ratios.items():
        logs[key(config)].append(math.log(ratio))
    return logs


def by_regime(ratios: dict[Config, float], gpu: str = "h100") -> list[tuple[str, int, float, float]]:
    """(regime, configs, geomean, sum of logs) per regime present (the regimes of ``gpu``'s roofline)."""
    logs = _logs_by(ratios, lambda c: regime(Shape(*c), gpu))
    return [(r, len(v), math.exp(sum(v) / len(v)), sum(v)) for r in REGIMES if (v := logs.get(r))]


def by_family(
    ratios: dict[Config, float], picks: dict[Config, str], gpu: str = "h100"
) -> list[tuple[str, str, int, float, float]]:
    """(regime, family, configs, geomean, sum of logs), largest loss (lowest sum) first in each regime."""
    logs = _logs_by(ratios, lambda c: (regime(Shape(*c), gpu), picks[c].split("_")[0]))
    rows = [(r, f, len(v), math.exp(sum(v) / len(v)), sum(v)) for (r, f), v in logs.items()]
    return sorted(rows, key=lambda row: (REGIMES.index(row[0]), row[4]))


def _floor(config: Config, gpu: str) -> float:
    floor = floor_seconds(Shape(*config), gpu)
    assert floor is not None
    return floor


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("measurements", type=Path)
    ap.add_argument("--run", default="", help="a run id (or its prefix)")
    ap.add_argument("--tuned", type=Path, help="a re-search's manifest.json")
    ap.add_argument("--picks", type=Path, help="the set's manifest.json the grid measured")
    ap.add_argument("--gpu", default="h100", help="regimes and floor of this GPU (h100, h200)")
    ap.add_argument("--list", metavar="REGIME:BELOW", help="print only that regime's configs under BELOW")
    args = ap.parse_args()
    gpu = args.gpu
    times = grid_times(args.measurements, args.run)
    if args.list:  # a re-search's list (M_N_K,...), lowest first: a search cut short drops the least hopeful
        name, below = args.list.split(":")
        ratios = {c: b / o for c, (b, o) in times.items() if regime(Shape(*c), gpu) == name}
        print(
            ",".join(
                "_".join(map(str, c)) for c in sorted(ratios, key=ratios.get) if ratios[c] < float(below)
            )
        )
        return
    print("regime   configs  geomean  sum_ln")
    for name, count, geomean, total in by_regime({c: b / o for c, (b, o) in times.items()}, gpu):
        print(f"{name:8} {count:7} {geomean:8.3f} {total:7.1f}")
    print(f"\nfraction of the physical floor ({gpu.upper()}), geomean per regime: ours, best baseline")
    ours = by_regime({c: _floor(c, gpu) / o for c, (_, o) in times.items()}, gpu)
    best = {r: g for r, _, g, _ in by_regime({c: _floor(c, gpu) / b for c, (b, _) in times.items()}, gpu)}
    for name, count, geomean, _ in ours:
        print(f"{name:8} {count:7} {geomean:8.3f} {best[name]:8.3f}")
    if args.picks:
        picks = {
            (e["m"], e["n"], e["k"]): e["kernel_name"] for e in json.loads(args.picks.read_text())["configs"]
        }
        print("\nregime   family   configs  geomean  sum_ln")
        for name, family, count, geomean, total in by_family(
            {c: b / o for c, (b, o) in times.items()}, picks, gpu
        ):
            print(f"{name:8} {family:8} {count:7} {geomean:8.3f} {total:7.1f}")
    if args.tuned:
        tuned = {
            (e["m"], e["n"], e["k"]): e["time_us"] * 1e-6
            for e in json.loads(args.tuned.read_text())["configs"]
        }
        before = by_regime({c: times[c][0] / times[c][1] for c in tuned}, gpu)
        after = dict(
            (r, g)
            for r, _, g, _ in by_regime({c: times[c][0] / min(times[c][1], t) for c, t in tuned.items()}, gpu)
        )
        print(f"\nre-searched {len(tuned)} configs: regime, configs, geomean before -> after")
        for name, count, geomean, _ in before:
            print(f"{name:8} {count:7} {geomean:8.3f} -> {after[name]:.3f}")


if __name__ == "__main__":
    main()
