"""A kernel set of the current manifest's picks for some configs only (for `bench --set`).

    python subset_set.py MANIFEST CONFIGS_FILE OUT_DIR

CONFIGS_FILE holds M_N_K words (comma or space separated). Writes
OUT_DIR/h100_F32F16F16F32/manifest.json and prints the configs found as M_N_K,... for --mnk.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path


def main(manifest: str, configs: str, out: str) -> None:
    words = re.split(r"[,\s]+", Path(configs).read_text())
    wanted = {tuple(int(x) for x in w.split("_")) for w in words if w}
    data = json.loads(Path(manifest).read_text())
    data["configs"] = [e for e in data["configs"] if (e["m"], e["n"], e["k"]) in wanted]
    target = Path(out) / "h100_F32F16F16F32"
    target.mkdir(parents=True, exist_ok=True)
    (target / "manifest.json").write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    print(",".join(f"{e['m']}_{e['n']}_{e['k']}" for e in data["configs"]))


if __name__ == "__main__":
    main(*sys.argv[1:4])
