"""A bundled offline grid against the one it replaced: per config ours and the best of the seven
baselines (device time, unpadded medians), split into the picks merged between the two and the
picks left as they were; the unchanged picks whose speed moved most against the baselines' at the
same config between the two grids (a kernel's run-to-run spread beyond the A/B bars);
then the new grid's timing-mismatch findings (graph replay against CUPTI's durations).

    python benchmarks/tuner/grid_vs_previous.py OLD_COMMIT OLD_RUN NEW_COMMIT NEW_RUN MERGED_JSON
    # the tenth grid against the ninth (session 22):
    python benchmarks/tuner/grid_vs_previous.py 73a3a88 57434203 447f714 06080f57 \
        benchmarks/tuner/h100-2026-11-27-s22/merged_picks.json

Each grid's rows are read from git (db/bundled/*.parquet at a commit that bundles it; NEW_COMMIT
"." reads the checkout); MERGED_JSON is a list of [M, N, K] (the merged picks).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import duckdb

ROOT = Path(__file__).resolve().parents[2]

PER_CONFIG = """
    SELECT m, n, k,
           max(median) FILTER (WHERE implementation = 'kernel') AS ours,
           min(median) FILTER (WHERE implementation <> 'kernel') AS best
    FROM read_parquet('{path}')
    WHERE run_id LIKE '{run}%' AND metric = 'device_time' AND status = 'ok' AND NOT padded
    GROUP BY ALL HAVING ours IS NOT NULL AND best IS NOT NULL
"""


def bundled_file(commit: str, name: str, tmp: Path) -> Path:
    """db/bundled/NAME as it was at ``commit`` ("." the checkout's)."""
    if commit == ".":
        return ROOT / "db" / "bundled" / name
    path = tmp / f"{commit}-{name}"
    path.write_bytes(
        subprocess.run(
            ["git", "-C", str(ROOT), "show", f"{commit}:db/bundled/{name}"], capture_output=True, check=True
        ).stdout
    )
    return path


def main(old_commit: str, old_run: str, new_commit: str, new_run: str, merged: str) -> None:
    con = duckdb.connect()
    with tempfile.TemporaryDirectory() as tmp_dir:
        tmp = Path(tmp_dir)
        old = bundled_file(old_commit, "measurements.parquet", tmp)
        new = bundled_file(new_commit, "measurements.parquet", tmp)
        findings = bundled_file(new_commit, "audit_findings.parquet", tmp)
        con.execute(f"CREATE TABLE a AS {PER_CONFIG.format(path=new, run=new_run)}")
        con.execute(f"CREATE TABLE b AS {PER_CONFIG.format(path=old, run=old_run)}")
        con.execute("CREATE TABLE merged (m BIGINT, n BIGINT, k BIGINT)")
        con.executemany("INSERT INTO merged VALUES (?, ?, ?)", json.loads(Path(merged).read_text()))
        print(f"device time, unpadded medians; ours over the best baseline; run {new_run} against {old_run}")
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
        movers(con)
        print()
        mismatches(con, new, findings, new_run)


def movers(con: duckdb.DuckDBPyConnection, beyond: float = 0.05, most: int = 8) -> None:
    """The unchanged picks whose speed moved against the baselines' at the same config by more than
    ``beyond`` between the grids (a move of the machine shows in both), largest first."""
    rows = con.execute(
        """SELECT m, n, k, b.ours, a.ours, b.best / a.best, (b.ours / a.ours) / (b.best / a.best) AS rel
           FROM a JOIN b USING (m, n, k) ANTI JOIN merged USING (m, n, k)
           WHERE abs(ln(rel)) > ln(1 + ?)
           ORDER BY abs(ln(rel)) DESC""",
        [beyond],
    ).fetchall()
    print(
        f"unchanged picks whose speed moved by > {beyond:.0%} against the baselines': {len(rows)}"
        + (", largest:" if rows else "")
    )
    for m, n, k, old, new, baselines, rel in rows[:most]:
        print(
            f"  {m}x{n}x{k}: ours {old * 1e6:.2f} -> {new * 1e6:.2f} us (speed x{old / new:.3f}), "
            f"baselines x{baselines:.3f}: x{rel:.3f} against them"
        )


def mismatches(con: duckdb.DuckDBPyConnection, measurements: Path, findings: Path, new_run: str) -> None:
    print(
        f"timing-mismatch findings of run {new_run}: ours?, graph slower than CUPTI?, rows, "
        "device time us min-max, median graph - CUPTI us"
    )
    rows = con.execute(
        f"""
        WITH f AS (SELECT * FROM read_parquet('{findings}')
                   WHERE run_id LIKE '{new_run}%' AND finding = 'timing-mismatch'),
             x AS (SELECT * FROM read_parquet('{measurements}')
                   WHERE run_id LIKE '{new_run}%' AND NOT padded),
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
    total = con.execute(
        f"SELECT count(*), count(DISTINCT (m, n, k)) FROM read_parquet('{findings}') "
        f"WHERE run_id LIKE '{new_run}%' AND finding = 'timing-mismatch'"
    ).fetchone()
    print(f"in all: {total[0]} rows at {total[1]} configs")


if __name__ == "__main__":
    if len(sys.argv) != 6:
        raise SystemExit(__doc__)
    main(*sys.argv[1:6])
