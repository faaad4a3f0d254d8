"""Several A/B merges of one set into one manifest, for the grid that confirms them.

    python benchmarks/tuner/combine_merges.py BASE_MANIFEST MERGED_MANIFEST... > combined.json

Each MERGED_MANIFEST is BASE_MANIFEST with the picks an A/B measured > 1% faster (merge_picks.sh's
copy). A config changed by more than one keeps the pick with the lowest A/B time (time_us: each
A/B's second newpicks bench, all against BASE's pick on the same GPU kind); stderr lists them.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from cuda_l2_explorer.tuner.manifest import pick_key


def configs(path: str) -> dict[tuple[int, int, int], dict]:
    return {(e["m"], e["n"], e["k"]): e for e in json.loads(Path(path).read_text())["configs"]}


def combine(base_path: str, merged_paths: list[str]) -> dict:
    base = json.loads(Path(base_path).read_text())
    old = configs(base_path)
    chosen: dict[tuple[int, int, int], dict] = {}
    for path in merged_paths:
        for key, entry in configs(path).items():
            if pick_key(entry) == pick_key(old[key]):
                continue
            if key in chosen:
                keep = min(chosen[key], entry, key=lambda e: e["time_us"])
                times = f"{chosen[key]['time_us']} / {entry['time_us']} us"
                print(f"{key}: {times}, kept {keep['time_us']}", file=sys.stderr)
                entry = keep
            chosen[key] = entry
    base["configs"] = [chosen.get((e["m"], e["n"], e["k"]), e) for e in base["configs"]]
    print(f"{len(chosen)} picks changed", file=sys.stderr)
    return base


if __name__ == "__main__":
    json.dump(combine(sys.argv[1], sys.argv[2:]), sys.stdout, indent=1)
    print()
