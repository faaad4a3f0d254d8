"""Picks that a later merge replaced and the next grid measured slower: the replaced picks again,
as a tuned manifest for ab_picks.sh / merge_picks.sh (old = the set's current pick, new = the
earlier one), so an old/new/old/new A/B settles which one the set keeps.

    python recheck_picks.py REV [BELOW] > recheck_picks.json

REV: a commit whose kernels/h100_F32F16F16F32/manifest.json carries the earlier picks and their
bundled grid's figures (38679b8: grid 7ad9d33e). Kept: the configs whose pick changed since REV and
whose ratio over the best baseline fell by more than BELOW (default 0.03) from REV's grid to the
current one (each manifest entry's own bench figures), worst first.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from cuda_l2_explorer.tuner.manifest import pick_key

SET = "kernels/h100_F32F16F16F32/manifest.json"


def ratio(entry: dict) -> float:
    return entry["best_baseline_us"] / entry["time_us"]


def main(rev: str, below: str = "0.03") -> None:
    earlier = json.loads(
        subprocess.run(["git", "show", f"{rev}:{SET}"], capture_output=True, check=True).stdout
    )
    current = json.loads(Path(SET).read_text())
    now = {(e["m"], e["n"], e["k"]): e for e in current["configs"]}
    kept = [
        e
        for e in earlier["configs"]
        if (c := now.get((e["m"], e["n"], e["k"]))) is not None
        and pick_key(e) != pick_key(c)
        and ratio(e) - ratio(c) > float(below)
    ]
    kept.sort(key=lambda e: ratio(now[e["m"], e["n"], e["k"]]) - ratio(e))
    for e in kept:
        c = now[e["m"], e["n"], e["k"]]
        print(
            f"{e['m']}_{e['n']}_{e['k']}: {rev} {e['kernel_name']} {ratio(e):.3f} -> now {c['kernel_name']} "
            f"{ratio(c):.3f}",
            file=sys.stderr,
        )
    json.dump(
        {key: value for key, value in earlier.items() if key != "configs"} | {"configs": kept},
        sys.stdout,
        indent=1,
    )


if __name__ == "__main__":
    main(*sys.argv[1:])
