"""ExplorerApp: the Textual front end. It lays out panes, loads data in workers and routes
messages; every number comes from ``explorer.app.data`` (the engine's query API).

Nothing here imports Polars or DuckDB at module level (a test checks it): the first frame is
drawn while the first worker imports them and reads the store."""

from __future__ import annotations

import gc
import json
import os
import signal
import subprocess
import sys
import time
import tomllib
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from cuda_l2_explorer.app.data import DataSource, Selection, Snapshot, describe_error
from cuda_l2_explorer.app.frame_table import FrameTable
from cuda_l2_explorer.app.panes.bench import BenchPane
from cuda_l2_explorer.app.panes.compare import ComparePane
from cuda_l2_explorer.app.panes.configs import SHOWN, ConfigsPane, column_label
from cuda_l2_explorer.app.panes.heatmap import HeatmapPane
from cuda_l2_explorer.app.panes.lookup import LookupPane
from cuda_l2_explorer.app.panes.overview import OverviewPane
from cuda_l2_explorer.app.panes.plots import PlotsPane
from cuda_l2_explorer.app.screens import ExportTableScreen, HelpScreen, KernelScreen
from cuda_l2_explorer.db.shapes import Shape
from textual import events, on, work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal
from textual.markup import escape
from textual.notifications import SeverityLevel
from textual.screen import ModalScreen, Screen
from textual.widget import Widget
from textual.widgets import DataTable, Footer, Header, Input, Select, Static, TabbedContent, TabPane

if TYPE_CHECKING:
    import polars as pl

TABS = ("overview", "configs", "heatmap", "plots", "lookup", "compare", "bench")
# Terminal width under which the footer packs its keys (compact): the app is laid out down to 80.
COMPACT_FOOTER_BELOW = 100


def keymap_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "cuda-l2-explorer" / "keys.toml"


def load_keymap(path: Path) -> tuple[dict[str, str], str | None]:
    """{binding id: keys} from the [keys] table of a TOML file, and a problem to report (or None)."""
    if not path.is_file():
        return {}, None
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        return {}, f"{path}: {exc}"
    keys = data.get("keys", {})
    if not isinstance(keys, dict) or not all(isinstance(v, str) for v in keys.values()):
        return {}, f"{path}: [keys] must map binding ids to key strings"
    return dict(keys), None


