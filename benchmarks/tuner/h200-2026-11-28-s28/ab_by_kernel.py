"""A search's A/B (ab_picks.sh) on several GPUs: old/new per config with the new pick's kernel,
the geomean overall, by K and by new kernel, and which picks merged (>1% faster).

    python benchmarks/tuner/h200-2026-11-28-s28/ab_by_kernel.py benchmarks/tuner/h200-2026-11-28-s28/call2 4

Reads CALL/gpuN/ab/picks.duckdb.xz (old and new device time of each repeat, through
picks_ab.ab_times) and CALL/gpuN/ab/picks/newpicks/*/manifest.json (the new picks' kernels).
"""

from __future__ import annotations

import glob
import json
import math
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "h100-2026-11-24-s12"))
from picks_ab import ab_times, geomean


def main(folder: str, gpus: str) -> None:
    rows = []
    for g in range(int(gpus)):
        ab = Path(folder) / f"gpu{g}" / "ab"
        (newpicks,) = glob.glob(str(ab / "picks" / "newpicks" / "*" / "manifest.json"))
        kernel = {
            (e["m"], e["n"], e["k"]): e["kernel_name"]
            for e in json.loads(Path(newpicks).read_text())["configs"]
        }
        for shape, t in ab_times(ab / "picks.duckdb.xz").items():
            old, new = (sum(t[s]) / len(t[s]) * 1e6 for s in ("oldpicks", "newpicks"))
            rows.append((shape, old, new, kernel[shape]))
    ratios = [old / new for _, old, new, _ in rows]
    print(
        f"{len(rows)} changed picks: old/new {geomean(ratios):.3f}, "
        f"{sum(r > 1.01 for r in ratios)} >1% faster"
    )
    for label, key in (("K", lambda r: r[0][2]), ("new kernel", lambda r: r[3])):
        groups = defaultdict(list)
        for r in rows:
            groups[key(r)].append(r[1] / r[2])
        print(f"by {label}")
        for g, v in sorted(groups.items(), key=lambda kv: str(kv[0])):
            print(f"  {g}: {len(v)} configs, old/new {geomean(v):.3f}, {sum(x > 1.01 for x in v)} >1% faster")
    print("M N K old new old/new (new kernel), largest first")
    for (m, n, k), old, new, name in sorted(rows, key=lambda r: -r[1])[:15]:
        print(f"  {m} {n} {k} {old:.1f} {new:.1f} {old / new:.3f} ({name})")
    assert all(math.isfinite(r) for r in ratios)


if __name__ == "__main__":
    main(*sys.argv[1:3])
