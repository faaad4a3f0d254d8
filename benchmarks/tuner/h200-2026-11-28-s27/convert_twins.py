"""The set's picks with the convert epilogue: each pick whose kernel has a "convert" twin in the
catalog (the same tile, cluster, stages and schedule, D = fp16(acc) without the alpha multiply),
with the same runtime variant, as a manifest for ab_picks.sh (make_picks.py reads a manifest as a
search's picks).

    python benchmarks/tuner/h200-2026-11-28-s27/convert_twins.py SET_MANIFEST OUT_MANIFEST [SHARD SHARDS]

SHARD SHARDS keeps every SHARDS-th twin from the SHARD-th (one GPU's share of the A/B).
L2X_TWINS_DONE (a glob of earlier runs' twin manifests, e.g. call3/twins*.json) leaves out the
picks already A/B'd against the same twin.

Each twin entry keeps the search run that chose the tile and variant (run_id) and names the
kernel it derives from (derived_from); ab_picks.sh's bench writes its own figures into it.
"""

from __future__ import annotations

import dataclasses
import glob
import os
import sys
from collections import Counter
from pathlib import Path

from cuda_l2_explorer.tuner import manifest as mf
from cuda_l2_explorer.tuner.catalog import KernelConfig, first_catalog


def main(set_path: str, out_path: str, shard: str = "0", shards: str = "1") -> None:
    twins = {
        dataclasses.replace(c, epilogue="alpha").name: c for c in first_catalog() if c.epilogue == "convert"
    }
    done = {
        (e["m"], e["n"], e["k"], e["kernel_name"])
        for path in sorted(glob.glob(os.environ.get("L2X_TWINS_DONE", "")))
        for e in mf.load(path)["configs"]
    }
    data = mf.load(set_path)
    entries = []
    for entry in data["configs"]:
        twin = twins.get(entry["kernel_name"])
        if twin is None or (entry["m"], entry["n"], entry["k"], twin.name) in done:
            continue
        assert KernelConfig.from_dict(entry["kernel"]) == dataclasses.replace(twin, epilogue="alpha")
        entries.append(
            {
                **entry,
                "kernel": twin.to_dict(),
                "kernel_name": twin.name,
                "derived_from": entry["kernel_name"],
            }
        )
    entries = entries[int(shard) :: int(shards)]
    mf.save({**data, "configs": entries}, Path(out_path))
    print(f"{len(entries)} picks have a convert twin:", dict(Counter(e["derived_from"] for e in entries)))


if __name__ == "__main__":
    main(*sys.argv[1:5])
