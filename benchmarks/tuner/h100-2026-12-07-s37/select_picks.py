"""One set's picks where they differ from another set's, of the named kernel families.

    python select_picks.py FROM_MANIFEST TO_MANIFEST FAMILY... > picks.json

Writes FROM's manifest cut to the configs whose pick differs from TO's and whose kernel is of one
of the families, for ab_picks.sh (which reads a manifest as a search's picks; TO is its "old").
"""

from __future__ import annotations

import json
import sys

from cuda_l2_explorer.tuner import manifest as mf


def main(source_path: str, target_path: str, *families: str) -> None:
    source, target = mf.load(source_path), mf.load(target_path)
    changed = set(mf.changed_picks(target, source))
    source["configs"] = [
        e for e in source["configs"]
        if (e["m"], e["n"], e["k"]) in changed and e["kernel"].get("family") in families
    ]
    json.dump(source, sys.stdout)


if __name__ == "__main__":
    main(*sys.argv[1:])
