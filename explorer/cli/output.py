"""Rendering results on stdout: aligned text tables, JSON or CSV. Messages go to stderr.

Polars is imported only when a frame is passed, so the GPU machine (which carries no polars)
can print ``bench`` summaries.
"""

from __future__ import annotations

import csv
import json
import math
import os
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from cuda_l2_explorer.engine.spreadsheet import safe_cell


def use_color(stream: TextIO) -> bool:
    """Colour only on a terminal and never when NO_COLOR is set (https://no-color.org)."""
    return stream.isatty() and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"


def message(text: str) -> None:
    print(text, file=sys.stderr)


def _cell(value: Any, digits: int) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        return f"{value:.{digits}f}"
    return str(value)


def _table(data: Any) -> tuple[list[str], list[tuple]]:
    """(columns, rows) from a Polars frame, a list of dicts, or a dict of one row."""
    if hasattr(data, "iter_rows") and hasattr(data, "columns"):
        return list(data.columns), list(data.iter_rows())
    if isinstance(data, dict):
        data = [data]
    columns: list[str] = []
    for record in data:
        columns += [c for c in record if c not in columns]
    return columns, [tuple(record.get(c) for c in columns) for record in data]


def text_table(
    columns: Sequence[str], rows: Sequence[Sequence[Any]], digits: int = 3, stream: TextIO | None = None
) -> str:
    stream = stream or sys.stdout
    cells = [[_cell(v, digits) for v in row] for row in rows]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(columns)]
    numeric = [
        any(isinstance(row[i], int | float) and not isinstance(row[i], bool) for row in rows)
        for i in range(len(columns))
    ]

    def line(parts: Sequence[str]) -> str:
        return "  ".join(
            c.rjust(w) if num else c.ljust(w) for c, w, num in zip(parts, widths, numeric, strict=True)
        ).rstrip()

    head = line(columns)
    if use_color(stream):
        head = f"\x1b[1m{head}\x1b[0m"
    return "\n".join([head, *(line(r) for r in cells)])


def _jsonable(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return value


def _json_ready(data: Any) -> Any:
    """``data`` with every frame a list of records and every non-finite float null, however deep
    (a NaN would make the output invalid JSON)."""
    if hasattr(data, "iter_rows"):
        return [{k: _jsonable(v) for k, v in row.items()} for row in data.iter_rows(named=True)]
    if isinstance(data, dict):
        return {k: _json_ready(v) for k, v in data.items()}
    if isinstance(data, list | tuple):
        return [_json_ready(v) for v in data]
    return _jsonable(data)


def emit(data: Any, fmt: str, digits: int = 3) -> None:
    """Write ``data`` (a Polars frame, list of dicts or dict) to stdout as text, JSON or CSV (text
    cells a spreadsheet would run as formulas are quoted, as in the app's exports)."""
    out = sys.stdout
    if fmt == "json":
        json.dump(_json_ready(data), out, indent=2, default=_jsonable)
        out.write("\n")
    else:
        columns, rows = _table(data)
        if fmt == "csv":
            writer = csv.writer(out, lineterminator="\n")
            writer.writerow(columns)
            for row in rows:
                writer.writerow(["" if v is None else safe_cell(_jsonable(v)) for v in row])
        else:
            out.write(text_table(columns, rows, digits) + "\n")
    out.flush()
