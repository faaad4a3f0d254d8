"""Maintainer command: rebuild the bundled dataset shipped in ``db/bundled/``.

    python -m cuda_l2_explorer.importer.bundle --published tests/data/upstream/*.csv [--store RUNS.duckdb]
    python -m cuda_l2_explorer.importer.bundle --base db/bundled --store GRID.duckdb --replace-kernels
    python -m cuda_l2_explorer.importer.bundle --base db/bundled --search-log TUNE.duckdb

Published CSVs go through the same importer as the CLI's ``import-results``; ``--store`` adds
every row of a measured store file (measured runs of our sets); ``--search-log`` a tune
store's searches alone (the evidence behind picks merged into a set and measured with it). The
result replaces the Parquet files and manifest atomically enough for a maintainer: a failed build
leaves the old dataset in place.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path

from cuda_l2_explorer.db import bundled, writes
from cuda_l2_explorer.db.schema import SCHEMA_VERSION
from cuda_l2_explorer.db.store import Store
from cuda_l2_explorer.importer.fetch import FetchOptions
from cuda_l2_explorer.importer.published import UPSTREAM_BASE, import_published, load_published


def build(
    published: list[Path],
    stores: list[Path],
    out_dir: Path,
    description: str,
    base: Path | None = None,
    replace_kernels: bool = False,
    drop_runs: list[str] | None = None,
    search_logs: list[Path] | None = None,
) -> dict:
    """``base``: start from that bundled dataset (a folder) instead of an empty store; ``drop_runs``:
    runs of the base to leave out (superseded by a store's re-measurement of the same set)."""
    with tempfile.TemporaryDirectory() as tmp:
        staging_db = Path(tmp) / "bundle.duckdb"
        with Store.open(staging_db, with_bundled=False) as store:
            if base is not None:
                version = bundled.manifest(base).get("schema_version")
                if version != SCHEMA_VERSION:
                    raise SystemExit(
                        f"{base} holds schema v{version}, not v{SCHEMA_VERSION}: rebuild it from its sources"
                    )
                with store.transaction():
                    writes.load_bundled(store, bundled.table_files(base))
                    dropping = sorted(set(drop_runs or []))
                    missing = len(dropping) - writes.delete_runs(store, dropping)
                    if missing:
                        raise SystemExit(f"{missing} of the runs to drop are not in {base}")
            files = [load_published(str(p), FetchOptions()) for p in published]
            import_published(store, files, command_line="python -m cuda_l2_explorer.importer.bundle")
            # Cite where the files are published, not the maintainer's checkout.
            with store.transaction():
                for published in files:
                    writes.cite_source(
                        store, published.origin, f"{UPSTREAM_BASE}/{Path(published.origin).name}"
                    )
            for source in stores:
                # Several stores may measure one set; its kernels must be the same in each.
                clash = writes.merge_store(store, source, replace_kernels)
                if clash:
                    names = ", ".join(clash)
                    raise SystemExit(
                        f"two stores hold different kernels under one id ({names}): measure one set per id"
                    )
            for source in search_logs or []:
                writes.merge_search_logs(store, source)
            with store.transaction():
                writes.drop_foreign_sources(store)
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
        prog="python -m cuda_l2_explorer.importer.bundle", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--published", nargs="*", type=Path, default=[], help="SPEC §5 CSVs")
    parser.add_argument("--store", nargs="*", type=Path, default=[], help="store files with measured runs")
    parser.add_argument(
        "--search-log",
        nargs="*",
        type=Path,
        default=[],
        help="tune store files whose searches (not their scratch kernel set) go in",
    )
    parser.add_argument("--out", type=Path, default=bundled.default_dir())
    parser.add_argument("--base", type=Path, help="start from this bundled dataset folder (e.g. db/bundled)")
    parser.add_argument(
        "--replace-kernels",
        action="store_true",
        help="the stores' kernels replace the base's under the same id (a re-tuned set)",
    )
    parser.add_argument(
        "--drop-run",
        action="append",
        default=[],
        metavar="RUN_ID",
        help="leave this run of --base out (repeatable): a run the new stores re-measure",
    )
    parser.add_argument(
        "--description",
        default="published speedups of the reference system (CUDA-L2 eval_results)",
    )
    args = parser.parse_args()
    data = build(
        sorted(args.published),
        args.store,
        args.out,
        args.description,
        args.base,
        args.replace_kernels,
        args.drop_run,
        args.search_log,
    )
    print(f"bundled dataset written to {args.out}: {data['rows']}")


if __name__ == "__main__":
    main()
