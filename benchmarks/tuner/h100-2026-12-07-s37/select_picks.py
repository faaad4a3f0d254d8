"""One set's picks where they differ from another set's, of the named kernel families.

    python select_picks.py FROM_MANIFEST TO_MANIFEST FAMILY... > picks.json

Writes FROM's manifest cut to the configs whose pick differs from TO's and whose kernel is of one
of the families, for ab_picks.sh (which reads a manifest as a search's picks; TO is its "old").
BELOW (environment): only the configs where TO's pick is under BELOW x its best baseline (the
figures TO's manifest carries from its bundled grid), for a call too short for them all; PART=I/N
(environment): the I-th of N shares of the configs, in grid order, one call each.
"""

from __future__ import annotations

import json
import os
import sys

from cuda_l2_explorer.tuner import manifest as mf


def main(source_path: str, target_path: str, *families: str) -> None:
    source, target = mf.load(source_path), mf.load(target_path)
    changed = set(mf.changed_picks(target, source))
    below = float(os.environ.get("BELOW", "inf"))
    changed &= {
        (e["m"], e["n"], e["k"]) for e in target["configs"] if e["best_baseline_us"] / e["time_us"] < below
    }
    picked = [
        e
        for e in source["configs"]
        if (e["m"], e["n"], e["k"]) in changed and e["kernel"].get("family") in families
    ]
    part, parts = (int(x) for x in os.environ.get("PART", "1/1").split("/"))
    source["configs"] = picked[part - 1 :: parts]
    json.dump(source, sys.stdout)


if __name__ == "__main__":
    main(*sys.argv[1:])
