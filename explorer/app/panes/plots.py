"""Plots: speedup against problem size per regime; per-sample distributions of one config."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cuda_l2_explorer.app.charts import sample_distributions, speedup_vs_size
from cuda_l2_explorer.db.shapes import Shape
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

if TYPE_CHECKING:
    import polars as pl


class PlotsPane(VerticalScroll):
    DEFAULT_CSS = "PlotsPane Static { height: auto; }"

    def compose(self) -> ComposeResult:
        yield Static("", id="plots-size")
        yield Static(
            "Choose a config (Enter in Configs) to see its per-sample distributions.", id="plots-samples"
        )

    def show(self, frame: pl.DataFrame, title: str) -> None:
        width = max(self.size.width - 4, 60)
        self.query_one("#plots-size", Static).update(speedup_vs_size(frame, width, 20, title))

    def show_samples(self, samples: pl.DataFrame | None, shape: Shape) -> None:
        width = max(self.size.width - 4, 60)
        self.query_one("#plots-samples", Static).update(
            sample_distributions(samples, width, 14, f"{shape}: device time of every sample")
        )
