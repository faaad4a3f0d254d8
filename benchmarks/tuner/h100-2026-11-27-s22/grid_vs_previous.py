"""The tenth grid (run 06080f57, bundled) against the ninth (run 57434203, bundled until commit
73a3a88's dataset was replaced): per config ours and the best of the seven baselines (device
time, unpadded medians), split into the 33 picks session 22 merged and the picks left as they
were; then the tenth grid's timing-mismatch findings (graph replay against CUPTI's durations).

    python benchmarks/tuner/h100-2026-11-27-s22/grid_vs_previous.py > grid_vs_previous.txt

The ninth grid's rows are read from git (db/bundled/measurements.parquet at 73a3a88), the tenth's
from the bundled dataset in the checkout.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path

import duckdb

ROOT = Path(__file__).resolve().parents[3]
OLD_COMMIT, OLD_RUN, NEW_RUN = "73a3a88", "57434203", "06080f57"
MERGED = Path(__file__).with_name("merged_picks.json")

PER_CONFIG = """
    SELECT m, n, k,
           max(median) FILTER (WHERE implementation = 'kernel') AS ours,
           min(median) FILTER (WHERE implementation <> 'kernel') AS best
    FROM read_parquet('{path}')
    WHERE run_id LIKE '{run}%' AND metric = 'device_time' AND status = 'ok' AND NOT padded
    GROUP BY ALL HAVING ours IS NOT NULL AND best IS NOT NULL
"""


def main() -> None:
    con = duckdb.connect()
    with tempfile.TemporaryDirectory() as tmp:
        old = Path(tmp) / "old.parquet"
        old.write_bytes(
            subprocess.run(
                ["git", "-C", str(ROOT), "show", f"{OLD_COMMIT}:db/bundled/measurements.parquet"],
                capture_output=True,
                check=True,
            ).stdout
        )
        new = ROOT / "db" / "bundled" / "measurements.parquet"
        con.execute(f"CREATE TABLE a AS {PER_CONFIG.format(path=new, run=NEW_RUN)}")
        con.execute(f"CREATE TABLE b AS {PER_CONFIG.format(path=old, run=OLD_RUN)}")
        con.execute("CREATE TABLE merged (m BIGINT, n BIGINT, k BIGINT)")
        con.executemany("INSERT INTO merged VALUES (?, ?, ?)", json.loads(MERGED.read_text()))
        print(f"device time, unpadded medians; ours over the best baseline; run {NEW_RUN} against {OLD_RUN}")
        print("picks | configs | old geomean | new geomean | ours new/old speed | baselines new/old speed")
        for label, join in (
            ("merged", "SEMI JOIN merged USING (m, n, k)"),
            ("unchanged", "ANTI JOIN merged USING (m, n, k)"),
            ("all", ""),
        ):
            row = con.execute(
                f"""SELECT count(*), exp(avg(ln(b.best / b.ours))), exp(avg(ln(a.best / a.ours))),
                           exp(avg(ln(b.ours / a.ours))), exp(avg(ln(b.best / a.best)))
                    FROM a JOIN b USING (m, n, k) {join}"""
            ).fetchone()
            print(f"{label} | {row[0]} | " + " | ".join(f"{v:.4f}" for v in row[1:]))
    print()
    print(
        f"timing-mismatch findings of run {NEW_RUN}: ours?, graph slower than CUPTI?, rows, "
        "device time us min-max, median graph - CUPTI us"
    )
    bundled = ROOT / "db" / "bundled"
    rows = con.execute(
        f"""
        WITH f AS (SELECT * FROM read_parquet('{bundled / "audit_findings.parquet"}')
                   WHERE run_id LIKE '{NEW_RUN}%' AND finding = 'timing-mismatch'),
             x AS (SELECT * FROM read_parquet('{bundled / "measurements.parquet"}')
                   WHERE run_id LIKE '{NEW_RUN}%' AND NOT padded),
             d AS (SELECT run_id, m, n, k, implementation, median AS dev FROM x WHERE metric = 'device_time'),
             u AS (SELECT run_id, m, n, k, implementation, median AS cup FROM x
                   WHERE metric = 'cupti_kernel_time')
        SELECT f.implementation = 'kernel', dev > cup, count(*), count(DISTINCT (m, n, k)),
               min(dev) * 1e6, max(dev) * 1e6, median((dev - cup) * 1e6)
        FROM f JOIN d USING (run_id, m, n, k, implementation) JOIN u USING (run_id, m, n, k, implementation)
        GROUP BY ALL ORDER BY ALL
        """
    ).fetchall()
    for ours, slower, count, configs, lo, hi, gap in rows:
        print(
            f"ours={ours} graph_slower={slower} rows={count} configs={configs} "
            f"{lo:.1f}-{hi:.1f} us median {gap:+.2f} us"
        )
    findings = bundled / "audit_findings.parquet"
    total = con.execute(
        f"SELECT count(*), count(DISTINCT (m, n, k)) FROM read_parquet('{findings}') "
        f"WHERE run_id LIKE '{NEW_RUN}%' AND finding = 'timing-mismatch'"
    ).fetchone()
    print(f"in all: {total[0]} rows at {total[1]} configs")


if __name__ == "__main__":
    main()
