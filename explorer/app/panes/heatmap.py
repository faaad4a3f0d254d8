"""Heatmap: two dimensions of the grid at a chosen value of the third, colour = speedup."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cuda_l2_explorer.app.charts import heatmap
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Select, Static

if TYPE_CHECKING:
    import polars as pl

AXES = {"M x N": ("m", "n", "k"), "M x K": ("m", "k", "n"), "N x K": ("n", "k", "m")}


class HeatmapPane(VerticalScroll):
    DEFAULT_CSS = """
    HeatmapPane #heatmap-controls { height: 3; }
    HeatmapPane Select { width: 24; }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.frame: pl.DataFrame | None = None

    def compose(self) -> ComposeResult:
        with Horizontal(id="heatmap-controls"):
            yield Select([(k, k) for k in AXES], value="M x N", allow_blank=False, id="heatmap-axes")
            yield Select([], prompt="fixed value", id="heatmap-fixed")
        yield Static("", id="heatmap-grid")

    def show(self, frame: pl.DataFrame) -> None:
        self.frame = frame
        self._refill_fixed()

    def _axes(self) -> tuple[str, str, str]:
        return AXES[str(self.query_one("#heatmap-axes", Select).value)]

    def _refill_fixed(self) -> None:
        fixed_select = self.query_one("#heatmap-fixed", Select)
        if self.frame is None or self.frame.height == 0:
            fixed_select.set_options([])
            self.query_one("#heatmap-grid", Static).update("no data for this selection")
            return
        fixed = self._axes()[2]
        values = sorted(set(self.frame[fixed].to_list()))
        fixed_select.set_options([(str(v), v) for v in values])
        # Default to a middle value so the first view is a typical slice, not the smallest one.
        fixed_select.value = values[len(values) // 2]
        self._draw()

    @on(Select.Changed, "#heatmap-axes")
    def _axes_changed(self) -> None:
        self._refill_fixed()

    @on(Select.Changed, "#heatmap-fixed")
    def _draw(self) -> None:
        value = self.query_one("#heatmap-fixed", Select).value
        if self.frame is None or self.frame.height == 0 or value is Select.BLANK:
            return
        row, col, fixed = self._axes()
        self.query_one("#heatmap-grid", Static).update(heatmap(self.frame, row, col, fixed, int(value)))
