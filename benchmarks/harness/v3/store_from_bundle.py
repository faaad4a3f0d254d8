"""A store file holding some runs of the bundled dataset as the store's own rows, for a device call
that must see them with --no-bundled (a server run reuses its offline run's cuBLASLt choices and
launcher audits from the store): the local store that a call carries when the one it grew is lost.

    python benchmarks/harness/v3/store_from_bundle.py OUT.duckdb RUN_ID_PREFIX...

Each run brings its rows of every run-keyed table; the kernel sets, kernels, GPUs and published
rows of the dataset come along (a few MB), the other runs do not.
"""

from __future__ import annotations

import sys
from pathlib import Path

from cuda_l2_explorer.db import bundled, writes
from cuda_l2_explorer.db.store import Store

COUNTED = ("runs", "measurements", "samples", "audit_findings", "run_configs", "search_log", "kernels")


def copy_runs(out: Path, prefixes: list[str]) -> dict[str, int]:
    """The bundled dataset into a new store file ``out`` (writes.load_bundled), less every run whose
    id starts with none of ``prefixes`` (writes.delete_runs); rows per table."""
    if out.exists():
        raise SystemExit(f"{out} exists: the copy starts from a new store")
    store = Store.open(out, with_bundled=False, views=False)
    try:
        with store.transaction():
            writes.load_bundled(store, bundled.table_files(bundled.default_dir()))
            runs = [run for (run,) in store.con.execute("SELECT run_id FROM main.runs").fetchall()]
            missing = [p for p in prefixes if not any(run.startswith(p) for run in runs)]
            if missing:
                raise SystemExit(f"not in the bundled dataset: {', '.join(missing)}")
            writes.delete_runs(store, [run for run in runs if not run.startswith(tuple(prefixes))])
        count = "SELECT count(*) FROM main.{}"
        counts = {table: store.con.execute(count.format(table)).fetchone()[0] for table in COUNTED}
    except BaseException:
        store.close()
        out.unlink(missing_ok=True)  # no half-made store left behind
        raise
    store.close()
    return counts


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    for table, count in copy_runs(Path(argv[0]), argv[1:]).items():
        print(f"{table}: {count}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
