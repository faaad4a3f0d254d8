"""Rendering results on stdout: aligned text tables, JSON or CSV. Messages go to stderr."""

from __future__ import annotations

import csv
import json
import math
import os
import sys
from collections.abc import Sequence
from typing import Any, TextIO

import polars as pl


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


def text_table(frame: pl.DataFrame, digits: int = 3, stream: TextIO | None = None) -> str:
    stream = stream or sys.stdout
    headers = frame.columns
    rows = [[_cell(v, digits) for v in row] for row in frame.iter_rows()]
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(headers)]
    numeric = [frame[c].dtype.is_numeric() for c in headers]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(
            c.rjust(w) if num else c.ljust(w) for c, w, num in zip(cells, widths, numeric, strict=True)
        ).rstrip()

    head = line(headers)
    if use_color(stream):
        head = f"\x1b[1m{head}\x1b[0m"
    return "\n".join([head, *(line(r) for r in rows)])


def _jsonable(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return value


def emit(data: pl.DataFrame | dict | list, fmt: str, digits: int = 3) -> None:
    """Write ``data`` to stdout as 'text', 'json' or 'csv'."""
    out = sys.stdout
    if fmt == "json":
        if isinstance(data, pl.DataFrame):
            data = [{k: _jsonable(v) for k, v in row.items()} for row in data.iter_rows(named=True)]
        json.dump(data, out, indent=2, default=_jsonable)
        out.write("\n")
    elif fmt == "csv":
        if not isinstance(data, pl.DataFrame):
            data = pl.DataFrame(data)
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(data.columns)
        for row in data.iter_rows():
            writer.writerow(["" if v is None else _jsonable(v) for v in row])
    else:
        if not isinstance(data, pl.DataFrame):
            data = pl.DataFrame(data)
        out.write(text_table(data, digits) + "\n")
    out.flush()
