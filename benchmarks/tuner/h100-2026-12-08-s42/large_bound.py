"""The large regime's tensor-pipe bound per config, from Nsight Compute's profile of each config's
best baseline (bound_configs.py's list through ``run_device.sh ncu-family``, plan.sh's bound step).

    python large_bound.py NCU_FAMILY.csv|ncu_raw.csv.xz ORDER.json MEASUREMENTS RUN [BUSY_CSV]

The tensor pipe of the best baseline's kernel was busy a fraction ``busy`` of its cycles: at the
clock it ran at, no kernel takes fewer than busy x its cycles (every HGEMM issues the same MMAs), so
our speedup over it is at most 1 / busy (the bound session 28 measured on the H200 at one config,
98.2%). Where the grid's best baseline is cuBLAS-nn/tn, whose default algorithm is no cuBLASLt
candidate, the same layout's top-1 heuristic candidate stood in: the bound is carried over by the
two rows' grid times (stand-in / best). Printed per config: the best baseline, what ncu profiled,
its busy share and clock (median over the group's calls), our pick's, their ncu times' ratio and
the ceiling; then the geomean ceiling. BUSY_CSV (m,n,k,busy) is what grid_bound.py reads.
"""

from __future__ import annotations

import csv
import json
import lzma
import math
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE.parents[1] / "harness" / "v3"), str(HERE)]
from bound_configs import best_baselines, candidate, grid_rows  # noqa: E402
from ncu_family_report import kernels  # noqa: E402
from table import marker_groups  # noqa: E402

TENSOR = (
    "sm__pipe_tensor_type_hmma_hgmma_qgmma_imma_igmma_bmma_bgmma_cycles_active"
    ".avg.pct_of_peak_sustained_elapsed"
)
TIME = "gpu__time_duration.sum"
CLOCK = "sm__cycles_elapsed.avg.per_second"
# The ncu --metrics argument plan.sh's bound step passes (a file: the device reads it without Python).
METRICS = (HERE / "bound_metrics.txt").read_text().strip()


def profiled_kernels(path: Path) -> list[tuple[str, dict]]:
    """Each profiled kernel in launch order, (name, {metric: value}): from ncu's details page (the
    --log-file CSV, one row a metric) or from its raw page (``ncu_raw.csv.xz``: one row a kernel,
    a units row under the header), which run_device.sh exports from the report (NCU_REPORT=1)."""
    if not path.name.endswith(".xz"):
        return kernels(path)
    rows = list(csv.reader(lzma.open(path, "rt")))
    header = rows[0]
    found = []
    for row in rows[2:]:
        figures: dict = {}
        for name, cell in zip(header, row, strict=True):
            try:
                figures[name] = float(cell.replace(",", ""))
            except ValueError:
                pass
        found.append((row[header.index("Kernel Name")], figures))
    return found


def call_figures(group: list[dict], calls: int) -> tuple[float, float, float]:
    """(busy fraction, MHz, ns) of one implementation's calls, each the median over its calls; a
    call of several kernels counts each kernel's busy share by its time."""
    per_call = len(group) // calls
    if per_call * calls != len(group):
        raise SystemExit(f"{len(group)} kernels profiled for {calls} calls")
    busy, mhz, ns = [], [], []
    for i in range(calls):
        call = group[i * per_call : (i + 1) * per_call]
        total = sum(k[TIME] for k in call)
        busy.append(sum(k[TENSOR] * k[TIME] for k in call) / total / 100)
        mhz.append(sum(k[CLOCK] * k[TIME] for k in call) / total / 1e6)
        ns.append(total)
    return statistics.median(busy), statistics.median(mhz), statistics.median(ns)


def profiled_group(implementation: str, message: str) -> str:
    """The ncu_driver group that profiled the grid's best baseline (or stood in for it)."""
    suffix = candidate(implementation, message).lstrip("@")  # e.g. tn6
    return f"cuBLASLt-{suffix[:2]}-{suffix[2:]}" if suffix else "torch.matmul"


def geomean(values: list[float]) -> float:
    return math.exp(sum(map(math.log, values)) / len(values))


def main(ncu_csv: str, order_json: str, measurements: str, run: str, busy_csv: str = "") -> None:
    order = json.loads(Path(order_json).read_text())
    groups = marker_groups(profiled_kernels(Path(ncu_csv)))
    if len(groups) != len(order):
        raise SystemExit(f"{len(groups)} marker groups in ncu's list, {len(order)} expected")
    profiled = {
        ((g["m"], g["n"], g["k"]), g["implementation"]): call_figures(ks, g["calls"])
        for g, ks in zip(order, groups, strict=True)
    }
    rows = grid_rows(measurements, run)
    best = best_baselines(rows)
    grid = {key: t for key, (t, _) in rows.items()}
    print(
        "| config | best baseline (grid) | profiled | busy | MHz | ours: busy | MHz | ncu time ours / it "
        "| ours now (grid) | ceiling |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    ceilings, ours_now, out = [], [], []
    for config in sorted({c for c, _ in profiled}, key=lambda c: (c[0] * c[1] * c[2], c)):
        impl, message = best[config]
        standin = profiled_group(impl, message)
        if (config, standin) not in profiled:
            print(f"| {config} | {impl} | {standin}: not profiled | | | | | | | |")
            continue
        busy, mhz, ns = profiled[(config, standin)]
        # cuBLAS-nn/tn: the bound carried from the stand-in (the same layout's top-1) by grid times.
        carry = 1.0
        if impl.startswith("cuBLAS-"):
            carry = grid[(config, impl)] / grid[(config, f"cuBLASLt-heuristic-{impl[-2:]}")]
        ceiling = carry / busy
        ours = profiled.get((config, "kernel"))
        now = grid[(config, impl)] / grid[(config, "kernel")] if (config, "kernel") in grid else float("nan")
        ours_cells = f"{ours[0]:.1%} | {ours[1]:.0f} | {ours[2] / ns:.3f}" if ours else "- | - | -"
        print(
            f"| {'x'.join(map(str, config))} | {impl} | {standin} | {busy:.1%} | {mhz:.0f} | {ours_cells} "
            f"| {now:.3f} | {ceiling:.3f} |"
        )
        ceilings.append(ceiling)
        ours_now.append(now)
        out.append((*config, busy / carry))
    print(f"\n{len(ceilings)} configs: ours now {geomean(ours_now):.3f}, ceiling {geomean(ceilings):.3f}")
    if busy_csv:
        with open(busy_csv, "w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(["m", "n", "k", "busy"])  # busy over the grid's best baseline: 1 / ceiling
            writer.writerows(out)


if __name__ == "__main__":
    main(*sys.argv[1:])
