"""Per-family Nsight Compute summary: one representative shape per kernel family, ours beside cuBLAS.

    python benchmarks/tuner/ncu_family_report.py NCU_FAMILY.csv[.gz] ORDER.json > TABLE.md

Input: ``run_device.sh ncu-family`` (ncu --page details --csv with the SpeedOfLight, WarpStateStats,
LaunchStats and MemoryWorkloadAnalysis sections over ncu_driver.py's marker-delimited groups).
Per (shape, implementation), the median over the group's calls of each kernel's figures; a call
that launches several kernels (a split-K reduction) lists each kernel name once.
"""

from __future__ import annotations

import csv
import gzip
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harness" / "v3"))
from table import marker_groups

FIGURES = {  # column: (section metric name, scale)
    "us": ("Duration", 1e-3),
    "SM %": ("Compute (SM) Throughput", 1.0),
    "DRAM %": ("DRAM Throughput", 1.0),
    "L2 hit %": ("L2 Hit Rate", 1.0),
    "DRAM GB/s": ("Memory Throughput", 1e-9),
    "SM MHz": ("SM Frequency", 1e-6),
    "grid": ("Grid Size", 1.0),
    "cluster": ("Cluster Size", 1.0),
    "regs": ("Registers Per Thread", 1.0),
    "cyc/issue": ("Warp Cycles Per Issued Instruction", 1.0),
}


def kernels(csv_path: Path) -> list[tuple[str, dict]]:
    """Each profiled kernel in launch order: (name, {metric: value})."""
    by_id: dict[str, dict] = defaultdict(dict)
    names: dict[str, str] = {}
    opener = gzip.open if csv_path.suffix == ".gz" else open
    with opener(csv_path, "rt") as f:
        lines = [line for line in f if line.startswith('"')]
    for row in csv.DictReader(lines):
        kid = row["ID"]
        names[kid] = row["Kernel Name"]
        if row["Metric Name"]:
            try:
                by_id[kid][row["Metric Name"]] = float(row["Metric Value"].replace(",", ""))
            except ValueError:
                pass
    return [(names[kid], {"name": names[kid], **by_id[kid]}) for kid in sorted(names, key=int)]


def short(name: str) -> str:
    for key in ("tiny_gemm_kernel", "GemmUniversal", "sm90_xmma", "nvjet", "cutlass"):
        if key in name:
            return key if key != "nvjet" else name.split("(")[0][:40]
    return name.split("(")[0][:40]


def main(csv_path: str, order_path: str) -> None:
    order = json.loads(Path(order_path).read_text())
    groups = marker_groups(kernels(Path(csv_path)))
    if len(groups) != len(order):
        raise SystemExit(f"{len(groups)} marker groups in ncu's list, {len(order)} expected")
    print("| shape | implementation | kernel | TFLOP/s | " + " | ".join(FIGURES) + " |")
    print("|---" * (len(FIGURES) + 4) + "|")
    for g, ks in zip(order, groups, strict=True):
        m, n, k = g["m"], g["n"], g["k"]
        per_name: dict[str, list[dict]] = defaultdict(list)
        for kern in ks:
            per_name[kern["name"]].append(kern)
        total_ns = sum(kern.get("Duration", 0.0) for kern in ks) / g["calls"]
        tflops = 2 * m * n * k / (total_ns * 1e-9) / 1e12 if total_ns else float("nan")
        for name, calls in per_name.items():
            cells = []
            for metric, scale in FIGURES.values():
                values = [c[metric] for c in calls if metric in c]
                cells.append(f"{statistics.median(values) * scale:.4g}" if values else "-")
            print(
                f"| {m}x{n}x{k} | {g['implementation']} | {short(name)} | {tflops:.1f} | "
                + " | ".join(cells)
                + " |"
            )


if __name__ == "__main__":
    main(*sys.argv[1:3])
