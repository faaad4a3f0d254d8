"""The configs a merge took (merge.txt's last line: M_N_K,...) cut from the manifest it merged them
into: session 38's call 1 searched the H200 set's band configs on an H100 (the machine lent for
`nvidia-h200`), so its 55 merges are H100 picks measured against the H200 set's, to be A/B'd
against the H100 set's before they join it.

    python band_picks.py MERGED_MANIFEST MERGE_TXT > picks.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from cuda_l2_explorer.tuner import manifest as mf


def main(manifest_path: str, merge_txt: str) -> None:
    merged = {tuple(int(x) for x in c.split("_")) for c in Path(merge_txt).read_text().split()[-1].split(",")}
    data = mf.load(manifest_path)
    data["configs"] = [e for e in data["configs"] if (e["m"], e["n"], e["k"]) in merged]
    if len(data["configs"]) != len(merged):
        sys.exit(f"{manifest_path}: {len(data['configs'])} of the {len(merged)} merged configs found")
    json.dump(data, sys.stdout)


if __name__ == "__main__":
    main(*sys.argv[1:])
