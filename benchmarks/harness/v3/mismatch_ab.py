"""`timing-mismatch` flags and graph/CUPTI ratios, harness against harness on the same configs
(session 14, call 4: the cross-check's CUPTI time from graph replays against eager calls).

    python mismatch_ab.py LABEL=STORE.duckdb [LABEL=STORE.duckdb ...]

Per store: flagged rows over unpadded device-time rows, by size (the configs' graph time per
call under 20 us, 20-200 us, over 200 us), and the median graph/CUPTI ratio in each.
"""

from __future__ import annotations

import statistics
import sys

import duckdb

BANDS = ((0.0, 20e-6, "< 20 us"), (20e-6, 200e-6, "20-200 us"), (200e-6, 1.0, ">= 200 us"))
ROWS = """
SELECT d.m, d.n, d.k, d.implementation, d.median, c.median,
       EXISTS (SELECT 1 FROM audit_findings f WHERE f.run_id = d.run_id AND f.m = d.m AND f.n = d.n
               AND f.k = d.k AND f.implementation = d.implementation AND f.finding = 'timing-mismatch')
FROM measurements d JOIN measurements c USING (run_id, m, n, k, implementation, padded)
WHERE d.metric = 'device_time' AND c.metric = 'cupti_kernel_time' AND NOT d.padded AND d.status = 'ok'
"""


def main(args: list[str]) -> None:
    print("| store | size | rows | flagged | median graph/CUPTI |\n|---|---|---|---|---|")
    for arg in args:
        label, path = arg.split("=", 1)
        rows = duckdb.connect(path, read_only=True).execute(ROWS).fetchall()
        for lo, hi, band in BANDS:
            sub = [r for r in rows if lo <= r[4] < hi]
            if sub:
                ratio = statistics.median(r[4] / r[5] for r in sub)
                print(f"| {label} | {band} | {len(sub)} | {sum(r[6] for r in sub)} | {ratio:.3f} |")


if __name__ == "__main__":
    main(sys.argv[1:])
