"""Take a new pick into the set's manifest where the old/new/old/new bench measured it >1% faster.

    python merge_faster.py PICKS_STORE NEWPICKS_MANIFEST SET_MANIFEST

PICKS_STORE: the A/B store (call2.sh's picks.duckdb, or .gz); NEWPICKS_MANIFEST: the newpicks set
it benched. Rewrites SET_MANIFEST in place and prints what it took.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "h100-2026-11-24-s12"))
from cuda_l2_explorer.tuner import manifest as mf
from picks_ab import ab_times

GAIN = 1.01


def main(store: str, newpicks: str, manifest_path: str) -> None:
    times = ab_times(Path(store))
    faster = set()
    for shape, t in times.items():
        old, new = (sum(t[s]) / len(t[s]) for s in ("oldpicks", "newpicks"))
        if old / new > GAIN:
            faster.add(shape)
    new_entries = {
        (e["m"], e["n"], e["k"]): e
        for e in json.loads(Path(newpicks).read_text())["configs"]
        if (e["m"], e["n"], e["k"]) in faster
    }
    manifest = mf.load(manifest_path)
    manifest["configs"] = [new_entries.get((e["m"], e["n"], e["k"]), e) for e in manifest["configs"]]
    mf.save(manifest, Path(manifest_path))
    print(",".join("_".join(map(str, s)) for s in sorted(new_entries)))


if __name__ == "__main__":
    main(*sys.argv[1:4])
