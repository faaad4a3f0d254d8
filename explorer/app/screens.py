"""Modal screens: the kernel view, the help screen, the table-export and kernel-export dialogs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from cuda_l2_explorer.app.cells import plain
from cuda_l2_explorer.db.errors import ExplorerError
from cuda_l2_explorer.db.shapes import Shape, parse_shape
from cuda_l2_explorer.tuner.families import RUNTIME_SHAPE_ALIGNMENT
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.markup import escape
from textual.screen import ModalScreen
from textual.widgets import Checkbox, DataTable, Input, OptionList, Select, Static
from textual.widgets.option_list import Option

if TYPE_CHECKING:
    import polars as pl

HELP = """\
# cuda-l2-explorer

Keyboard first; the mouse works too. **Ctrl+P** opens the command palette (every action is there,
themes too). Keys can be remapped in `~/.config/cuda-l2-explorer/keys.toml`:

```toml
[keys]
show_configs = "c"      # binding id = key(s), comma separated
```

| key | action | binding id |
|---|---|---|
| 1-7 | Overview, Configs, Heatmap, Plots, Lookup, Compare, Bench | show_overview ... show_bench |
| k | choose the kernel set · GPU · mode · source the panes show (also in the palette) | choose_set |
| / | focus the filter of the Configs table | focus_filter |
| s / S | Configs: sort menu (the sorted column again: reverse) / reverse | sort_menu, reverse_sort |
| Enter | open the kernel view of the row (Configs, Lookup) | |
| x / b | in the kernel view: export the kernel (cuda-l2, torch or cmake) / benchmark its config | |
| y | copy the row under the cursor as TSV | copy_row |
| Y | copy the visible table as TSV (CSV / Markdown in the palette) | copy_table |
| e | export the visible table to CSV or Parquet | export_table |
| r | reload the data | reload |
| Esc | leave a text input for the pane's table, close a dialog, or cancel a running benchmark | escape |
| ? / F1 | this help | help |
| q | quit | quit |

## Filter expressions (Configs)

