"""Two server runs of one set on the same configs, implementation by implementation: the median
isolated call of each (new / old, geomean over the configs both measured) and ours against the best
baseline in each run, overall and for the configs whose input set fits in half the L2 (where warm
and cold L2 differ).

    python compare_runs.py STORE NEW_RUN_PREFIX OLD_RUN_PREFIX
"""

import sys
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from rotation_ab import geomean  # the evidence scripts' shared geomean

L2_BYTES = 50 * 1024 * 1024  # H100 SXM


def main(store: str, new: str, old: str) -> None:
    con = duckdb.connect(store, read_only=True)
    rows = con.execute(
        """SELECT x.run_id, x.m, x.n, x.k, x.implementation, x.median FROM measurements x
           WHERE (starts_with(x.run_id, ?) OR starts_with(x.run_id, ?)) AND x.metric = 'isolated_call'
             AND x.status = 'ok' AND NOT x.padded""",
        [new, old],
    ).fetchall()
    times: dict[tuple, dict[str, dict[str, float]]] = {}
    for run, m, n, k, impl, median in rows:
        times.setdefault((m, n, k), {}).setdefault("new" if run.startswith(new) else "old", {})[impl] = median
    both = {s: t for s, t in times.items() if len(t) == 2}
    print(f"{len(both)} configs measured by both runs ({new} new, {old} old)")
    for impl in sorted({i for t in both.values() for i in t["new"]}):
        measured = [t for t in both.values() if impl in t["old"] and impl in t["new"]]
        ratios = [t["new"][impl] / t["old"][impl] for t in measured]
        if ratios:
            print(f"  {impl:28} new/old {geomean(ratios):.3f} over {len(ratios)}")
    for label, keep in (("all", lambda s: True), ("set <= L2/2", fits_half_l2)):
        for run in ("old", "new"):
            speedups = [
                min(v for i, v in t[run].items() if i != "kernel") / t[run]["kernel"]
                for s, t in both.items()
                if keep(s) and "kernel" in t[run]
            ]
            if speedups:
                figure = f"{geomean(speedups):.3f} over {len(speedups)}"
                print(f"  ours over the best baseline, {label:11} {run}: {figure}")


def fits_half_l2(shape: tuple[int, int, int]) -> bool:
    m, n, k = shape
    return 2 * (m * k + k * n + m * n) <= L2_BYTES / 2


if __name__ == "__main__":
    main(*sys.argv[1:4])
