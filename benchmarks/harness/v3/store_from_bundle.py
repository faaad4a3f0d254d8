"""A store file holding some runs of the bundled dataset as the store's own rows, for a device call
that must see them with --no-bundled (a server run reuses its offline run's cuBLASLt choices and
launcher audits from the store): the local store that a call carries when the one it grew is lost.

    python benchmarks/harness/v3/store_from_bundle.py OUT.duckdb RUN_ID_PREFIX...

Each run brings its rows of every run-keyed table, with the kernel sets, kernels and GPUs they name.
"""

from __future__ import annotations

import sys
from pathlib import Path

from cuda_l2_explorer.db import bundled
from cuda_l2_explorer.db.store import Store, sql_literal

RUN_TABLES = ("runs", "measurements", "samples", "audit_findings", "run_configs", "search_log")


def copy_runs(out: Path, prefixes: list[str]) -> dict[str, int]:
    files = bundled.table_files(bundled.default_dir())
    if out.exists():
        raise SystemExit(f"{out} exists: the copy starts from a new store")
    store = Store.open(out, with_bundled=False, views=False)
    con = store.con
    runs_file = sql_literal(str(files["runs"]))
    runs = [
        row[0]
        for prefix in prefixes
        for row in con.execute(
            f"SELECT run_id FROM read_parquet({runs_file}) WHERE starts_with(run_id, ?)", [prefix]
        ).fetchall()
    ]
    missing = [p for p in prefixes if not any(r.startswith(p) for r in runs)]
    if missing:
        raise SystemExit(f"not in the bundled dataset: {', '.join(missing)}")
    con.execute("CREATE TEMP TABLE wanted AS SELECT unnest(?::VARCHAR[]) AS run_id", [runs])
    counts: dict[str, int] = {}
    with store.transaction():
        for table in RUN_TABLES:
            if table in files:
                source = f"read_parquet({sql_literal(str(files[table]))})"
                wanted = "run_id IN (SELECT run_id FROM wanted)"
                con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM {source} WHERE {wanted}")
        sets = "SELECT set_id FROM runs WHERE set_id IS NOT NULL"
        for table, where in (
            ("kernel_sets", f"set_id IN ({sets})"),
            ("kernels", f"set_id IN ({sets})"),
            ("gpus", "gpu IN (SELECT gpu FROM runs UNION SELECT gpu FROM kernel_sets)"),
        ):
            source = f"read_parquet({sql_literal(str(files[table]))})"
            con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM {source} WHERE {where}")
        for table in (*RUN_TABLES, "kernel_sets", "kernels", "gpus"):
            counts[table] = con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
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
