"""Compare: two selections (sets, GPUs, runs or published vs measured) config by config."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from cuda_l2_explorer.app.frame_table import FrameTable
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Select, Static

if TYPE_CHECKING:
    import polars as pl


class ComparePane(Vertical):
    DEFAULT_CSS = """
    ComparePane #compare-controls { height: 3; }
    ComparePane Select { width: 1fr; }
    ComparePane #compare-summary { height: auto; padding: 0 1; }
    ComparePane #compare-table { height: 1fr; }
    """

    class Wanted(Message):
        def __init__(self, left: int, right: int) -> None:
            self.left = left
            self.right = right
            super().__init__()

    def compose(self) -> ComposeResult:
        with Horizontal(id="compare-controls"):
            yield Select([], prompt="left", id="compare-left")
            yield Select([], prompt="right", id="compare-right")
        yield Static(
            "Pick two selections to compare their speedups over the best baseline.", id="compare-summary"
        )
        yield FrameTable(id="compare-table")

    def set_choices(self, labels: list[str]) -> None:
        options = [(label, i) for i, label in enumerate(labels)]
        for widget_id in ("#compare-left", "#compare-right"):
            self.query_one(widget_id, Select).set_options(options)

    @on(Select.Changed)
    def _changed(self) -> None:
        left = self.query_one("#compare-left", Select).value
        right = self.query_one("#compare-right", Select).value
        if isinstance(left, int) and isinstance(right, int):
            self.post_message(self.Wanted(left, right))

    def show(self, left: pl.DataFrame, right: pl.DataFrame, left_label: str, right_label: str) -> None:
        import polars as pl

        joined = (
            left.select("m", "n", "k", pl.col("speedup").alias("left"))
            .join(
                right.select("m", "n", "k", pl.col("speedup").alias("right")), on=["m", "n", "k"], how="inner"
            )
            .with_columns((pl.col("right") / pl.col("left")).alias("right/left"))
            .sort("right/left")
        )
        both = joined.drop_nulls()
        summary = self.query_one("#compare-summary", Static)
        if both.height == 0:
            summary.update(f"No common configs with speedups: {left_label} vs {right_label}.")
        else:

            def geomean(column: str) -> float:
                return math.exp(both[column].log().mean())

            summary.update(
                f"{both.height} common configs. Geomean speedup over the best baseline: left "
                f"{geomean('left'):.3f}, right {geomean('right'):.3f}; "
                f"right/left {geomean('right/left'):.3f}."
                f"\nleft = {left_label}\nright = {right_label}"
            )
        self.query_one("#compare-table", FrameTable).set_rows(
            [(c, c, True) for c in joined.columns],
            [
                ["-" if v is None else (f"{v:.3f}" if isinstance(v, float) else str(v)) for v in row]
                for row in joined.iter_rows()
            ],
        )
