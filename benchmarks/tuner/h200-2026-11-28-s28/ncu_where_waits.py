"""Where each GEMM kernel's warps wait, from an ncu-family report exported by run_device.sh
(NCU_REPORT=1): the raw page's cycles, instructions, tensor-pipe share and warp-stall samples,
and the SASS page's instructions with the most stall samples.

    python benchmarks/tuner/h200-2026-11-28-s28/ncu_where_waits.py CALL/ncu [TOP]

Each kernel is profiled several times (ncu_driver.py's calls); the last profile of each kernel at
each grid size is shown (one kernel at two configs: two entries, in profile order).
"""

from __future__ import annotations

import csv
import lzma
import re
import sys
from pathlib import Path

GEMM = ("nvjet", "cutlass", "l2x", "tiny_")
RAW = {
    "us": "gpu__time_duration.sum",
    "cycles": "sm__cycles_elapsed.max",
    "instructions": "smsp__inst_executed.sum",
    # The tensor pipe's busy cycles, every MMA kind (wgmma's HGMMA included): the raw page's name
    # for what session 28 read as 98.2% (this script's first name for it is not on the page).
    "tensor %": (
        "sm__pipe_tensor_type_hmma_hgmma_qgmma_imma_igmma_bmma_bgmma_cycles_active"
        ".avg.pct_of_peak_sustained_elapsed"
    ),
    "SM MHz": "smsp__cycles_elapsed.avg.per_second",
    "DRAM %": "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
}
STALL = "smsp__pcsamp_warps_issue_stalled_"


def short(name: str) -> str:
    """A kernel's name cut to its family and tile (our kernels' names differ only in the shape's
    template arguments, which ncu's two pages spell with and without "(int)")."""
    shape = re.search(r"(\w+_kernel)<.*?(\w+Shape<[^>]*>)", name.replace("(int)", ""))
    if shape:
        return f"{shape[1]}<{shape[2]}>"
    return name if len(name) < 60 else name[:40] + "..." + name[-16:]


def raw_summary(path: Path) -> None:
    rows = list(csv.reader(lzma.open(path, "rt")))
    header, units = rows[0], rows[1]
    last = {}
    grid = header.index("Grid Size")
    for row in rows[2:]:
        if any(g in row[4] for g in GEMM):
            last[(row[4], row[grid])] = dict(zip(header, row, strict=True))
    scale = dict(zip(header, units, strict=True))
    for (name, size), row in last.items():
        print(f"\n## {short(name)} grid {size}")
        for label, metric in RAW.items():
            value = float(row.get(metric, "nan").replace(",", "") or "nan")
            if scale.get(metric) == "ns":
                value /= 1e3
            if metric.endswith("per_second"):
                value /= 1e6
            print(f"  {label:13} {value:14,.1f}")
        stalls = {
            h[len(STALL) :]: float(row[h].replace(",", "") or 0)
            for h in header
            if h.startswith(STALL) and not h.endswith("not_issued")
        }
        total = sum(stalls.values())
        top = sorted(stalls.items(), key=lambda kv: -kv[1])[:8]
        print("  stall samples (share of all):", ", ".join(f"{k} {v / total:.1%}" for k, v in top))


def _count(cell: str) -> int:
    """A SASS page's sample count ("-" where ncu has none, "1,024" past a thousand)."""
    return int(cell.replace(",", "")) if cell.strip("- ") else 0


def sass_summary(path: Path, top: int) -> None:
    blocks: list[tuple[str, list[list[str]]]] = []  # (kernel, [its SASS page's header, rows...])
    header: list[str] = []
    name = ""
    for row in csv.reader(lzma.open(path, "rt")):
        if row and row[0] == "Kernel Name":
            name, header = row[1], []
            if blocks and blocks[-1][0] == name:
                blocks.pop()  # of back-to-back profiles of one kernel (one config's calls) the last wins
            blocks.append((name, []))
        elif row and row[0] == "Address":
            header = row  # each kernel's page has its own columns
            blocks[-1][1].append(header)
        elif header and name and any(g in name for g in GEMM):
            blocks[-1][1].append(row)
    for name, (header, *rows) in ((n, b) for n, b in blocks if len(b) > 1):
        col = {h: i for i, h in enumerate(header)}
        samples = [_count(r[col["Warp Stall Sampling (All Samples)"]]) for r in rows]
        total = sum(samples)
        reasons = [h for h in header if h.startswith("stall_") and "Not Issued" not in h]
        print(f"\n## {short(name)}: {len(rows)} SASS instructions, {total} samples; top {top}")
        order = sorted(range(len(rows)), key=lambda i: -samples[i])[:top]
        for i in order:
            r = rows[i]
            why = sorted(((_count(r[col[h]]), h[6:]) for h in reasons), reverse=True)[:3]
            print(
                f"  {samples[i] / total:6.1%}  {r[col['Source']].strip()[:60]:60}"
                f"  {', '.join(f'{w} {n / max(samples[i], 1):.0%}' for n, w in why if n)}"
            )


if __name__ == "__main__":
    folder = Path(sys.argv[1])
    raw_summary(folder / "ncu_raw.csv.xz")
    sass_summary(folder / "ncu_sass.csv.xz", int(sys.argv[2]) if len(sys.argv) > 2 else 15)
