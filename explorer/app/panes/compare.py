"""Compare: two selections (sets, GPUs, runs or published vs measured) config by config, or the
reference system's published speedups beside our measurement of the same kernels (issue 17)."""

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


PAIR = "pair"
PUBLISHED_VS_MEASURED = "published-vs-measured"
VIEWS = {"two selections": PAIR, "published vs measured": PUBLISHED_VS_MEASURED}
# The published-vs-measured table: what names a config, then the two figures and how they relate,
# then the status and findings behind the measured one (db.views.published_vs_measured).
PVM_COLUMNS = (
    ("m", "m"),
    ("n", "n"),
    ("k", "k"),
    ("published", "published"),
    ("measured", "measured"),
    ("measured/published", "meas/publ"),
    ("verdict", "verdict"),
    ("metric", "metric"),  # device time, or the isolated call of a kernel no graph could capture
    ("status", "status"),
    ("audit", "audit"),
    ("caveats", "caveats"),
    ("reference_speedup", "ref metric"),
    ("regime", "regime"),
    ("mode", "mode"),
    ("gpu", "gpu"),
    ("set_id", "set"),
)

PVM_TEXT_COLUMNS = {"verdict", "metric", "status", "audit", "caveats", "regime", "mode", "gpu", "set_id"}


def _text(value: object) -> str:
    return "-" if value is None else (f"{value:.3f}" if isinstance(value, float) else str(value))


class ComparePane(Vertical):
    DEFAULT_CSS = """
    ComparePane #compare-controls { height: 3; }
    ComparePane Select { width: 1fr; }
    ComparePane #compare-view { width: 27; }
    ComparePane #compare-summary { height: auto; padding: 0 1; }
    ComparePane #compare-table { height: 1fr; }
    """

    class Wanted(Message):
        def __init__(self, left: int, right: int) -> None:
            self.left = left
            self.right = right
            super().__init__()

    class PublishedVsMeasuredWanted(Message):
        """Every set both published and measured on one GPU and mode, over the best baseline."""

    def compose(self) -> ComposeResult:
        with Horizontal(id="compare-controls"):
            yield Select(list(VIEWS.items()), value=PAIR, allow_blank=False, id="compare-view")
            yield Select([], prompt="left", id="compare-left")
            yield Select([], prompt="right", id="compare-right")
        yield Static(  # plain text: the reader's messages hold paths and commands, not markup
            "Pick two selections to compare their speedups over the best baseline.",
            id="compare-summary",
            markup=False,
        )
        yield FrameTable(id="compare-table")

    def set_choices(self, labels: list[str]) -> None:
        options = [(label, i) for i, label in enumerate(labels)]
        for widget_id in ("#compare-left", "#compare-right"):
            self.query_one(widget_id, Select).set_options(options)

    @on(Select.Changed, "#compare-view")
    def _view_changed(self, event: Select.Changed) -> None:
        published = event.value == PUBLISHED_VS_MEASURED
        for widget_id in ("#compare-left", "#compare-right"):
            self.query_one(widget_id, Select).display = not published
        if published:
            self.query_one("#compare-summary", Static).update("Reading the published and measured rows ...")
            self.query_one("#compare-table", FrameTable).set_rows([], [])
            self.post_message(self.PublishedVsMeasuredWanted())
        else:
            self._changed()

    @on(Select.Changed, "#compare-left, #compare-right")
    def _changed(self) -> None:
        if self.query_one("#compare-view", Select).value != PAIR:
            return
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
            [[_text(v) for v in row] for row in joined.iter_rows()],
        )

    def show_published_vs_measured(self, rows: pl.DataFrame, lines: list[str]) -> None:
        """The comparison over the best baseline, the configs the measurement contradicts most
        first (measured/published ascending; configs without a measured ratio last)."""
        import polars as pl

        if self.query_one("#compare-view", Select).value != PUBLISHED_VS_MEASURED:
            return  # the user went back to two selections while it was read
        ordered = rows.with_columns(
            (pl.col("measured") / pl.col("published")).alias("measured/published")
        ).sort("measured/published", nulls_last=True)
        self.query_one("#compare-summary", Static).update(
            "\n".join(lines)
            + "\nmeasured: our harness-3 ratio of the same kernel, GPU and mode; ref metric: the "
            "reference system's own (2MNK / host time), measured here"
        )
        self.query_one("#compare-table", FrameTable).set_rows(
            [(key, label, key not in PVM_TEXT_COLUMNS) for key, label in PVM_COLUMNS],
            [[_text(row[key]) for key, _ in PVM_COLUMNS] for row in ordered.iter_rows(named=True)],
        )

    def show_published_vs_measured_problem(self, text: str) -> None:
        """Why there is nothing to compare (a set published but not measured: the command to run)."""
        if self.query_one("#compare-view", Select).value == PUBLISHED_VS_MEASURED:
            self.query_one("#compare-summary", Static).update(text)
            self.query_one("#compare-table", FrameTable).set_rows([], [])
