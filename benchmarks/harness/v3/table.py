"""The harness-3 validation table: graph-replayed device time against ncu, A/A, harness 2 vs 3.

    python benchmarks/harness/v3/table.py --h3 H3.duckdb --h2 H2.duckdb --aa AA.duckdb \
        --ncu ncu.csv --order order.json --out DIR

H3: our set benched with harness 3 (offline, graph replay); H2: the same configs timed the way
harness 2 did (``--timing eager``: R calls issued from Python, stored as issue_bound_time); AA:
the A/A set (a SPEC §4 kernel that calls torch.matmul) under harness 3; ncu.csv/order.json: from
ncu_driver.py. Writes DIR/validation.md and DIR/validation.json.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
from collections import defaultdict
from pathlib import Path

from cuda_l2_explorer.db import reads
from cuda_l2_explorer.db.shapes import Shape, regime
from cuda_l2_explorer.db.store import Store

NS_PER_UNIT = {"ns": 1.0, "nsecond": 1.0, "us": 1e3, "usecond": 1e3, "ms": 1e6, "msecond": 1e6}
MARKER = "spin_kernel"


def marker_groups(kernels: list[tuple[str, object]]) -> list[list[object]]:
    """The values of the kernels between marker pairs (ncu_driver.py's groups), in order; what
    runs outside a pair (first-call set-up) is left out."""
    groups: list[list[object]] = []
    current: list[object] | None = None
    for name, value in kernels:
        if MARKER in name:
            if current is None:
                current = []
            else:
                groups.append(current)
                current = None
        elif current is not None:
            current.append(value)
    return groups


def ncu_per_call(csv_path: Path, order_path: Path) -> dict[tuple, float]:
    """{(m, n, k, implementation): seconds per call} from ncu's kernel list and the groups' order."""
    kernels: list[tuple[str, float]] = []
    with open(csv_path) as f:
        lines = [line for line in f if line.startswith('"')]  # ncu's own log lines start with ==
    for row in csv.DictReader(lines):
        if row.get("Metric Name") != "gpu__time_duration.sum":
            continue
        value = float(row["Metric Value"].replace(",", ""))
        kernels.append((row["Kernel Name"], value * NS_PER_UNIT[row["Metric Unit"]] / 1e9))
    groups = marker_groups(kernels)
    order = json.loads(Path(order_path).read_text())
    if len(groups) != len(order):
        raise SystemExit(f"{len(groups)} marker-delimited groups in ncu's list, {len(order)} expected")
    return {
        (g["m"], g["n"], g["k"], g["implementation"]): sum(ks) / g["calls"]
        for g, ks in zip(order, groups, strict=True)
    }


def medians(path: Path, metrics: tuple[str, ...]) -> dict[tuple, float]:
    """{(m, n, k, implementation, metric): median} of a store's unpadded measurements."""
    with Store.open(path, read_only=True, with_bundled=False) as store:
        rows = reads.measured_medians(store, metrics)
    return {(m, n, k, impl, metric): med for _r, m, n, k, impl, padded, metric, med, *_ in rows if not padded}


def clocks(path: Path) -> dict[tuple, int | None]:
    with Store.open(path, read_only=True, with_bundled=False) as store:
        details = reads.config_details(store)
    return {shape: d.get("sm_clock_after_timing_mhz") for shape, d in details.items()}


def findings(path: Path) -> dict[tuple, list[str]]:
    with Store.open(path, read_only=True, with_bundled=False) as store:
        rows = reads.audit_rows(store)
    out: dict[tuple, list[str]] = defaultdict(list)
    for _r, m, n, k, impl, finding, _detail in rows:
        out[(m, n, k)].append(f"{impl}: {finding}")
    return out


def _us(x: float | None) -> str:
    return "" if x is None else f"{x * 1e6:.2f}"


def _ratio(a: float | None, b: float | None) -> str:
    return "" if a is None or b is None or b == 0 else f"{a / b:.3f}"


def geomean(values: list[float]) -> float | None:
    values = [v for v in values if v and v > 0]
    return math.exp(sum(map(math.log, values)) / len(values)) if values else None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name in ("h3", "h2", "aa", "ncu", "order", "out"):
        ap.add_argument(f"--{name}", type=Path, required=name in ("h3", "out"))
    args = ap.parse_args()
    h3 = medians(args.h3, ("device_time", "isolated_call", "host_latency", "cupti_kernel_time"))
    h2 = medians(args.h2, ("issue_bound_time",)) if args.h2 else {}
    aa = medians(args.aa, ("device_time",)) if args.aa else {}
    ncu = ncu_per_call(args.ncu, args.order) if args.ncu and args.order else {}
    audit = findings(args.h3)
    sm_clock = clocks(args.h3)
    shapes = sorted({key[:3] for key in h3}, key=lambda s: (s[0] * s[1] * s[2], s))
    rows = []
    for m, n, k in shapes:

        def g(table, impl, metric=None, m=m, n=n, k=k):
            return table.get((m, n, k, impl, metric) if metric else (m, n, k, impl))

        best = min(
            (
                v
                for (mm, nn, kk, impl, metric), v in h3.items()
                if (mm, nn, kk) == (m, n, k) and metric == "device_time" and impl != "kernel"
            ),
            default=None,
        )
        rows.append(
            {
                "m": m,
                "n": n,
                "k": k,
                "regime": regime(Shape(m, n, k)),
                "cublas_h3": g(h3, "torch.matmul", "device_time"),
                "cublas_ncu": g(ncu, "torch.matmul"),
                "cublas_cupti": g(h3, "torch.matmul", "cupti_kernel_time"),
                "cublas_isolated": g(h3, "torch.matmul", "isolated_call"),
                "cublas_h2": g(h2, "torch.matmul", "issue_bound_time"),
                "ours_h3": g(h3, "kernel", "device_time"),
                "ours_ncu": g(ncu, "kernel"),
                "ours_h2": g(h2, "kernel", "issue_bound_time"),
                "best_baseline_h3": best,
                "aa_kernel": g(aa, "kernel", "device_time"),
                "aa_torch": g(aa, "torch.matmul", "device_time"),
                "findings": audit.get((m, n, k), []),
                "sm_clock_mhz": sm_clock.get((m, n, k)),
            }
        )
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    (out / "validation.json").write_text(json.dumps(rows, indent=1))
    head = (
        "| config | regime | cuBLAS h3 (us) | ncu | h3/ncu | CUPTI | isolated call | h2 (eager) "
        "| ours h3 | ncu | h3/ncu | ours vs best baseline h3 | h2 says | A/A | SM MHz |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n"
    )
    lines = []
    for r in rows:
        lines.append(
            f"| {r['m']}x{r['n']}x{r['k']} | {r['regime']} | {_us(r['cublas_h3'])} | {_us(r['cublas_ncu'])} "
            f"| {_ratio(r['cublas_h3'], r['cublas_ncu'])} | {_us(r['cublas_cupti'])} "
            f"| {_us(r['cublas_isolated'])} | {_us(r['cublas_h2'])} | {_us(r['ours_h3'])} "
            f"| {_us(r['ours_ncu'])} | {_ratio(r['ours_h3'], r['ours_ncu'])} "
            f"| {_ratio(r['best_baseline_h3'], r['ours_h3'])} | {_ratio(r['cublas_h2'], r['ours_h2'])} "
            f"| {_ratio(r['aa_torch'], r['aa_kernel'])} | {r['sm_clock_mhz'] or ''} |"
        )
    summary = {
        "ours_vs_best_h3": geomean(
            [r["best_baseline_h3"] / r["ours_h3"] for r in rows if r["best_baseline_h3"] and r["ours_h3"]]
        ),
        # Same comparator under both metrics (torch.matmul): never a ratio across metrics.
        "ours_vs_cublas_h3": geomean(
            [r["cublas_h3"] / r["ours_h3"] for r in rows if r["cublas_h3"] and r["ours_h3"]]
        ),
        "ours_vs_cublas_h2": geomean(
            [r["cublas_h2"] / r["ours_h2"] for r in rows if r["cublas_h2"] and r["ours_h2"]]
        ),
        "cublas_h3_over_ncu": geomean(
            [r["cublas_h3"] / r["cublas_ncu"] for r in rows if r["cublas_h3"] and r["cublas_ncu"]]
        ),
        "aa": geomean([r["aa_torch"] / r["aa_kernel"] for r in rows if r["aa_torch"] and r["aa_kernel"]]),
    }
    text = (
        head
        + "\n".join(lines)
        + "\n\n"
        + "\n".join(f"- {key}: {value:.3f}" if value else f"- {key}: n/a" for key, value in summary.items())
    )
    (out / "validation.md").write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
