"""Move a store between machines in one compact file (DuckDB EXPORT/IMPORT DATABASE, zstd Parquet).

    python benchmarks/store_pack.py pack STORE.duckdb PACK.tar
    python benchmarks/store_pack.py unpack PACK.tar STORE.duckdb

A device call brings back at most 16 MiB a file; a full-grid store with its samples is larger,
its Parquet export is not. Used to resume one benchmark run across device calls.
"""

from __future__ import annotations

import sys
import tarfile
import tempfile
from pathlib import Path

from cuda_l2_explorer.db.store import export_store_files, import_store_files


def pack(store: Path, target: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        export_store_files(store, Path(tmp) / "db")
        with tarfile.open(target, "w") as tar:
            tar.add(f"{tmp}/db", arcname="db")


def unpack(source: Path, store: Path) -> None:
    if store.exists():
        raise SystemExit(f"{store} exists; unpack into a new file")
    with tempfile.TemporaryDirectory() as tmp:
        with tarfile.open(source) as tar:
            tar.extractall(tmp, filter="data")
        import_store_files(Path(tmp) / "db", store)


if __name__ == "__main__":
    verb, a, b = sys.argv[1:4]
    {"pack": pack, "unpack": unpack}[verb](Path(a), Path(b))
    print(f"{verb}: {a} -> {b}")
