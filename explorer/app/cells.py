"""Table cells as plain text. A DataTable reads a str cell as Rich markup: a compile error's
"[with T=int]" or a set named "a[/b]" was mangled, or raised MarkupError and stopped the app."""

from __future__ import annotations

from rich.text import Text


def plain(value: object) -> Text:
    """``value`` shown as written (its str), never as markup."""
    return Text(str(value))
