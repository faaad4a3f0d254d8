"""How much a search at the default shortlist would lose against a wide one, from a search log.

    python benchmarks/tuner/shortlist_recall.py TUNE_STORE LIBRARY_JSON [--limit 16]

TUNE_STORE: a tune's store whose search measured many candidates a shape (``tune --limit 48``);
LIBRARY_JSON: the library's manifest (``libl2x_tuner-<key>.json``: every kernel's parameters).
For each shape, the cost model's shortlist at ``--limit`` (tuner.search_space.candidates, as the
search worker calls it) against the stage-1 times of every candidate the wide search measured:
the fastest measured candidate overall, the fastest inside the shortlist, and their ratio. A
shortlist candidate the wide search did not measure counts as missing (it cannot be judged).
"""

from __future__ import annotations

import argparse
import json
import math

import duckdb
from cuda_l2_explorer.tuner.search_space import candidates


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("store")
    ap.add_argument("library")
    ap.add_argument("--limit", type=int, default=16)
    args = ap.parse_args()
    library = json.load(open(args.library))["configs"]
    kernels = {c["name"]: {k: v for k, v in c.items() if k != "name"} for c in library}
    con = duckdb.connect(args.store, read_only=True)
    rows = con.execute(
        "SELECT m, n, k, candidate, min(median) FROM main.search_log "
        "WHERE stage = 1 AND status = 'ok' GROUP BY ALL"
    ).fetchall()
    times: dict[tuple[int, int, int], dict[str, float]] = {}
    for m, n, k, cand, seconds in rows:
        times.setdefault((m, n, k), {})[cand] = seconds
    logs, hits = [], 0
    print("config | fastest measured | in the shortlist | shortlist size | lost")
    for shape in sorted(times):
        measured = times[shape]
        short = {c.key for c in candidates(*shape, kernels, limit=args.limit)}
        best = min(measured, key=measured.get)
        inside = [c for c in short if c in measured]
        best_in = min(inside, key=measured.get) if inside else None
        lost = measured[best_in] / measured[best] if best_in else math.inf
        hits += best in short
        logs.append(math.log(lost))
        print(
            f"{'x'.join(map(str, shape))} | {best} {measured[best] * 1e6:.1f} us | "
            f"{best_in} | {len(short)} | {lost:.3f}"
        )
    print(
        f"\n{len(times)} shapes, limit {args.limit}: the fastest in the shortlist at {hits}; "
        f"geomean time lost {math.exp(sum(logs) / len(logs)):.4f}, worst {math.exp(max(logs)):.3f}"
    )


if __name__ == "__main__":
    main()
