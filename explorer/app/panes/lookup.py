"""Lookup: type M N K, get the answer (a kernel, or keep the baseline) and the ranked candidates of
SPEC §8 with their evidence."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cuda_l2_explorer.app.cells import plain
from cuda_l2_explorer.db.errors import UsageError
from cuda_l2_explorer.db.shapes import Shape, parse_shape
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Checkbox, DataTable, Input, Static

if TYPE_CHECKING:
    from cuda_l2_explorer.engine.lookup import LookupResult

# The predicted speedup next to the rank, so an 80-column terminal shows it, and its metric
# (device time, or a published host-timed ratio) beside it.
COLUMNS = ("rank", "predicted", "metric", "tier", "config", "set_id", "gpu", "mode", "runs at", "basis")
# engine.lookup.BASELINE, the tier of a baseline row (not imported: the engine loads after the
# first paint).
BASELINE = "baseline"


class LookupPane(Vertical):
    DEFAULT_CSS = """
    LookupPane #lookup-controls { height: 3; }
    LookupPane #lookup-input { width: 40; }
    LookupPane #lookup-message { height: auto; padding: 0 1; }
    """

    class Requested(Message):
        def __init__(self, shape: Shape, same_gpu_mode: bool) -> None:
            self.shape = shape
            self.same_gpu_mode = same_gpu_mode
            super().__init__()

    class CandidateChosen(Message):
        def __init__(self, set_id: str, shape: Shape) -> None:
            self.set_id = set_id
            self.shape = shape
            super().__init__()

    def compose(self) -> ComposeResult:
        with Horizontal(id="lookup-controls"):
            yield Input(placeholder="M N K, e.g. 4096 14336 4096", id="lookup-input")
            yield Checkbox("only the selected GPU and mode", value=True, id="lookup-same")
        yield Static("", id="lookup-message")
        yield DataTable(id="lookup-table", zebra_stripes=True, cursor_type="row")

    @on(Input.Submitted, "#lookup-input")
    def _submit(self, event: Input.Submitted) -> None:
        parts = event.value.replace(",", " ").replace("x", " ").split()
        try:
            if len(parts) != 3:
                raise UsageError("type three positive integers: M N K")
            shape = parse_shape(*parts)
        except UsageError as exc:
            self.app.notify(str(exc), title="lookup", severity="error")
            return
        self.post_message(self.Requested(shape, self.query_one("#lookup-same", Checkbox).value))

    def show(self, result: LookupResult) -> None:
        self.last_query = result.query  # the kernel view's export dialog starts from it
        # The answer first (what to use, or the baseline to keep), then what it is about.
        message = Text(result.answer, style="bold")
        message.append(f"\n{result.scope()}; {result.message}", style="")
        self.query_one("#lookup-message", Static).update(message)
        table = self.query_one("#lookup-table", DataTable)
        table.clear(columns=True)
        for column in COLUMNS:
            table.add_column(column, key=column)
        for r in result.candidates:
            c = r.candidate
            cells = (
                r.rank,
                "-" if r.predicted_speedup is None else r.prediction.text(),
                c.metric or "-",
                r.tier,
                c.shape,
                f"keep {c.best_baseline or 'baseline'}" if r.tier == BASELINE else c.set_id,
                c.gpu,
                c.mode,
                r.runs_at,
                r.predicted_basis,
            )
            table.add_row(*map(plain, cells), key=f"{c.set_id}|{c.shape}|{c.gpu}|{c.mode}|{r.rank}")

    @on(DataTable.RowSelected, "#lookup-table")
    def _chosen(self, event: DataTable.RowSelected) -> None:
        set_id, mnk, *_ = str(event.row_key.value).split("|")
        if set_id == BASELINE:  # a library call, no kernel of ours to open
            self.app.notify("a baseline: nothing to open or export", title="lookup")
            return
        m, n, k = (int(x) for x in mnk.split("_"))
        self.post_message(self.CandidateChosen(set_id, Shape(m, n, k)))
