"""Configs: every config of the selected set, sortable, filterable by an expression or a search."""

from __future__ import annotations

import time

import polars as pl
from cuda_l2_explorer.db.filter_expr import FilterError, parse_filter
from cuda_l2_explorer.db.shapes import Shape
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import DataTable, Input, Static

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


def _fmt(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}" if abs(value) < 1000 else f"{value:.0f}"
    return str(value)


class ConfigsPane(Vertical):
    """Filter (expression) + search (M_N_K substring) over the table the app loaded."""

    DEFAULT_CSS = """
    ConfigsPane #configs-controls { height: 3; }
    ConfigsPane #configs-filter { width: 2fr; }
    ConfigsPane #configs-search { width: 1fr; }
    ConfigsPane #configs-info { height: 1; color: $text-muted; }
    """

    class ConfigChosen(Message):
        def __init__(self, shape: Shape) -> None:
            self.shape = shape
            super().__init__()

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.frame = pl.DataFrame()
        self.view = pl.DataFrame()
        self.sort_column: str | None = "speedup"
        self.sort_reverse = False
        self.last_update_ms = 0.0

    def compose(self) -> ComposeResult:
        with Horizontal(id="configs-controls"):
            yield Input(placeholder="filter, e.g. m >= 1024 and speedup < 1", id="configs-filter")
            yield Input(placeholder="search M_N_K, e.g. 4096_", id="configs-search")
        yield Static("", id="configs-info")
        yield DataTable(id="configs-table", zebra_stripes=True, cursor_type="row")

    def show(self, frame: pl.DataFrame) -> None:
        self.frame = (
            frame.with_columns(pl.format("{}_{}_{}", "m", "n", "k").alias("mnk")) if frame.height else frame
        )
        self.refresh_view()

    @on(Input.Submitted, "#configs-filter")
    @on(Input.Submitted, "#configs-search")
    def _apply(self) -> None:
        self.refresh_view()

    @on(DataTable.HeaderSelected)
    def _sort(self, event: DataTable.HeaderSelected) -> None:
        column = str(event.column_key.value)
        self.sort_reverse = not self.sort_reverse if column == self.sort_column else False
        self.sort_column = column
        self.refresh_view()

    @on(DataTable.RowSelected, "#configs-table")
    def _chosen(self, event: DataTable.RowSelected) -> None:
        m, n, k = (int(x) for x in str(event.row_key.value).split("_"))
        self.post_message(self.ConfigChosen(Shape(m, n, k)))

    def filtered(self) -> pl.DataFrame:
        """The frame after filter, search and sort; raises FilterError for a bad expression."""
        frame = self.frame
        if frame.height == 0:
            return frame
        text = self.query_one("#configs-filter", Input).value
        frame = frame.filter(parse_filter(text, [c for c in frame.columns if c != "mnk"]))
        search = self.query_one("#configs-search", Input).value.strip()
        if search:
            frame = frame.filter(pl.col("mnk").str.contains(search, literal=True))
        if self.sort_column in frame.columns:
            frame = frame.sort(self.sort_column, descending=self.sort_reverse, nulls_last=True)
        return frame

    def refresh_view(self) -> None:
        started = time.perf_counter()
        info = self.query_one("#configs-info", Static)
        try:
            view = self.filtered()
        except (FilterError, pl.exceptions.PolarsError) as exc:
            self.app.notify(str(exc).splitlines()[0], title="filter", severity="error")
            return
        self.view = view
        table = self.query_one("#configs-table", DataTable)
        table.clear(columns=True)
        columns = [c for c in SHOWN if c in view.columns]
        for column in columns:
            arrow = ""
            if column == self.sort_column:
                arrow = " ▼" if self.sort_reverse else " ▲"
            table.add_column(column.replace("cuBLASLt-", "Lt-") + arrow, key=column)
        for row in view.select(*columns, "mnk").iter_rows():
            table.add_row(*[_fmt(v) for v in row[:-1]], key=row[-1])
        self.last_update_ms = (time.perf_counter() - started) * 1e3
        info.update(
            f"{view.height} of {self.frame.height} configs · sort: {self.sort_column or '-'} · "
            "Enter: kernel view · y: copy row · e: export table"
        )
