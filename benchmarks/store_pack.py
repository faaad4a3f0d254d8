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

import duckdb


def pack(store: Path, target: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        con = duckdb.connect(str(store), read_only=True)
        con.execute(f"EXPORT DATABASE '{tmp}/db' (FORMAT parquet, COMPRESSION zstd)")
        con.close()
        with tarfile.open(target, "w") as tar:
            tar.add(f"{tmp}/db", arcname="db")


def unpack(source: Path, store: Path) -> None:
    if store.exists():
        raise SystemExit(f"{store} exists; unpack into a new file")
    with tempfile.TemporaryDirectory() as tmp:
        with tarfile.open(source) as tar:
            tar.extractall(tmp, filter="data")
        con = duckdb.connect(str(store))
        con.execute(f"IMPORT DATABASE '{tmp}/db'")
        con.close()


if __name__ == "__main__":
    verb, a, b = sys.argv[1:4]
    {"pack": pack, "unpack": unpack}[verb](Path(a), Path(b))
    print(f"{verb}: {a} -> {b}")
