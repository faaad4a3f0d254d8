"""The harness-3 grid report: where a grid's time goes and what it measured.

    python benchmarks/harness/v3/grid_report.py GRID.duckdb [--sample NEW.duckdb --old OLD.duckdb]

Reads the stores as they are (read-only): per-phase seconds from run_configs.details (the worker
records them), the throughput, stats against each baseline, per regime, and how graph replay
compares with CUPTI's kernel time; with --sample/--old, the same configs timed by this harness and
by an older one, side by side. Prints markdown.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

import duckdb
import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # benchmarks/: the shared table helper
from harness_report import markdown_table


def table(columns: list[str], rows: list[tuple]) -> str:
    return markdown_table(pl.DataFrame(rows, schema=columns, orient="row"))


def seconds_per_config(con) -> dict[tuple, float]:
    return {tuple(r[:3]): r[3] for r in con.execute("SELECT m, n, k, seconds FROM run_configs").fetchall()}


def phases(con) -> tuple[list[tuple], float, int]:
    total: Counter[str] = Counter()
    seconds, configs = 0.0, 0
    done = con.execute("SELECT details, seconds FROM run_configs WHERE status = 'done'").fetchall()
    for details, sec in done:
        for phase, value in json.loads(details).get("phase_s", {}).items():
            total[phase] += value
        seconds += sec or 0.0
        configs += 1
    rows = [(p, round(v, 1), f"{v / seconds:.0%}") for p, v in total.most_common() if v >= 0.05]
    return rows, seconds, configs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("grid", type=Path)
    parser.add_argument("--sample", type=Path, help="a store of configs timed by this harness")
    parser.add_argument("--old", type=Path, help="a store of (some of) the same configs, an older harness")
    args = parser.parse_args()
    con = duckdb.connect(str(args.grid), read_only=True)
    run = con.execute(
        "SELECT gpu_name, started_at::DATE, json_extract_string(params, '$.harness_version'), command_line, "
        "driver, cuda, cublas, torch FROM runs WHERE kind = 'bench'"
    ).fetchone()
    rows, seconds, configs = phases(con)
    out = [
        f"Device: {run[0]}; date {run[1]}; harness {run[2]}; driver {run[4]}, CUDA {run[5]}, "
        f"cuBLAS {run[6]}, torch {run[7]}.",
        "",
        f"Command: `{run[3]}`",
        "",
        f"## Throughput: {configs} configs, {seconds:.0f} s of worker time "
        f"({seconds / configs:.2f} s a config, {seconds / 60:.1f} min)",
        "",
        table(["phase", "seconds", "share"], rows),
        "",
    ]
    ratio = """
        WITH g AS (SELECT m, n, k, implementation i, median d FROM measurements
                   WHERE metric = 'device_time' AND NOT padded AND status = 'ok'),
             c AS (SELECT m, n, k, implementation i, median c FROM measurements
                   WHERE metric = 'cupti_kernel_time' AND NOT padded)
        SELECT CASE WHEN c < 5e-6 THEN 'a: < 5 us' WHEN c < 20e-6 THEN 'b: 5-20 us'
                    WHEN c < 200e-6 THEN 'c: 20-200 us' WHEN c < 2e-3 THEN 'd: 0.2-2 ms' ELSE 'e: > 2 ms' END,
               count(*), round(median(d / c), 3), round(quantile_cont(d / c, 0.1), 3),
               round(quantile_cont(d / c, 0.9), 3)
        FROM g JOIN c USING (m, n, k, i) GROUP BY 1 ORDER BY 1"""
    findings = con.execute(
        "SELECT finding, count(*) FROM audit_findings GROUP BY 1 ORDER BY 2 DESC"
    ).fetchall()
    out += [
        "## Graph replay / CUPTI kernel time, per call (every implementation row)",
        "",
        table(["CUPTI time", "rows", "median", "p10", "p90"], con.execute(ratio).fetchall()),
        "",
        table(["audit finding", "rows"], findings),
        "",
    ]
    if args.sample and args.old:
        new = duckdb.connect(str(args.sample), read_only=True)
        old = duckdb.connect(str(args.old), read_only=True)
        old_s, new_s = seconds_per_config(old), seconds_per_config(new)
        both = sorted(set(old_s) & set(new_s))
        side = [(f"{m}_{n}_{k}", round(old_s[(m, n, k)], 2), round(new_s[(m, n, k)], 2)) for m, n, k in both]
        side.append(("total", round(sum(old_s[s] for s in both), 1), round(sum(new_s[s] for s in both), 1)))
        _, sample_s, sample_n = phases(new)
        out += [
            f"## This harness vs the previous commit's, same configs, one device call ({len(both)} configs)",
            "",
            table(["config", "previous s", "now s"], side),
            "",
            f"The {sample_n}-config sample (a seeded random sample of the grid) took {sample_s:.1f} s "
            f"({sample_s / sample_n:.2f} s a config).",
            "",
        ]
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
