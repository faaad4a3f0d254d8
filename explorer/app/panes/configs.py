"""Configs: every config of the selected set, sortable, filterable by an expression or a search.

The cells are formatted once when the data arrives; a filter, a search or a sort is a Polars
query over the frame whose result is a row order for the table (no rows are rebuilt).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from cuda_l2_explorer.app.frame_table import FrameTable
from cuda_l2_explorer.db.shapes import Shape
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Input, Static

if TYPE_CHECKING:
    import polars as pl

SHOWN = (
    "m",
    "n",
    "k",
    "regime",
    "kernel_us",
    "best_baseline_us",
    "speedup",
    "vs torch.matmul",
    "vs cuBLAS-max",
    "vs cuBLASLt-heuristic-max",
    "vs cuBLASLt-auto-tuning-max",
    "floor_frac",
    "status",
    "audit",
)
ROW = "__row"  # each config's position in the frame: the table's row index


def _fmt(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}" if abs(value) < 1000 else f"{value:.0f}"
    return str(value)


# Short headers for the ratio columns, so that 160 columns show every column and 80 the speedup.
LABELS = {
    "vs torch.matmul": "vs torch",
    "vs cuBLAS-max": "vs cuBLAS",
    "vs cuBLASLt-heuristic-max": "vs Lt-heur",
    "vs cuBLASLt-auto-tuning-max": "vs Lt-auto",
}


def column_label(column: str) -> str:
    return LABELS.get(column, column)


class ConfigsPane(Vertical):
    """Filter (expression) + search (M_N_K substring) over the table the app loaded."""

    DEFAULT_CSS = """
    ConfigsPane #configs-controls { height: 3; }
    ConfigsPane #configs-filter { width: 2fr; }
    ConfigsPane #configs-search { width: 1fr; }
    ConfigsPane #configs-info { height: 1; width: 1fr; color: $text-muted; }
    ConfigsPane #configs-table { height: 1fr; }
    """
    BINDINGS = [
        Binding("s", "sort_menu", "sort", id="sort_menu"),
        Binding("S", "reverse_sort", "reverse sort", show=False, id="reverse_sort"),
    ]

    class ConfigChosen(Message):
        def __init__(self, shape: Shape) -> None:
            self.shape = shape
            super().__init__()

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._frame: pl.DataFrame | None = None  # None until the first table: Polars loads in a worker
        self._view: pl.DataFrame | None = None
        self._indexed: pl.DataFrame | None = None
        self.sort_column: str | None = "speedup"
        self.sort_reverse = False
        self.last_update_ms = 0.0

    @property
    def frame(self) -> pl.DataFrame:
        """The selection's table as the app loaded it (with an M_N_K column ``mnk``)."""
        return self._frame if self._frame is not None else _empty()

    @property
    def view(self) -> pl.DataFrame:
        """What the table shows: the frame after filter, search and sort."""
        return self._view if self._view is not None else _empty()

    def compose(self) -> ComposeResult:
        with Horizontal(id="configs-controls"):
            yield Input(placeholder="filter, e.g. m >= 1024 and speedup < 1", id="configs-filter")
            yield Input(placeholder="search M_N_K, e.g. 4096_", id="configs-search")
        yield Static("", id="configs-info")
        yield FrameTable(id="configs-table")

    def show(self, frame: pl.DataFrame) -> None:
        """A new table: its cells are formatted here, once; views of it only reorder rows."""
        import polars as pl

        if frame.height:
            frame = frame.with_columns(pl.format("{}_{}_{}", "m", "n", "k").alias("mnk"))
        self._frame = frame
        self._indexed = frame.with_row_index(ROW)
        columns = [c for c in SHOWN if c in frame.columns]
        cells = [[_fmt(v) for v in frame[c].to_list()] for c in columns]
        view = self._current_view()
        if view is None:  # a bad filter: all of the new table, in its order, until it is fixed
            view = self._indexed
        self.query_one("#configs-table", FrameTable).set_rows(
            [(c, column_label(c), frame.schema[c].is_numeric()) for c in columns],
            list(zip(*cells, strict=True)) if cells else [],
            frame["mnk"].to_list() if frame.height else [],
            view[ROW].to_list(),
        )
        self._shown(view)

    @on(Input.Submitted, "#configs-filter")
    @on(Input.Submitted, "#configs-search")
    def _apply(self) -> None:
        self.refresh_view()

    @on(FrameTable.HeaderSelected)
    def _header_clicked(self, event: FrameTable.HeaderSelected) -> None:
        self.sort_by(event.key)

    def sort_by(self, column: str, reverse: bool | None = None) -> None:
        """Sort by ``column``; choosing the sorted column again reverses it unless ``reverse`` says."""
        if reverse is None:
            reverse = not self.sort_reverse if column == self.sort_column else False
        self.sort_column, self.sort_reverse = column, reverse
        self.refresh_view(keep_cursor=False)  # a sort is read from the top

    def action_sort_menu(self) -> None:
        from cuda_l2_explorer.app.screens import SortScreen

        table = self.query_one("#configs-table", FrameTable)
        choices = [(c.key, c.label) for c in table.columns.values()]
        if not choices:
            self.app.notify("nothing to sort yet", severity="warning")
            return

        def chosen(column: str | None) -> None:
            if column is not None:
                self.sort_by(column)
            table.focus()

        self.app.push_screen(SortScreen(choices, self.sort_column, self.sort_reverse), chosen)

    def action_reverse_sort(self) -> None:
        if self.sort_column is not None:
            self.sort_by(self.sort_column, not self.sort_reverse)

    @on(FrameTable.RowSelected, "#configs-table")
    def _chosen(self, event: FrameTable.RowSelected) -> None:
        m, n, k = (int(x) for x in event.key.split("_"))
        self.post_message(self.ConfigChosen(Shape(m, n, k)))

    def filtered(self) -> pl.DataFrame:
        """The frame after filter, search and sort; raises FilterError for a bad expression."""
        if self._indexed is None:
            return self.frame
        return self._query(self._indexed).drop(ROW)

    def _query(self, frame: pl.DataFrame) -> pl.DataFrame:
        import polars as pl
        from cuda_l2_explorer.db.filter_expr import parse_filter

        text = self.query_one("#configs-filter", Input).value
        frame = frame.filter(parse_filter(text, [c for c in frame.columns if c not in ("mnk", ROW)]))
        search = self.query_one("#configs-search", Input).value.strip()
        if search:
            frame = frame.filter(pl.col("mnk").str.contains(search, literal=True))
        if self.sort_column in frame.columns:
            frame = frame.sort(
                self.sort_column, descending=self.sort_reverse, nulls_last=True, maintain_order=True
            )
        return frame

    def refresh_view(self, keep_cursor: bool = True) -> None:
        """Filter, search and sort the frame into the table; the cursor stays on its config where
        the new view still has it (unless ``keep_cursor`` is False)."""
        started = time.perf_counter()
        view = self._current_view()
        if view is None:
            return
        self.query_one("#configs-table", FrameTable).show_rows(view[ROW].to_list(), keep_cursor)
        self._shown(view)
        self.last_update_ms = (time.perf_counter() - started) * 1e3

    def _current_view(self) -> pl.DataFrame | None:
        """The frame filtered, searched and sorted as the controls say, with its row index column;
        None (and a notice) for a filter that does not parse or run, or before the first table."""
        if self._indexed is None:
            return None
        import polars as pl
        from cuda_l2_explorer.db.filter_expr import FilterError

        try:
            return self._query(self._indexed)
        except (FilterError, pl.exceptions.PolarsError) as exc:
            self.app.notify(str(exc).splitlines()[0], title="filter", severity="error")
            return None

    def _shown(self, view: pl.DataFrame) -> None:
        self.query_one("#configs-table", FrameTable).set_marker(
            self.sort_column, "▼" if self.sort_reverse else "▲"
        )
        self._view = view.drop(ROW)
        arrow = "▼" if self.sort_reverse else "▲"
        # One line of a fixed size (height 1, width 1fr): its text changes, its size does not, so
        # no layout pass (a whole screen's, ~20 ms of the ~50 a sort of 1000 rows costs).
        self.query_one("#configs-info", Static).update(
            f"{view.height} of {self.frame.height} configs · sort: {self.sort_column or '-'} {arrow} · "
            "s: sort · Enter: kernel view · y: copy row · e: export",
            layout=False,
        )


def _empty() -> pl.DataFrame:
    import polars as pl

    return pl.DataFrame()