class ExplorerApp(App[None]):
    TITLE = "cuda-l2-explorer"
    CSS = """
    #bar { height: 3; }
    #selection { width: 1fr; }
    #status { width: auto; padding: 1 1 0 1; color: $text-muted; }
    #problem { padding: 1 2; color: $warning; height: auto; }
    /* The panes fill the space between the bar and the footer (auto heights let them run under
       the footer and made the whole screen scroll). */
    #tabs { height: 1fr; }
    #tabs > ContentSwitcher { height: 1fr; }
    #tabs TabPane { height: 1fr; }
    /* A short terminal (24 lines) keeps its lines for data: no title bar, one-line controls. */
    Screen.-short Header { display: none; }
    Screen.-short #bar { height: 1; }
    Screen.-short #status { padding: 0 1; }
    Screen.-short Select > SelectCurrent { border: none; height: 1; padding: 0 1; }
    Screen.-short Input { border: none; height: 1; padding: 0 1; margin: 0 1 0 0; }
    Screen.-short #configs-controls, Screen.-short #lookup-controls, Screen.-short #heatmap-controls,
    Screen.-short #compare-controls, Screen.-short #bench-form { height: 1; }
    Screen.-short Checkbox { border: none; height: 1; padding: 0; }
    Screen.-short Button { border: none; height: 1; min-width: 8; }
    Screen.-short #overview-stats { max-height: 12; }
    """
    VERTICAL_BREAKPOINTS = [(0, "-short"), (32, "-tall")]
    # Keys that move the focus are priority bindings: Textual routes a key to the focused widget
    # when it arrives, so keys typed right after '/' or '5' (already queued) would otherwise go to
    # the old widget. check_action turns them off while the focus takes text (they are typed).
    # The tabs' keys are on the tabs themselves, which leaves the footer to the other keys.
    BINDINGS = [
        *[
            Binding(str(i + 1), f"show('{tab}')", tab.title(), show=False, id=f"show_{tab}", priority=True)
            for i, tab in enumerate(TABS)
        ],
        Binding("slash", "focus_filter", "filter", id="focus_filter", priority=True),
        Binding("k", "choose_set", "set", id="choose_set"),
        Binding("y", "copy_row", "copy row", id="copy_row"),
        Binding("Y", "copy_table('tsv')", "copy table", show=False, id="copy_table"),
        Binding("e", "export_table", "export", id="export_table"),
        Binding("r", "reload", "reload", id="reload"),
        Binding("question_mark,f1", "help", "help", id="help"),
        Binding("escape", "leave_input", "leave input", show=False, id="leave_input", priority=True),
        Binding("escape", "cancel_bench", "cancel run", show=False, id="cancel_bench"),
        Binding("q", "quit", "quit", id="quit"),
    ]

    def __init__(self, db: Path | None = None, with_bundled: bool | None = None) -> None:
        super().__init__()
        self.source = DataSource(db, with_bundled)
        self.db = db
        self.selections: list[Selection] = []
        self.selection: Selection | None = None
        self.shown: Selection | None = None  # the selection whose table the panes show
        self.stats: pl.DataFrame | None = None
        self.table: pl.DataFrame | None = None
        self.bench_process: subprocess.Popen | None = None
        self.timings: dict[str, float] = {}
        self.froze_gc = False  # this app froze the collector's view of the heap (unfrozen on close)

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = False,
    ) -> None:
        """Plain text unless asked: messages carry errors, paths and a run's output, which are no
        markup ("pip install 'x[gpu]'" lost its extra, and a '[/' in one raised MarkupError)."""
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=markup)

    # ------------------------------------------------------------------ layout
    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="bar"):
            yield Select([], prompt="kernel set · GPU · mode · source", id="selection")
            yield Static("", id="status")
        yield Static("", id="problem")
        with TabbedContent(initial="overview", id="tabs"):
            with TabPane("1 Overview", id="overview"):
                yield OverviewPane()
            with TabPane("2 Configs", id="configs"):
                yield ConfigsPane()
            with TabPane("3 Heatmap", id="heatmap"):
                yield HeatmapPane()
            with TabPane("4 Plots", id="plots"):
                yield PlotsPane()
            with TabPane("5 Lookup", id="lookup"):
                yield LookupPane()
            with TabPane("6 Compare", id="compare"):
                yield ComparePane()
            with TabPane("7 Bench", id="bench"):
                yield BenchPane()
        yield Footer()

    def on_resize(self, event: events.Resize) -> None:
        # Under 100 columns the footer's keys go closer together: at 80 the Configs pane's nine
        # cut "q quit" to "q".
        self.query_one(Footer).compact = event.size.width < COMPACT_FOOTER_BELOW

    def on_mount(self) -> None:
        keys, problem = load_keymap(keymap_path())
        if keys:
            self.set_keymap(keys)
        if problem:
            self.notify(problem, title="key map", severity="warning")
        self.query_one("#problem", Static).display = False
        self.load_all()

    # --------------------------------------------------------------- loading
    @work(thread=True, exclusive=True, group="db")
    def load_all(self) -> None:
        started = time.perf_counter()
        try:
            snapshot = self.source.snapshot(self.selection)
        except Exception as exc:  # shown in the app, which keeps running
            self.call_from_thread(self._show_problem, describe_error(exc))
            return
        self.timings["load"] = time.perf_counter() - started
        self.call_from_thread(self._loaded, snapshot)

    def _show_problem(self, text: str) -> None:
        problem = self.query_one("#problem", Static)
        problem.update(
            f"[b]{escape(text)}[/b]\n\nFill the store with `cuda-l2-explorer import-results --upstream` "
            "(or a CSV path), or measure a kernel set with `cuda-l2-explorer bench`, then press r to reload."
        )
        problem.display = True

    def _loaded(self, snapshot: Snapshot) -> None:
        self.selections, self.stats = snapshot.selections, snapshot.stats
        if snapshot.selection is None:
            self._show_problem("The store holds no speedups yet.")
            return
        self.query_one("#problem", Static).display = False
        self.selection = snapshot.selection
        self._table_loaded(snapshot.selection, snapshot.table, snapshot.runs)
        if not gc.get_freeze_count():
            # What the app holds from here on (modules, widgets, the formatted cells) lives as
            # long as it does: out of the collector's full passes, which otherwise walk it all
            # and stall a keypress every few seconds for 35-45 ms. A process that froze its heap
            # itself keeps its own freeze (the app neither adds to it nor undoes it).
            gc.freeze()
            self.froze_gc = True
        select = self.query_one("#selection", Select)
        select.set_options([(s.label, i) for i, s in enumerate(self.selections)])
        self.query_one(ComparePane).set_choices([s.label for s in self.selections])
        select.value = self.selections.index(snapshot.selection)  # already loaded: no second read

    @on(Select.Changed, "#selection")
    def _selection_changed(self, event: Select.Changed) -> None:
        if isinstance(event.value, int) and self.selections[event.value] != self.shown:
            self.selection = self.selections[event.value]
            self.load_table(self.selection)

    @work(thread=True, exclusive=True, group="db")
    def load_table(self, selection: Selection) -> None:
        try:
            table, runs = self.source.selection_data(selection)
        except Exception as exc:
            self.call_from_thread(self.notify, describe_error(exc), title="load", severity="error")
            return
        self.call_from_thread(self._table_loaded, selection, table, runs)

    def _table_loaded(self, selection: Selection, table: pl.DataFrame, runs: pl.DataFrame) -> None:
        self.table, self.shown = table, selection
        self.query_one(OverviewPane).show(self.stats, selection, table, runs)
        self.query_one(ConfigsPane).show(table)
        self.query_one(HeatmapPane).show(table)
        self.query_one(PlotsPane).show(table, f"{selection.label}: speedup over the best baseline")
        self.query_one("#status", Static).update(f"{table.height} configs")

    # --------------------------------------------------------------- actions
    FOCUS = {
        "overview": "#overview-stats",
        "configs": "#configs-table",
        "heatmap": "#heatmap-fixed",
        "plots": "PlotsPane",
        "lookup": "#lookup-input",
        "compare": "#compare-left",
        "bench": "#bench-set",
    }

    # Where Esc in an input of a pane sends the keys (the pane's table, or a button).
    LEAVE_INPUT = {"configs": "#configs-table", "lookup": "#lookup-table", "bench": "#bench-run"}

    def _focus_now(self, widget: Widget) -> None:
        """Focus at once: Widget.focus() waits for the message queue, but the next key (already
        queued when '/' or '5' is typed quickly) is routed by the focus it finds on arrival."""
        self.screen.set_focus(widget)

    def action_show(self, tab: str) -> None:
        started = time.perf_counter()
        self.query_one(TabbedContent).active = tab
        self._focus_now(self.query_one(self.FOCUS[tab]))  # keys go to the pane just shown
        self.timings[f"switch_{tab}"] = time.perf_counter() - started

    def action_choose_set(self) -> None:
        """Open the list of kernel set · GPU · mode · source: from the keyboard it is otherwise
        reached only by tabbing back past every control of the pane."""
        select = self.query_one("#selection", Select)
        self._focus_now(select)
        select.action_show_overlay()

    def show_selection(self, index: int) -> None:
        self.query_one("#selection", Select).value = index  # loads it (Select.Changed)

    def action_focus_filter(self) -> None:
        self.action_show("configs")
        self._focus_now(self.query_one("#configs-filter"))

    def action_sort_configs(self, column: str) -> None:
        self.action_show("configs")
        self.query_one(ConfigsPane).sort_by(column)

    def action_leave_input(self) -> None:
        """Esc in a text input moves to its pane's table, where the single-letter keys work again."""
        target = self.LEAVE_INPUT.get(self.query_one(TabbedContent).active)
        if target:
            self._focus_now(self.query_one(target))
        else:
            self.screen.set_focus(None)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("show", "focus_filter", "leave_input"):
            if isinstance(self.screen, ModalScreen):  # a dialog's keys are its own
                return False
            if action == "leave_input":  # Esc in a Select's list or elsewhere keeps its meaning
                return isinstance(self.focused, Input)
            # typed as text where the focus takes text (an input, a list's type-to-search)
            return not (self.focused is not None and self.focused.check_consume_key("a", "a"))
        return True

    def action_help(self) -> None:
        self.push_screen(HelpScreen())

    def action_reload(self) -> None:
        self.load_all()

    def _visible_table(self) -> DataTable | FrameTable | None:
        active = self.query_one(TabbedContent).active
        tables = list(self.query_one(f"#{active}", TabPane).query("DataTable, FrameTable"))
        return tables[-1] if tables else None

    def _table_rows(self, table: DataTable | FrameTable, only_cursor: bool) -> tuple[list[str], list[list]]:
        columns = [str(c.label) for c in table.columns.values()]
        if only_cursor:
            rows = [table.get_row_at(table.cursor_row)] if table.row_count else []
        else:
            rows = [table.get_row_at(i) for i in range(table.row_count)]
        return columns, [[str(v) for v in row] for row in rows]

    def action_copy_row(self) -> None:
        table = self._visible_table()
        if table is None or table.row_count == 0:
            self.notify("no row to copy here", severity="warning")
            return
        from cuda_l2_explorer.app.table_io import rows_as_text

        self.copy_to_clipboard(rows_as_text(*self._table_rows(table, True), "tsv"))
        self.notify("row copied as TSV")

    def action_copy_table(self, fmt: str = "tsv") -> None:
        table = self._visible_table()
        if table is None or table.row_count == 0:
            self.notify("no table to copy here", severity="warning")
            return
        from cuda_l2_explorer.app.table_io import rows_as_text

        self.copy_to_clipboard(rows_as_text(*self._table_rows(table, False), fmt))
        self.notify(f"{table.row_count} rows copied as {fmt.upper()}")

    def action_export_table(self) -> None:
        pane = self.query_one(ConfigsPane)
        frame = pane.view if self.query_one(TabbedContent).active == "configs" else self.table
        if frame is None or frame.height == 0:
            self.notify("nothing to export", severity="warning")
            return

        def done(path: Path | None) -> None:
            if path is not None:
                self.notify(f"wrote {path}")

        self.push_screen(ExportTableScreen(frame.drop("mnk", strict=False)), done)

    def action_bench_config(self, mnk: str) -> None:
        self.query_one(BenchPane).prefill(None, mnk)
        self.action_show("bench")

    # ------------------------------------------------------------- messages
    @on(ConfigsPane.ConfigChosen)
    def _config_chosen(self, event: ConfigsPane.ConfigChosen) -> None:
        if self.selection is not None:
            self.open_kernel(self.selection.set_id, event.shape)

    @on(LookupPane.CandidateChosen)
    def _candidate_chosen(self, event: LookupPane.CandidateChosen) -> None:
        self.open_kernel(event.set_id, event.shape, getattr(self.query_one(LookupPane), "last_query", None))

    @work(thread=True, exclusive=True, group="db")
    def open_kernel(self, set_id: str, shape: Shape, query: Shape | None = None) -> None:
        try:
            detail = self.source.kernel_detail(set_id, shape)
            samples = self.source.samples(self.selection, shape) if self.selection else None
        except Exception as exc:
            self.call_from_thread(self.notify, describe_error(exc), severity="error")
            return
        self.call_from_thread(self.query_one(PlotsPane).show_samples, samples, shape)
        self.call_from_thread(self.push_screen, KernelScreen(set_id, shape, detail, query))

    @on(LookupPane.Requested)
    def _lookup(self, event: LookupPane.Requested) -> None:
        self.run_lookup(event.shape, event.same_gpu_mode)

    @work(thread=True, exclusive=True, group="db")
    def run_lookup(self, shape: Shape, same: bool) -> None:
        sel = self.selection
        try:
            result = self.source.lookup(
                shape, sel.gpu if same and sel else None, sel.mode if same and sel else None
            )
        except Exception as exc:
            self.call_from_thread(self.notify, describe_error(exc), title="lookup", severity="error")
            return
        self.call_from_thread(self.query_one(LookupPane).show, result)

    @on(ComparePane.Wanted)
    def _compare(self, event: ComparePane.Wanted) -> None:
        self.run_compare(self.selections[event.left], self.selections[event.right])

    @work(thread=True, exclusive=True, group="db")
    def run_compare(self, left: Selection, right: Selection) -> None:
        try:
            a, b = self.source.config_table(left), self.source.config_table(right)
        except Exception as exc:
            self.call_from_thread(self.notify, describe_error(exc), title="compare", severity="error")
            return
        self.call_from_thread(self.query_one(ComparePane).show, a, b, left.label, right.label)

    @on(ComparePane.PublishedVsMeasuredWanted)
    def _published_vs_measured(self) -> None:
        self.run_published_vs_measured()

    @work(thread=True, exclusive=True, group="db")
    def run_published_vs_measured(self) -> None:
        pane = self.query_one(ComparePane)
        try:
            rows, lines = self.source.published_vs_measured()
        except Exception as exc:  # nothing measured yet: the pane says what would measure it
            self.call_from_thread(pane.show_published_vs_measured_problem, describe_error(exc))
            return
        self.call_from_thread(pane.show_published_vs_measured, rows, lines)

    # ------------------------------------------------------------ live bench
    @on(BenchPane.Start)
    def _bench(self, event: BenchPane.Start) -> None:
        if self.bench_process is not None:
            self.notify("a benchmark is already running", severity="warning")
            return
        self.run_bench(event.args)

    @work(thread=True, exclusive=True, group="bench")
    def run_bench(self, args: list[str]) -> None:
        pane = self.query_one(BenchPane)
        self.call_from_thread(pane.running, True)
        command = [sys.executable, "-m", "cuda_l2_explorer"]
        if self.db is not None:
            command += ["--db", str(self.db)]
        command += args
        self.call_from_thread(pane.log_line, "$ " + " ".join(command[2:]))
        try:
            process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        except OSError as exc:
            self.call_from_thread(pane.finished, f"could not start: {exc}")
            return
        self.bench_process = process
        assert process.stderr is not None
        last_line = ""
        for line in process.stderr:
            line = line.rstrip()
            try:
                record = json.loads(line)
                self.call_from_thread(
                    pane.progress,
                    record["done"],
                    record["total"],
                    record.get("detail", ""),
                    record.get("label", ""),
                    record.get("unit", "steps"),
                )
            except (json.JSONDecodeError, KeyError, TypeError):
                if line:
                    last_line = line
                    self.call_from_thread(pane.log_line, line)
        code = process.wait()
        self.bench_process = None
        if code == 0:
            self.call_from_thread(pane.finished, "done; the tables now include the new rows")
            self.call_from_thread(self.load_all)
        elif code in (130, -signal.SIGINT):
            self.call_from_thread(pane.finished, "cancelled; `bench --resume` finishes the run later")
        else:
            self.call_from_thread(pane.finished, f"failed (exit {code}): {last_line}")
            self.call_from_thread(self.notify, last_line or f"exit {code}", title="bench", severity="error")

    def action_cancel_bench(self) -> None:
        if self.bench_process is not None and self.bench_process.poll() is None:
            self.bench_process.send_signal(signal.SIGINT)
            self.notify("cancelling the benchmark…")

    # -------------------------------------------------------- command palette
    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        for tab in TABS:
            yield SystemCommand(f"Show {tab}", f"Switch to the {tab} pane", lambda t=tab: self.action_show(t))
        for i, selection in enumerate(self.selections):
            yield SystemCommand(
                f"Show {selection.label}",
                "Load this kernel set, GPU, mode and source",
                lambda i=i: self.show_selection(i),
            )
        yield SystemCommand("Copy row (TSV)", "Copy the row under the cursor", self.action_copy_row)
        for fmt in ("tsv", "csv", "markdown"):
            yield SystemCommand(
                f"Copy table ({fmt.upper()})",
                "Copy the visible table",
                lambda f=fmt: self.action_copy_table(f),
            )
        yield SystemCommand(
            "Export table", "Write the visible table to CSV or Parquet", self.action_export_table
        )
        configs = self.query_one(ConfigsPane)
        for column in (c for c in SHOWN if c in configs.frame.columns):
            yield SystemCommand(
                f"Sort configs by {column_label(column)}",
                "Sort the Configs table (again: reverse)",
                lambda c=column: self.action_sort_configs(c),
            )
        yield SystemCommand("Reload data", "Read the store again", self.action_reload)
        yield SystemCommand("Help", "Keys, filter syntax, key map file", self.action_help)
        yield SystemCommand("Cancel benchmark", "Stop the running benchmark", self.action_cancel_bench)

    def on_unmount(self) -> None:
        self.action_cancel_bench()
        if self.froze_gc:  # the interpreter's exit frees what it holds (DuckDB's bindings report leaks)
            gc.unfreeze()
            self.froze_gc = False
