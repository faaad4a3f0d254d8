"""Call 3's A/B (alpha kernel against its convert twin, pick for pick) by K, by kernel and by time.

    cd benchmarks/tuner/h200-2026-11-28-s27 && python convert_ab_breakdown.py call3 3

Reads each GPU's A/B store (abN/picks.duckdb.xz, through picks_ab.ab_times: old and new device
time of each repeat) and twinsN.json (which alpha kernel each twin derives from); prints the
geomean of old/new (means of the repeats) per group and the largest and smallest ratios above 50 us.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "h100-2026-11-24-s12"))
from picks_ab import ab_times, geomean


def main(folder: str, gpus: str) -> None:
    rows, derived = [], {}
    for g in range(int(gpus)):
        for shape, t in ab_times(Path(folder) / f"ab{g}" / "picks.duckdb.xz").items():
            old, new = (sum(t[s]) / len(t[s]) * 1e6 for s in ("oldpicks", "newpicks"))
            rows.append((*shape, old, new, old / new))
        for e in json.loads((Path(folder) / f"twins{g}.json").read_text())["configs"]:
            derived[e["m"], e["n"], e["k"]] = e["derived_from"]
    print(f"{len(rows)} configs: old/new {geomean([r[5] for r in rows]):.3f}")
    groups = {
        "by K": lambda r: r[2],
        "by kernel": lambda r: derived[r[:3]],
        "by new time": lambda r: "<10us" if r[4] < 10 else "10-100us" if r[4] < 100 else ">100us",
    }
    for title, key in groups.items():
        print(title)
        grouped = defaultdict(list)
        for r in rows:
            grouped[key(r)].append(r[5])
        for name, ratios in sorted(grouped.items(), key=lambda kv: str(kv[0]).zfill(6)):
            print(f"  {name}: {len(ratios)} configs, old/new {geomean(ratios):.3f}")
    large = sorted((r for r in rows if r[4] > 50), key=lambda r: r[5])
    print("above 50 us, M N K old new old/new (kernel):")
    for r in large[-6:] + large[:4]:
        print(f"  {r[0]} {r[1]} {r[2]} {r[3]:.1f} {r[4]:.1f} {r[5]:.3f} ({derived[r[:3]]})")


if __name__ == "__main__":
    main(*sys.argv[1:3])
