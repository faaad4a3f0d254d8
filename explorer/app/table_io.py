"""Rows out of the app: clipboard text (TSV, CSV, Markdown) and table files (CSV, Parquet).

Cells that a spreadsheet would run as a formula are defused in CSV/TSV output by the rule the
CLI's ``--csv`` uses too (``engine.spreadsheet.safe_cell``), so an exported table cannot execute
anything.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polars as pl
from cuda_l2_explorer.engine.spreadsheet import safe_cell

__all__ = ["export_frame", "rows_as_text", "safe_cell"]


def _cell_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def rows_as_text(columns: Sequence[str], rows: Sequence[Sequence[Any]], fmt: str) -> str:
    """'tsv', 'csv' or 'markdown' text for the clipboard."""
    if fmt == "markdown":
        head = "| " + " | ".join(columns) + " |"
        rule = "|" + "|".join("---" for _ in columns) + "|"
        body = ["| " + " | ".join(_cell_text(v).replace("|", "\\|") for v in row) + " |" for row in rows]
        return "\n".join([head, rule, *body]) + "\n"
    out = io.StringIO()
    writer = csv.writer(out, delimiter="\t" if fmt == "tsv" else ",", lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow([_cell_text(safe_cell(v)) for v in row])
    return out.getvalue()


def export_frame(frame: pl.DataFrame, path: Path, overwrite: bool = False) -> Path:
    """Write the table view to CSV or Parquet (by suffix), atomically; never over a file unasked."""
    path = path.expanduser()
    if path.suffix.lower() not in (".csv", ".parquet"):
        raise ValueError("export file must end in .csv or .parquet")
    if path.exists() and not overwrite:
        raise FileExistsError(f"{path} exists")
    tmp = path.with_name(f".{path.name}.tmp")
    if path.suffix.lower() == ".csv":
        safe = frame.with_columns(
            [
                pl.col(c).map_elements(safe_cell, return_dtype=pl.String)
                for c, t in frame.schema.items()
                if t == pl.String
            ]
        )
        safe.write_csv(tmp)
    else:
        frame.write_parquet(tmp)
    tmp.replace(path)
    return path
