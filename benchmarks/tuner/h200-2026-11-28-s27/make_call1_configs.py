"""Call 1's configs: those under 1.0 of the best baseline in grid 0188a20e (device time, bundled at
commit 10883b1) that no search with the 93-kernel library had seen (session 26's call 2 and 3
lists), worst first.

    git show 10883b1:db/bundled/measurements.parquet >/tmp/m0188.parquet
    python benchmarks/tuner/h200-2026-11-28-s27/make_call1_configs.py /tmp/m0188.parquet

Prints the count per regime (the H200's roofline) and their share of the grid's sum of
ln(speedup); writes call1_configs.txt beside this file.
"""

from __future__ import annotations

import math
import sys
from collections import Counter
from pathlib import Path

import duckdb
from cuda_l2_explorer.db.shapes import Shape, regime

HERE = Path(__file__).resolve().parent
SEARCHED = [HERE.parent / "h200-2026-11-28-s26" / f for f in ("call2_configs.txt", "call3_configs.txt")]


def main(measurements: str) -> None:
    rows = duckdb.sql(
        f"""
        WITH d AS (SELECT m, n, k, implementation, median FROM '{measurements}'
                   WHERE starts_with(run_id, '0188a20e') AND metric = 'device_time' AND status = 'ok'),
        o AS (SELECT m, n, k, median AS t FROM d WHERE implementation = 'kernel'),
        b AS (SELECT m, n, k, min(median) AS t FROM d WHERE implementation <> 'kernel' GROUP BY ALL)
        SELECT o.m, o.n, o.k, b.t / o.t AS r FROM o JOIN b USING (m, n, k) ORDER BY r
        """
    ).fetchall()
    searched = {c for f in SEARCHED for c in f.read_text().strip().split(",")}
    left = [(m, n, k, r) for m, n, k, r in rows if r < 1.0 and f"{m}_{n}_{k}" not in searched]
    regimes = Counter(regime(Shape(m, n, k), "h200") for m, n, k, _ in left)
    print(f"{len(left)} configs, {dict(regimes)}; sum of ln {sum(math.log(r) for *_, r in left):.1f}")
    (HERE / "call1_configs.txt").write_text(",".join(f"{m}_{n}_{k}" for m, n, k, _ in left) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
