"""The read-only bundled dataset: Parquet files, one per store table, shipped in the package.

``build`` writes it from a store file; ``Store.open`` layers it beside the user's store.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from cuda_l2_explorer.db.schema import DATA_TABLES, SCHEMA_VERSION

MANIFEST = "manifest.json"


def default_dir() -> Path:
    return Path(__file__).resolve().parent / "bundled"


def table_files(directory: Path) -> dict[str, Path]:
    """The dataset's Parquet file per table; empty when there is no (complete) dataset."""
    if not (directory / MANIFEST).is_file():
        return {}
    return {t: directory / f"{t}.parquet" for t in DATA_TABLES if (directory / f"{t}.parquet").is_file()}


def manifest(directory: Path | None = None) -> dict:
    path = (directory or default_dir()) / MANIFEST
    if not path.is_file():
        return {}
    return json.loads(path.read_text())


def build(source_db: Path, directory: Path, description: str) -> dict:
    """Export every data table of ``source_db`` to ``directory`` and write the manifest."""
    import duckdb

    directory.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect(str(source_db), read_only=True)
    counts: dict[str, int] = {}
    try:
        for table in DATA_TABLES:
            target = directory / f"{table}.parquet"
            tmp = target.with_suffix(".parquet.tmp")
            con.execute(
                f"COPY (SELECT * FROM {table} ORDER BY ALL) TO '{tmp}' (FORMAT parquet, COMPRESSION zstd)"
            )
            tmp.replace(target)
            counts[table] = int(con.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
    finally:
        con.close()
    data = {
        "schema_version": SCHEMA_VERSION,
        "description": description,
        "built_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "rows": counts,
    }
    (directory / MANIFEST).write_text(json.dumps(data, indent=2) + "\n")
    return data
