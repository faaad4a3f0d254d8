"""Overview: aggregates per set, mode and baseline, and the speedup distribution."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cuda_l2_explorer.app.cells import plain
from cuda_l2_explorer.app.charts import speedup_histogram
from cuda_l2_explorer.app.data import Selection
from rich.markup import escape
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Static

if TYPE_CHECKING:
    import polars as pl

# The figures right after what identifies a row, so an 80-column terminal still shows the geomean.
COLUMNS = ("set_id", "gpu", "mode", "baseline", "geomean", "win_rate", "mean", "min", "configs", "source")


class OverviewPane(VerticalScroll):
    DEFAULT_CSS = """
    OverviewPane #overview-stats { height: auto; max-height: 22; }
    OverviewPane #overview-chart { height: auto; }
    OverviewPane #overview-runs { height: auto; margin: 1 0; }
    """

    def compose(self) -> ComposeResult:
        yield Static("loading…", id="overview-title")
        yield DataTable(id="overview-stats", zebra_stripes=True, cursor_type="row")
        yield Static("", id="overview-runs")  # above the chart: where the numbers came from
        yield Static("", id="overview-chart")

    def show(
        self,
        stats: pl.DataFrame,
        selection: Selection | None,
        table: pl.DataFrame | None,
        runs: pl.DataFrame | None = None,
    ) -> None:
        title = self.query_one("#overview-title", Static)
        grid = self.query_one("#overview-stats", DataTable)
        grid.clear(columns=True)
        if stats.height == 0:
            title.update("No speedups in the store yet.")
            return
        import polars as pl
        from cuda_l2_explorer.engine.stats import HEADLINE_BASELINES

        shown = stats.filter(pl.col("baseline").is_in(HEADLINE_BASELINES))
        sets = shown["set_id"].n_unique()
        title.update(
            f"[b]{sets} kernel set(s)[/b] — geomean first; win rate = faster beyond the run-to-run spread "
            "(published rows: any ratio above 1); min = the worst config"
        )
        for column in COLUMNS:
            grid.add_column(column.replace("_", " "), key=column)
        for row in shown.select(COLUMNS).iter_rows(named=True):
            row["baseline"] = row["baseline"].replace("cuBLASLt-", "Lt-")
            grid.add_row(*[plain(f"{v:.3f}" if isinstance(v, float) else v) for v in row.values()])
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
        if selection is not None and runs is not None:
            self.query_one("#overview-runs", Static).update(provenance(selection, runs))


def provenance(selection: Selection, runs: pl.DataFrame) -> str:
    """Where the selection's numbers came from, a run per paragraph (SPEC §7 provenance)."""
    if runs.height == 0:
        return f"[b]Runs behind {escape(selection.label)}[/b]: none recorded"
    lines = [f"[b]Runs behind {escape(selection.label)}[/b]"]
    for r in runs.iter_rows(named=True):
        if r["kind"] == "published":
            lines.append(
                f"{r['run_id'][:8]}  published figures, {r['configs']} configs, imported {r['started']} "
                f"from {escape(r['source'] or '?')}"
            )
            continue
        head = f"{r['run_id'][:8]}  {r['kind']}, {r['status']}, {r['started']}, {r['configs']} configs"
        mode = f"{r['samples']} samples, L2 {r['l2'] or '?'}"
        if r["target_qps"]:
            mode += f", {r['target_qps']:g} QPS"
        l2_mib = f"{r['l2_bytes'] / 2**20:.0f} MiB L2" if r["l2_bytes"] else "L2 ?"
        lines += [
            f"{head} · harness {r['harness'] or '?'} · {mode}",
            f"    {r['gpu_name'] or r['gpu']}, {r['sm_count'] or '?'} SMs, {l2_mib}, "
            f"SM clock {r['clock_start_mhz'] or '?'} -> {r['clock_end_mhz'] or '?'} MHz",
            f"    driver {r['driver'] or '?'}, CUDA {r['cuda'] or '?'}, cuBLAS {r['cublas'] or '?'}, "
            f"torch {r['torch'] or '?'}, CUTLASS {r['cutlass'] or 'not recorded'}",
            f"    {escape(r['command'] or '')}",
        ]
    return "\n".join(lines)
