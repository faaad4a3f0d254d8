"""Cells that a spreadsheet would run as a formula, defused for every CSV/TSV the tool writes (the
CLI's ``--csv`` and the app's clipboard and table exports): one rule, here, for both front ends.

A text cell starting with =, +, -, @, a tab or a carriage return is prefixed with a quote (the
OWASP advice for CSV injection); numbers are left as they are. Only the standard library is used.
"""

from __future__ import annotations

from typing import Any

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value: Any) -> Any:
    """``value``, or for a text cell a spreadsheet would evaluate, the same text after a quote."""
    if isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    return value
