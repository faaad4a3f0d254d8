"""Write the harness evidence report (Markdown) from a store file filled on the device.

    python benchmarks/harness_report.py STORE.duckdb OUT.md

Everything in the report is read from the store: device and provenance from ``runs``, timings
from ``run_configs`` and ``runs``, aggregates through the same query API as ``stats``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import polars as pl
from cuda_l2_explorer.db import reads
from cuda_l2_explorer.db.reads import resolve_filters, stats
from cuda_l2_explorer.db.shapes import Shape, regime
from cuda_l2_explorer.db.store import Store


def markdown_table(frame: pl.DataFrame, digits: int = 3) -> str:
    head = "| " + " | ".join(frame.columns) + " |"
    rule = "|" + "|".join("---" for _ in frame.columns) + "|"
    rows = []
    for row in frame.iter_rows():
        cells = [f"{v:.{digits}f}" if isinstance(v, float) else ("" if v is None else str(v)) for v in row]
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join([head, rule, *rows])


def report(store: Store) -> str:
    runs = reads.bench_runs_with_provenance(store)
    out = ["# Harness evidence: measured runs", ""]
    for run in runs.iter_rows(named=True):
        params = json.loads(run["params"])
        configs = reads.run_config_outcomes(store, run["run_id"])
        wall = (run["finished_at"] - run["started_at"]).total_seconds() if run["finished_at"] else None
        n = len(params["shapes"])
        out += [
            f"## {run['mode']} mode: {run['set_id']} on {run['gpu_name']}",
            "",
            f"- run `{run['run_id']}`, status **{run['status']}**, {run['started_at']:%Y-%m-%d %H:%M} UTC",
            f"- device: {run['gpu_name']}, {run['sm_count']} SMs, L2 {run['l2_bytes'] / 2**20:.0f} MiB, "
            "driver "
            f"{run['driver']}, CUDA {run['cuda']}, cuBLAS {run['cublas']}, torch {run['torch']}; SM clock "
            f"{run['clock_start_mhz']} MHz at start, {run['clock_end_mhz']} MHz at end",
            f"- protocol: {json.dumps(params['protocol'])}, L2 {params['l2']}, baselines "
            f"{', '.join(params['baselines'])}, cuBLASLt workspace {params['workspace_bytes'] >> 20} MiB",
            f"- command: `{run['command_line']}`",
            f"- {n} configs in {wall:.0f} s wall ({wall / n:.2f} s per config; kernel builds excluded)"
            if wall
            else f"- {n} configs",
            "",
            markdown_table(configs, 1),
            "",
        ]
    filters = resolve_filters(store)
    table = stats(store, filters).filter(pl.col("source") == "measured")
    if table.height:
        out += [
            "## Speedup of the kernel set (device time, median per config)",
            "",
            markdown_table(
                table.select(
                    "set_id",
                    "gpu",
                    "mode",
                    "baseline",
                    "configs",
                    "geomean",
                    "mean",
                    "win_rate",
                    "loss_rate",
                    "min",
                    "max",
                )
            ),
            "",
        ]
    speed = reads.measured_speedups_over_best(store)
    if speed.height:
        speed = speed.with_columns(
            pl.struct("m", "n", "k")
            .map_elements(lambda r: regime(Shape(r["m"], r["n"], r["k"])), return_dtype=pl.String)
            .alias("regime")
        )
        by_regime = (
            speed.group_by("mode", "regime")
            .agg(
                pl.len().alias("configs"),
                pl.col("speedup").log().mean().exp().alias("geomean_vs_best"),
                pl.col("speedup").min().alias("worst"),
            )
            .sort("mode", "regime")
        )
        out += ["## By regime (kernel vs the best of the seven baselines)", "", markdown_table(by_regime), ""]
    base = reads.device_time_rows_per_implementation(store)
    out += ["## Rows per implementation (device time)", "", markdown_table(base), ""]
    findings = reads.audit_finding_counts(store)
    out += ["## Audit findings", "", markdown_table(findings) if findings.height else "none", ""]
    bad = reads.device_time_rows_not_ok(store)
    out += [
        "## Rows not ok (excluded from speedups)",
        "",
        markdown_table(bad, 4) if bad.height else "none",
        "",
    ]
    return "\n".join(out)


def main() -> None:
    store_path, out = Path(sys.argv[1]), Path(sys.argv[2])
    with Store.open(store_path, read_only=True, with_bundled=False) as store:
        out.write_text(report(store))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
