"""Overview: aggregates per set, mode and baseline, and the speedup distribution."""

from __future__ import annotations

import polars as pl
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Static

from explorer.app.charts import speedup_histogram
from explorer.app.data import Selection

COLUMNS = ("set_id", "gpu", "mode", "source", "baseline", "configs", "geomean", "mean", "win_rate", "min")
HEADLINE = (
    "best-baseline",
    "torch.matmul",
    "cuBLAS-max",
    "cuBLASLt-heuristic-max",
    "cuBLASLt-auto-tuning-max",
)


class OverviewPane(VerticalScroll):
    DEFAULT_CSS = """
    OverviewPane #overview-stats { height: auto; max-height: 22; }
    OverviewPane #overview-chart { height: auto; }
    """

    def compose(self) -> ComposeResult:
        yield Static("loading…", id="overview-title")
        yield DataTable(id="overview-stats", zebra_stripes=True, cursor_type="row")
        yield Static("", id="overview-chart")

    def show(self, stats: pl.DataFrame, selection: Selection | None, table: pl.DataFrame | None) -> None:
        title = self.query_one("#overview-title", Static)
        grid = self.query_one("#overview-stats", DataTable)
        grid.clear(columns=True)
        if stats.height == 0:
            title.update("No speedups in the store yet.")
            return
        shown = stats.filter(pl.col("baseline").is_in(HEADLINE))
        sets = shown["set_id"].n_unique()
        title.update(
            f"[b]{sets} kernel set(s)[/b] — geomean first; win rate = faster beyond the run-to-run spread "
            "(published rows: any ratio above 1); min = the worst config"
        )
        for column in COLUMNS:
            grid.add_column(column.replace("_", " "), key=column)
        for row in shown.select(COLUMNS).iter_rows():
            grid.add_row(*[f"{v:.3f}" if isinstance(v, float) else str(v) for v in row])
        chart = self.query_one("#overview-chart", Static)
        if selection is not None and table is not None:
            width = max(self.size.width - 4, 40)
            chart.update(
                speedup_histogram(
                    table["speedup"].to_list(),
                    width,
                    16,
                    f"{selection.label}: speedup over the best baseline",
                )
            )
