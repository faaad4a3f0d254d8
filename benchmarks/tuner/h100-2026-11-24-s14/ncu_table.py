"""Selected metrics of an Nsight Compute raw-page CSV (optionally gzipped), one line per kernel and
grid (the first of its repeats; the marker kernels left out).

    python ncu_table.py NCU.csv[.gz] METRIC,METRIC,...
"""

from __future__ import annotations

import csv
import gzip
import re
import sys


def short_name(name: str) -> str:
    shape = re.search(r"WgShape<(\d+), (\d+), (\d+), (\d+), (\w+), (\d+)>", name)
    return f"wgsk {shape[1]}x{shape[2]} s{shape[4]} mc{shape[6]}" if shape else name[:34]


def number(text: str) -> str:
    try:
        return f"{float(text.replace(',', '')):.4g}"
    except ValueError:
        return text


def main(path: str, metrics: str) -> None:
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        table = list(csv.reader(line for line in f if line.strip() and not line.startswith("==")))
    header, rows = table[0], table[2:]  # the second row holds the units
    wanted = metrics.split(",")
    index = {w: header.index(w) for w in wanted if w in header}
    kernel, grid = header.index("Kernel Name"), header.index("Grid Size")
    print("kernel | grid | " + " | ".join(wanted))
    seen = set()
    for row in rows:
        key = (short_name(row[kernel]), row[grid])
        if "spin_kernel" in row[kernel] or key in seen:
            continue
        seen.add(key)
        print(" | ".join([*key, *(number(row[index[w]]) if w in index else "?" for w in wanted)]))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
