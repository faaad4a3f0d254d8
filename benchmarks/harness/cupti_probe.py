"""Median device time per call (us) of one config set measured in several stores, side by side.

    python benchmarks/harness/cupti_probe.py LABEL=STORE.duckdb ... [--offline-of LABEL=STORE]

Used for the CUPTI probe (harness v1 vs v2): the same configs measured with CUPTI left live after
each launcher audit (TEARDOWN_CUPTI=0) and torn down (=1), beside the bundled offline figures.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from cuda_l2_explorer.db.reads import offline_device_times_side_by_side


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("stores", nargs="+", help="LABEL=PATH; the first store's configs are compared")
    args = ap.parse_args()
    stores = [(label, Path(path)) for label, path in (item.split("=", 1) for item in args.stores)]
    labels = [label for label, _ in stores]
    rows = offline_device_times_side_by_side(stores)
    print("| M | N | K | implementation | " + " | ".join(f"{x} (us)" for x in labels) + " |")
    print("|---|---|---|---|" + "---:|" * len(labels))
    ratios: dict[str, list[float]] = {x: [] for x in labels[1:]}
    for m, n, k, impl, *us in rows:
        cells = " | ".join("-" if v is None else f"{v:.2f}" for v in us)
        print(f"| {m} | {n} | {k} | {impl} | {cells} |")
        for label, v in zip(labels[1:], us[1:], strict=True):
            if v and us[0]:
                ratios[label].append(v / us[0])
    for label, values in ratios.items():
        geo = math.exp(sum(map(math.log, values)) / len(values)) if values else float("nan")
        pairs = f"{len(values)} (config, implementation) pairs"
        print(f"\ngeomean of {label} / {labels[0]} over {pairs}: {geo:.3f}")


if __name__ == "__main__":
    main()
