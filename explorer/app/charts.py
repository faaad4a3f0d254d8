"""Charts as Rich text: plotext plots and the speedup heatmap. Pure functions of frames."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.text import Text

if TYPE_CHECKING:
    import polars as pl

REGIME_COLORS = {"tiny": "cyan", "skinny": "magenta", "small-K": "yellow", "large": "green"}


def _plotext(width: int, height: int):
    import plotext as plt

    plt.clear_figure()
    plt.plotsize(max(width, 20), max(height, 8))
    plt.theme("clear")
    return plt


def speedup_histogram(values: Sequence[float], width: int, height: int, title: str) -> Text:
    plt = _plotext(width, height)
    data = [v for v in values if v is not None and math.isfinite(v)]
    if not data:
        return Text("no speedups to plot")
    plt.hist(data, bins=40)
    plt.vline(1.0, "red")
    plt.title(title)
    plt.xlabel("speedup over the best baseline (1 = parity)")
    return Text.from_ansi(plt.build())


def speedup_vs_size(frame: pl.DataFrame, width: int, height: int, title: str) -> Text:
    """Speedup over the best baseline against log2(2MNK), one series per regime."""
    import polars as pl

    plt = _plotext(width, height)
    usable = frame.filter(pl.col("speedup").is_not_null())
    if usable.height == 0:
        return Text("no speedups to plot")
    for regime, color in REGIME_COLORS.items():
        part = usable.filter(pl.col("regime") == regime)
        if part.height:
            x = [math.log2(2 * m * n * k) for m, n, k in part.select("m", "n", "k").iter_rows()]
            plt.scatter(x, part["speedup"].to_list(), label=regime, color=color, marker="dot")
    plt.hline(1.0, "red")
    plt.title(title)
    plt.xlabel("log2 FLOPs (2MNK)")
    plt.ylabel("speedup")
    return Text.from_ansi(plt.build())


def sample_distributions(frame: pl.DataFrame | None, width: int, height: int, title: str) -> Text:
    """Per-sample device times of each implementation at one config (a strip per implementation)."""
    import polars as pl

    plt = _plotext(width, height)
    if frame is None or frame.height == 0:
        return Text("no per-sample data for this config (published rows carry none)")
    names = sorted(set(frame["implementation"].to_list()))
    for i, name in enumerate(names):
        values = frame.filter(pl.col("implementation") == name)["us"].to_list()
        plt.scatter(values, [i + 1] * len(values), marker="dot", label=name)
    plt.yticks(list(range(1, len(names) + 1)), names)
    plt.title(title)
    plt.xlabel("device time per call (us)")
    return Text.from_ansi(plt.build())


def _color(speedup: float | None) -> str:
    """Diverging scale: red for losses, green for wins, grey at parity; regressions as loud as wins."""
    if speedup is None or not math.isfinite(speedup):
        return "grey23"
    x = max(-1.0, min(1.0, math.log2(speedup) / math.log2(1.5)))  # +-1 at 1.5x / 0.67x
    if abs(x) < 0.02:
        return "rgb(90,90,90)"
    level = int(60 + 195 * abs(x))
    return f"rgb(0,{level},0)" if x > 0 else f"rgb({level},0,0)"


def heatmap(frame: pl.DataFrame, row: str, col: str, fixed: str, fixed_value: int, cell: int = 7) -> Text:
    """``row`` x ``col`` grid of speedups at ``fixed`` == fixed_value, with a legend."""
    import polars as pl

    part = frame.filter(pl.col(fixed) == fixed_value)
    rows = sorted(set(part[row].to_list()))
    cols = sorted(set(part[col].to_list()))
    values = {(r[row], r[col]): r["speedup"] for r in part.iter_rows(named=True)}
    out = Text()
    out.append(f"{row.upper()} down, {col.upper()} across, {fixed.upper()} = {fixed_value}\n", style="bold")
    out.append(" " * 7 + "".join(f"{c:>{cell}}" for c in cols) + "\n")
    for r in rows:
        out.append(f"{r:>6} ")
        for c in cols:
            v = values.get((r, c))
            label = "  ---" if v is None else f"{v:5.2f}"
            out.append(f"{label:>{cell}}", style=f"bold white on {_color(v)}")
        out.append("\n")
    out.append("\nlegend: ")
    for v in (0.5, 0.67, 0.8, 0.95, 1.0, 1.05, 1.25, 1.5, 2.0):
        out.append(f" {v:.2f} ", style=f"bold white on {_color(v)}")
    out.append("   --- no data or not correct\n")
    return out
