"""Every kernel of a search log against one of them, per config (stage 1: one process, each
kernel's best variant), and the geomean of each over the configs, also on the configs with
K <= 1024 and M, N >= 2048 (where call 6 found cuBLASLt's odd tiles winning).

    python kernels_vs_base.py TUNE_STORE.duckdb BASE_KERNEL
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "harness" / "v3"))
from rotation_ab import geomean  # the evidence scripts' shared geomean, as picks_ab.py


def main(path: str, base: str) -> None:
    con = duckdb.connect(path, read_only=True)
    rows = con.execute(
        "SELECT m, n, k, kernel, min(median) FROM main.search_log WHERE stage = 1 AND status = 'ok' "
        "GROUP BY ALL"
    ).fetchall()
    by: dict[tuple, dict[str, float]] = defaultdict(dict)
    for m, n, k, kernel, seconds in rows:
        by[m, n, k][kernel] = seconds * 1e6
    kernels = sorted({k for times in by.values() for k in times})
    print("config (us) | " + " | ".join(kernels))
    ratios: dict[str, list[float]] = defaultdict(list)
    for cfg in sorted(by, key=lambda c: (c[2], c[0] * c[1])):
        times = by[cfg]
        print(f"{cfg} | " + " | ".join(f"{times[k]:.1f}" if k in times else "-" for k in kernels))
        if base not in times:
            continue
        low_k = cfg[2] <= 1024 and min(cfg[:2]) >= 2048
        for kernel, us in times.items():
            if kernel != base:
                ratios[kernel, "all"].append(us / times[base])
                if low_k:
                    ratios[kernel, "K <= 1024"].append(us / times[base])
    for (kernel, where), rs in sorted(ratios.items()):
        print(f"{kernel} / {base}, {where}: geomean {geomean(rs):.3f} over {len(rs)}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