Column names (`m`, `n`, `k`, `speedup`, `kernel_us`, `best_baseline_us`, `floor_frac`, `regime`,
`status`, `audit`), numbers and 'strings', `== != < <= > >=`, `and or not`, `+ - * /`.
Examples: `m >= 1024 and speedup < 1`, `regime == 'tiny'`, `m * n * k > 1073741824`,
`status != 'ok'`. Sort with s (a menu of the columns), S (reverse), the command palette ("Sort
configs by ...") or a click on a column header (again to reverse). Keys typed into an input stay
there: Esc leaves it, and the single-letter keys work again.
"""


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark,f1", "dismiss", "close")]
    DEFAULT_CSS = """
    HelpScreen > VerticalScroll { width: 90%; height: 90%; border: round $accent; background: $surface; }
    """

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            from textual.widgets import Markdown  # markdown-it: loaded when help is first opened

            yield Markdown(HELP)


class KernelScreen(ModalScreen[None]):
    """Source with C++ highlighting, parameters, correctness, audit findings, search log."""

    BINDINGS = [
        Binding("escape,q", "dismiss", "close"),
        Binding("b", "bench", "benchmark this config"),
        Binding("x", "export", "export this kernel"),
    ]
    DEFAULT_CSS = """
    KernelScreen > VerticalScroll { width: 95%; height: 95%; border: round $accent; background: $surface; }
    KernelScreen DataTable { height: auto; max-height: 12; }
    """

    def __init__(self, set_id: str, shape: Shape, detail: dict, query: Shape | None = None) -> None:
        super().__init__()
        self.set_id, self.shape, self.detail = set_id, shape, detail
        self.export_shape = query or shape  # to export for: a lookup's query, else the config

    def compose(self) -> ComposeResult:
        kernel = self.detail.get("kernel")
        with VerticalScroll():
            yield Static(
                f"[b]{escape(self.set_id)}[/b] · config {self.shape} · Esc closes · b benchmarks it · "
                "x exports it"
            )
            if kernel is None:
                yield Static(
                    "No kernel source in the store for this config: published results carry only "
                    "speedups. Benchmark a kernel set folder to see sources here."
                )
            else:
                pad = (kernel.get("pad_bm"), kernel.get("pad_bn"), kernel.get("pad_bk"))
                params = json.loads(kernel.get("params") or "{}")
                if "kernel_name" in params:  # a kernel of our library: parameters, not a file
                    variant = ", ".join(f"{k} {v}" for k, v in sorted(params.get("variant", {}).items()))
                    lines = [
                        f"our library: {params['kernel_name']} (family {kernel.get('family')})",
                        f"runtime variant: {variant} · runtime shapes (any M; N, K multiples of "
                        f"{RUNTIME_SHAPE_ALIGNMENT})",
                        "source: rendered from these parameters "
                        "(python -m cuda_l2_explorer.tuner.materialize)",
                    ]
                    if "derived_from" in params:  # an A/B's twin of the search's pick
                        lines.append(
                            f"derived from the search's pick {params['derived_from']}: the same tile and "
                            "runtime variant with another epilogue, kept where an A/B measured it faster "
                            "(the search log below chose the former)"
                        )
                    yield Static("\n".join(lines), markup=False)
                else:
                    yield Static(
                        f"file {kernel.get('path')}\nsha256 {kernel.get('source_sha256')}\n"
                        f"padding tiles (BM, BN, BK) {pad if any(pad) else 'none'} · runtime shapes "
                        f"{kernel.get('runtime_shapes')} · build {kernel.get('build_status')}",
                        markup=False,
                    )
            yield Static("[b]Correctness and time[/b]")
            yield DataTable(id="kernel-measurements")
            yield Static("[b]Audit findings[/b]")
            yield DataTable(id="kernel-audit")
            yield Static("[b]Search log[/b] (every candidate the kernel search measured for this config)")
            yield DataTable(id="kernel-search-log")
            if kernel is not None and kernel.get("source"):
                from rich.syntax import Syntax  # Pygments: loaded when a source is first shown

                yield Static(Syntax(kernel["source"], "cpp", line_numbers=True, word_wrap=False))

    def on_mount(self) -> None:
        for widget_id, frame in (
            ("#kernel-measurements", self.detail["measurements"]),
            ("#kernel-audit", self.detail["audit"]),
            ("#kernel-search-log", self.detail["search_log"]),
        ):
            table = self.query_one(widget_id, DataTable)
            if frame.height == 0:
                table.add_column("none")
                continue
            for column in frame.columns:
                table.add_column(column)
            for row in frame.iter_rows():
                table.add_row(
                    *[plain("-" if v is None else (f"{v:.4g}" if isinstance(v, float) else v)) for v in row]
                )

    def action_bench(self) -> None:
        self.dismiss(None)
        self.app.run_action(f"bench_config('{self.shape}')")

    def action_export(self) -> None:
        self.app.push_screen(ExportKernelScreen(self.set_id, self.export_shape))


class ExportKernelScreen(ModalScreen[Path | None]):
    """Export a kernel into a folder (SPEC section 9) with the CLI's engine (explorer.export)."""

    BINDINGS = [Binding("escape", "dismiss", "cancel")]
    DEFAULT_CSS = """
    ExportKernelScreen > Vertical {
        width: 80; height: auto; border: round $accent; background: $surface; padding: 1;
    }
    """

    def __init__(self, set_id: str, query: Shape) -> None:
        super().__init__()
        self.set_id, self.export_shape = set_id, query

    def compose(self) -> ComposeResult:
        from cuda_l2_explorer.engine.export import FORMATS

        with Vertical():
            yield Static(f"Export the kernel of {self.set_id} that lookup chooses for your shape (M N K)")
            yield Input(value=" ".join(map(str, self.export_shape.astuple())), id="export-shape")
            yield Select([(f, f) for f in FORMATS], value="torch", allow_blank=False, id="export-format")
            yield Input(placeholder="folder to create, e.g. ~/my_hgemm (Enter exports)", id="export-dir")
            yield Checkbox("replace the folder if it is not empty", id="export-force")

    @on(Input.Submitted, "#export-dir")
    def _submit(self, event: Input.Submitted) -> None:
        from cuda_l2_explorer.app.data import describe_error

        folder = event.value.strip()
        if not folder:  # Path("") is the working folder: never a default
            self.app.notify("type the folder to create, e.g. ~/my_hgemm", title="export", severity="error")
            return
        try:
            query = parse_shape(*self.query_one("#export-shape", Input).value.split())
            result = self.app.source.export(  # type: ignore[attr-defined]
                query,
                self.set_id,
                str(self.query_one("#export-format", Select).value),
                Path(folder).expanduser(),
                self.query_one("#export-force", Checkbox).value,
            )
        except (ExplorerError, OSError, TypeError) as exc:
            self.app.notify(describe_error(exc), title="export", severity="error")
            return
        self.app.notify(result.summary(), title="export")
        self.dismiss(result.out_dir)


class ExportTableScreen(ModalScreen[Path | None]):
    """Ask for a path; write the visible table there as CSV or Parquet."""

    BINDINGS = [Binding("escape", "dismiss", "cancel")]
    DEFAULT_CSS = """
    ExportTableScreen > Vertical {
        width: 70; height: auto; border: round $accent; background: $surface; padding: 1;
    }
    """

    def __init__(self, frame: pl.DataFrame) -> None:
        super().__init__()
        self.frame = frame

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(f"Export the visible table ({self.frame.height} rows) to a .csv or .parquet file")
            yield Input(placeholder="path, e.g. ~/configs.csv", id="export-path")
            yield Checkbox("overwrite an existing file", id="export-overwrite")

    @on(Input.Submitted, "#export-path")
    def _submit(self, event: Input.Submitted) -> None:
        from cuda_l2_explorer.app.table_io import export_frame

        try:
            path = export_frame(
                self.frame, Path(event.value.strip()), self.query_one("#export-overwrite", Checkbox).value
            )
        except FileExistsError as exc:
            self.app.notify(f"{exc}; tick 'overwrite' to replace it", title="export", severity="error")
            return
        except (OSError, ValueError) as exc:
            self.app.notify(str(exc), title="export", severity="error")
            return
        self.dismiss(path)


class SortScreen(ModalScreen[str | None]):
    """The keyboard's way to sort a table: pick a column (Enter); the sorted one again reverses it."""

    BINDINGS = [Binding("escape,s", "dismiss", "cancel")]
    DEFAULT_CSS = """
    SortScreen { align: center middle; }
    SortScreen > Vertical {
        width: 44; height: auto; max-height: 90%; border: round $accent; background: $surface;
    }
    SortScreen OptionList { height: auto; max-height: 20; }
    """

    def __init__(self, columns: list[tuple[str, str]], current: str | None, reverse: bool) -> None:
        super().__init__()
        self.columns, self.current, self.reverse = columns, current, reverse

    def compose(self) -> ComposeResult:
        def prompt(key: str, label: str) -> str:
            if key != self.current:
                return label
            return f"{label} {'▼' if self.reverse else '▲'} (again: reverse)"

        with Vertical():
            yield Static("Sort by (Enter; Esc cancels)")
            options = OptionList(*[Option(prompt(key, label), id=key) for key, label in self.columns])
            keys = [key for key, _ in self.columns]
            if self.current in keys:
                options.highlighted = keys.index(self.current)
            yield options

    @on(OptionList.OptionSelected)
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)
