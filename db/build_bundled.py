"""Maintainer command: rebuild the bundled dataset shipped in ``db/bundled/``.

    python -m cuda_l2_explorer.db.build_bundled --published tests/data/upstream/*.csv [--store RUNS.duckdb]

Published CSVs go through the same importer as the CLI's ``import-results``; ``--store`` adds
every row of a measured store file (the benchmark issue's runs). The result replaces the
Parquet files and manifest atomically enough for a maintainer: a failed build leaves the old
dataset in place.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path

from cuda_l2_explorer.db import bundled
from cuda_l2_explorer.db.schema import DATA_TABLES
from cuda_l2_explorer.db.store import Store
from cuda_l2_explorer.importer.fetch import FetchOptions
from cuda_l2_explorer.importer.published import UPSTREAM_BASE, import_published, load_published

# A measured store describes its GPU in full (SM count, L2): it wins over the label-only row a
# published import made. Several stores may measure one set (offline in one, server in another):
# the set and its kernels are kept from the first store, once checked to be the same kernels.
_MERGE_VERB = {"gpus": "INSERT OR REPLACE", "kernel_sets": "INSERT OR IGNORE", "kernels": "INSERT OR IGNORE"}


def _refuse_different_kernels(store: Store) -> None:
    clash = store.con.execute(
        "SELECT s.kernel_id FROM src.kernels s JOIN main.kernels k USING (kernel_id) "
        "WHERE s.source_sha256 IS DISTINCT FROM k.source_sha256 "
        "OR s.params::TEXT IS DISTINCT FROM k.params::TEXT "
        "LIMIT 3"
    ).fetchall()
    if clash:
        names = ", ".join(row[0] for row in clash)
        raise SystemExit(f"two stores hold different kernels under one id ({names}): measure one set per id")


def build(published: list[Path], stores: list[Path], out_dir: Path, description: str) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        staging_db = Path(tmp) / "bundle.duckdb"
        with Store.open(staging_db, with_bundled=False) as store:
            files = [load_published(str(p), FetchOptions()) for p in published]
            import_published(store, files, command_line="python -m cuda_l2_explorer.db.build_bundled")
            # Cite where the files are published, not the maintainer's checkout.
            for published in files:
                store.con.execute(
                    "UPDATE main.runs SET source = ? WHERE source = ?",
                    [f"{UPSTREAM_BASE}/{Path(published.origin).name}", published.origin],
                )
            for source in stores:
                store.con.execute(f"ATTACH '{source}' AS src (READ_ONLY)")
                with store.transaction():
                    _refuse_different_kernels(store)
                    for table in DATA_TABLES:
                        verb = _MERGE_VERB.get(table, "INSERT")
                        store.con.execute(f"{verb} INTO main.{table} BY NAME SELECT * FROM src.{table}")
                store.con.execute("DETACH src")
        staging_dir = Path(tmp) / "out"
        data = bundled.build(staging_db, staging_dir, description)
        out_dir.mkdir(parents=True, exist_ok=True)
        for old in out_dir.glob("*.parquet"):
            old.unlink()
        for item in staging_dir.iterdir():
            shutil.copyfile(item, out_dir / item.name)
    return data


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python -m cuda_l2_explorer.db.build_bundled", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--published", nargs="*", type=Path, default=[], help="SPEC §5 CSVs")
    parser.add_argument("--store", nargs="*", type=Path, default=[], help="store files with measured runs")
    parser.add_argument("--out", type=Path, default=bundled.default_dir())
    parser.add_argument(
        "--description",
        default="published speedups of the reference system (CUDA-L2 eval_results)",
    )
    args = parser.parse_args()
    data = build(sorted(args.published), args.store, args.out, args.description)
    print(f"bundled dataset written to {args.out}: {data['rows']}")


if __name__ == "__main__":
    main()
