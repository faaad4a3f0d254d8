"""Live benchmark: runs ``cuda-l2-explorer bench`` in a subprocess, on the local GPU or on the
GPU workers of the Dask cluster it names.

The pane builds the command; the app runs it (releasing its read-only hold on the store, since
DuckDB allows one writer) and feeds progress back. Esc cancels: the run is marked interrupted and
``--resume`` finishes it later.
"""

from __future__ import annotations

from cuda_l2_explorer.db.errors import UsageError
from cuda_l2_explorer.db.shapes import parse_mnk
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Button, Input, Log, ProgressBar, Select, Static


class BenchPane(Vertical):
    DEFAULT_CSS = """
    BenchPane #bench-form { height: 3; }
    BenchPane #bench-set { width: 2fr; }
    BenchPane #bench-mnk { width: 2fr; }
    BenchPane #bench-cluster { width: 2fr; }
    BenchPane #bench-mode { width: 16; }
    BenchPane #bench-status { height: auto; padding: 0 1; }
    BenchPane #bench-progress { display: none; }
    BenchPane Log { height: 1fr; border: round $panel; }
    """

    class Start(Message):
        def __init__(self, args: list[str]) -> None:
            self.args = args
            super().__init__()

    def compose(self) -> ComposeResult:
        with Horizontal(id="bench-form"):
            yield Input(placeholder="set: folder, archive, URL or name", id="bench-set")
            yield Input(placeholder="configs: 64_64_64,4096_4096_4096", id="bench-mnk")
            yield Input(placeholder="Dask cluster tcp://HOST:8786 (optional)", id="bench-cluster")
            yield Select(
                [("offline", "offline"), ("server", "server")],
                value="offline",
                allow_blank=False,
                id="bench-mode",
            )
            yield Button("Run", id="bench-run", variant="primary")
        yield Static(  # plain text: a run's messages are not markup ("pip install 'x[gpu]'")
            "Measures on this machine's GPU, or on a Dask cluster's GPU workers; Esc cancels a run.",
            id="bench-status",
            markup=False,
        )
        yield ProgressBar(id="bench-progress", show_eta=True)
        yield Log(id="bench-log", highlight=False)

    def prefill(self, set_dir: str | None, mnk: str) -> None:
        if set_dir:
            self.query_one("#bench-set", Input).value = set_dir
        self.query_one("#bench-mnk", Input).value = mnk

    @on(Button.Pressed, "#bench-run")
    def _run(self) -> None:
        set_dir = self.query_one("#bench-set", Input).value.strip()
        mnk = self.query_one("#bench-mnk", Input).value.strip()
        try:
            shapes = [parse_mnk(x) for x in mnk.split(",") if x.strip()]
            if not shapes:
                raise UsageError("give at least one config as M_N_K")
        except UsageError as exc:
            self.app.notify(str(exc), title="bench", severity="error")
            return
        args = [
            "bench",
            "--mnk",
            ",".join(str(s) for s in shapes),
            "--mode",
            str(self.query_one("#bench-mode", Select).value),
            "--progress",
            "jsonl",
            "--json",
        ]
        if set_dir:
            args += ["--set", set_dir]
        cluster = self.query_one("#bench-cluster", Input).value.strip()
        if cluster:
            args += ["--cluster", cluster]
        self.post_message(self.Start(args))

    def running(self, on: bool) -> None:
        """The bar shows only while a run goes (busy until its first progress record) and after a
        run that counted something; idle, an empty bar would look like work in progress."""
        self.query_one("#bench-run", Button).disabled = on
        bar = self.query_one("#bench-progress", ProgressBar)
        if on:
            bar.update(total=None, progress=0)
        bar.display = on or bar.total is not None

    def progress(self, done: int, total: int, detail: str, label: str = "", unit: str = "steps") -> None:
        """One progress record of the run: a download (bytes), the kernel builds or the configs."""
        bar = self.query_one("#bench-progress", ProgressBar)
        bar.update(total=max(total, 1), progress=done)
        if unit == "bytes":
            text = f"{label} · {detail}"
        elif label.startswith("building"):
            text = f"{label}: {done}/{total} files" + (f" · {detail}" if detail else "")
        else:
            text = f"{done}/{total} configs · {detail}"
        self.query_one("#bench-status", Static).update(text)

    def log_line(self, text: str) -> None:
        self.query_one("#bench-log", Log).write_line(text)

    def finished(self, text: str) -> None:
        self.query_one("#bench-status", Static).update(text)
        self.running(False)
