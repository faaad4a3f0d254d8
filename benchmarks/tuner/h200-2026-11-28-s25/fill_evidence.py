"""Write a bench run's harness figures into every entry of a set's manifest.

    python benchmarks/tuner/h200-2026-11-28-s25/fill_evidence.py STORE SET_ID RUN_PREFIX MANIFEST

STORE: a store file, or ``bundled`` for the bundled dataset. Session 25: the H200 set's manifest
takes grid run bf5c1b4a's figures (each entry's time, p10/p90, best baseline and bench_run_id; the
search's own figure stays as search_time_us), the H100 set's those of the bundled run de536734
(its entries still cited the superseded runs they were first measured in).
"""

from __future__ import annotations

import sys
from pathlib import Path

from cuda_l2_explorer.db.store import Store
from cuda_l2_explorer.tuner import manifest as mf


def main(store_path: str, set_id: str, prefix: str, manifest_path: str) -> None:
    bundled = store_path == "bundled"
    store = Store.open(None if bundled else store_path, with_bundled=bundled, read_only=True)
    (run,) = store.con.execute(
        "SELECT run_id FROM all_runs WHERE set_id = ? AND starts_with(run_id, ?)", [set_id, prefix]
    ).fetchone()
    data = mf.with_bench_evidence(mf.load(manifest_path), store, set_id, run)
    filled = sum(e.get("bench_run_id") == run for e in data["configs"])
    mf.save(data, Path(manifest_path))
    print(f"{filled} of {len(data['configs'])} entries now carry run {run}'s figures")


if __name__ == "__main__":
    main(*sys.argv[1:5])
