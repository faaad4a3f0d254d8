"""Forget some configs of a finished run so that ``bench --resume RUN_ID`` measures them again.

    python benchmarks/harness/v3/redo_configs.py STORE RUN_ID_PREFIX M_N_K[,M_N_K...]

For configs whose figures are known to be wrong for a reason outside them (the first config of a
fresh worker in server mode, measured before the harness warmed an idle GPU: GRID.md). Their
rows go from every per-config table and the run is marked interrupted; the resume re-measures
exactly them with the run's own settings.
"""

from __future__ import annotations

import sys
from pathlib import Path

from cuda_l2_explorer.db import writes
from cuda_l2_explorer.db.store import Store


def main(store_path: str, run_prefix: str, configs: str) -> None:
    shapes = [tuple(int(x) for x in c.split("_")) for c in configs.split(",")]
    with Store.open(Path(store_path)) as store:
        found = store.con.execute(
            "SELECT run_id FROM runs WHERE run_id LIKE ? || '%'", [run_prefix]
        ).fetchall()
        if len(found) != 1:
            sys.exit(f"{run_prefix!r} matches {len(found)} runs, not one")
        run_id = found[0][0]
        with store.transaction():
            for m, n, k in shapes:
                writes.clear_config(store, run_id, m, n, k)
            writes.finish_run(store, run_id, "interrupted", None)
    print(f"run {run_id}: {len(shapes)} config(s) cleared; resume it with --resume {run_id}")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
