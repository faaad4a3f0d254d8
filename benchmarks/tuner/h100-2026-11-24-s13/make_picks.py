"""Old and new picks side by side: the configs where a re-search chose another kernel or variant.

    python make_picks.py TUNED CURRENT_MANIFEST OUT_DIR

TUNED is the manifest a tune wrote, or its store (.duckdb): a tune cut short by the call's time
limit writes no manifest, but its store keeps the kept kernel of every config it searched.

Writes OUT_DIR/{oldpicks,newpicks}/h100_F32F16F16F32/manifest.json (kernel sets of those configs
only, for `bench --set`) and prints the configs as M_N_K,... for `bench --mnk`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from cuda_l2_explorer.tuner.manifest import pick_key


def tuned_entries(path: str) -> list[dict]:
    if not path.endswith(".duckdb"):
        return json.loads(Path(path).read_text())["configs"]
    from cuda_l2_explorer.db.store import Store
    from cuda_l2_explorer.tuner.search import manifest_entries

    store = Store.open(path, with_bundled=False)
    runs = [r for (r,) in store.con.execute("SELECT DISTINCT run_id FROM main.search_log").fetchall()]
    return manifest_entries(store, runs)


def main(tuned_path: str, current_path: str, out: str) -> None:
    current = json.loads(Path(current_path).read_text())
    now = {(e["m"], e["n"], e["k"]): e for e in current["configs"]}
    new = [
        e
        for e in tuned_entries(tuned_path)
        if (e["m"], e["n"], e["k"]) in now and pick_key(e) != pick_key(now[e["m"], e["n"], e["k"]])
    ]
    header = {key: value for key, value in current.items() if key != "configs"}
    for name, entries in (("newpicks", new), ("oldpicks", [now[e["m"], e["n"], e["k"]] for e in new])):
        target = Path(out) / name / "h100_F32F16F16F32"
        target.mkdir(parents=True, exist_ok=True)
        (target / "manifest.json").write_text(json.dumps({**header, "configs": entries}, indent=1))
    print(",".join(f"{e['m']}_{e['n']}_{e['k']}" for e in new))


if __name__ == "__main__":
    main(*sys.argv[1:4])
