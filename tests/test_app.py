"""The Textual app, driven by Textual's pilot: every pane, the main flows, errors, speed."""

from __future__ import annotations

import functools
import statistics
import tarfile
import time
from http.server import SimpleHTTPRequestHandler
from pathlib import Path

import polars as pl
import pytest
from conftest import loopback_server
from cuda_l2_explorer.app.app import ExplorerApp
from cuda_l2_explorer.app.panes.bench import BenchPane
from cuda_l2_explorer.app.panes.configs import ConfigsPane
from cuda_l2_explorer.app.panes.lookup import BASELINE as LOOKUP_BASELINE
from cuda_l2_explorer.app.panes.lookup import COLUMNS as LOOKUP_COLUMNS
from cuda_l2_explorer.app.screens import ExportTableScreen, HelpScreen, KernelScreen, SortScreen
from cuda_l2_explorer.engine import lookup as engine_lookup
from textual import events
from textual.widgets import Select

pytestmark = pytest.mark.usefixtures("freeze_what_outlives_it")  # conftest.py

SIZE = (140, 45)
PLANTED_F32 = Path(__file__).parent / "kernelsets" / "planted" / "h100_F32F16F16F32"


class _QuietFiles(SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep pytest output clean
        pass


def _rows(table) -> list[tuple[str, ...]]:
    """A table's rows as the text they show (a DataTable's cells are rich Text)."""
    return [tuple(str(v) for v in table.get_row_at(i)) for i in range(table.row_count)]


async def _ready(pilot) -> None:
    """Wait until no worker is running (cancelled ones, replaced by newer work, are fine)."""
    from textual.worker import WorkerCancelled, WorkerFailed, WorkerState

    # Let posted messages start their workers first: each pause waits for the app's and the
    # screen's queues to drain and then for a quiet 20 ms (none of the app's work is on a timer).
    await pilot.pause()
    await pilot.pause()
    for _ in range(200):
        await pilot.pause()
        busy = [w for w in pilot.app.workers if w.state in (WorkerState.PENDING, WorkerState.RUNNING)]
        if not busy:
            break
        for worker in busy:
            try:
                await worker.wait()
            except (WorkerCancelled, WorkerFailed):
                pass
    await pilot.pause()


async def _published_offline(pilot) -> None:
    """Ready, on the published H100 offline selection of app_db (8 configs)."""
    await _ready(pilot)
    pilot.app.query_one("#selection").value = 0
    await _ready(pilot)


async def test_starts_fast_and_loads_in_a_worker(app_db):
    app = ExplorerApp(app_db, with_bundled=False)
    started = time.perf_counter()
    async with app.run_test(size=SIZE) as pilot:
        first_paint = time.perf_counter() - started
        await _ready(pilot)
        assert first_paint < 1.0
        assert len(app.selections) == 3  # published offline + server, measured offline
        assert app.selection is not None and app.selection.source == "measured"  # measured first
        assert app.query_one(ConfigsPane).frame.height == 2


async def test_what_the_app_holds_after_loading_is_out_of_the_collectors_full_passes(app_db):
    """After the first load the app freezes what it holds (a full collection walked it all and
    stalled a key every few seconds for 35-45 ms), and unfreezes it when it closes, so that the
    interpreter's exit frees it. A process that froze its heap itself (this test session does:
    conftest.py) keeps its own freeze: the app neither adds to it nor undoes it. The snapshot reads
    the selections off the headline stats: the same selections, in the same order, as the query of
    their own."""
    import gc

    from cuda_l2_explorer.app.data import DataSource

    session_frozen = gc.get_freeze_count() > 0
    try:
        gc.unfreeze()
        app = ExplorerApp(app_db, with_bundled=False)
        async with app.run_test(size=SIZE) as pilot:
            await _ready(pilot)
            assert gc.get_freeze_count() > 0 and app.froze_gc
        assert gc.get_freeze_count() == 0
        gc.freeze()  # the host's own freeze
        hosted = ExplorerApp(app_db, with_bundled=False)
        async with hosted.run_test(size=SIZE) as pilot:
            await _ready(pilot)
            assert hosted.selection is not None and not hosted.froze_gc
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
        if session_frozen:
            gc.freeze()
    source = DataSource(app_db, with_bundled=False)
    assert source.snapshot(None).selections == source.selections() == app.selections


def test_the_app_module_draws_before_polars_and_duckdb_load():
    """Importing the app (what happens before the first frame) leaves Polars, DuckDB and the engine
    to the first worker: about 0.2 s of imports off the way to the first paint."""
    from conftest import modules_loaded_after

    heavy = ("polars", "duckdb", "cuda_l2_explorer.engine")
    assert modules_loaded_after("import cuda_l2_explorer.app.app", heavy) == []


def _text(app, selector: str) -> str:
    return str(app.query_one(selector).render())


async def _overview_content(app, pilot) -> None:
    assert app.query_one("#overview-stats").row_count > 0
    assert "2 kernel set(s)" in _text(app, "#overview-title")
    runs = _text(app, "#overview-runs")
    assert "Runs behind ours/h100_F32F16F16F32 · h100 · offline · measured" in runs
    assert "r1  bench, complete" in runs and "r2  bench, complete" in runs
    assert "speedup over the best baseline" in _text(app, "#overview-chart")


async def _configs_content(app, pilot) -> None:
    table = app.query_one("#configs-table")
    assert table.row_count == 2
    shapes = {row[:3] for row in _rows(table)[:2]}
    assert shapes == {("256", "512", "1024"), ("1024", "1024", "1024")}
    assert _text(app, "#configs-info").startswith("2 of 2 configs")


async def _heatmap_content(app, pilot) -> None:
    grid = _text(app, "#heatmap-grid").splitlines()
    assert grid[0] == "M down, N across, K = 1024"
    # Both measured configs: the kernel's 10 us against torch.matmul's 8 us (test_store's run).
    assert grid[1].split() == ["512", "1024"]
    assert grid[2].split() == ["256", "0.80", "---"] and grid[3].split() == ["1024", "---", "0.80"]


async def _plots_content(app, pilot) -> None:
    plot = _text(app, "#plots-size")
    assert "log2 FLOPs (2MNK)" in plot and "speedup" in plot
    assert "•" in plot and "0.8" in plot  # the two measured points, both at 0.80
    assert "Enter in Configs" in _text(app, "#plots-samples")


async def _lookup_content(app, pilot) -> None:
    assert app.focused is app.query_one("#lookup-input")  # type M N K straight away
    assert app.query_one("#lookup-table").row_count == 0  # nothing asked yet
    await pilot.press(*"256 512 1024", "enter")
    await _ready(pilot)
    assert app.query_one("#lookup-table").row_count > 0


async def _compare_content(app, pilot) -> None:
    from textual.widgets import OptionList

    assert app.focused is app.query_one("#compare-left")
    assert "Pick two selections" in _text(app, "#compare-summary")
    await pilot.press("enter")  # open the list of selections
    await pilot.pause()
    options = app.query_one("#compare-left").query_one(OptionList)
    labels = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
    assert [label for label in labels if "·" in label] == [s.label for s in app.selections]
    assert len(app.selections) == 3


async def _bench_content(app, pilot) -> None:
    assert app.focused is app.query_one("#bench-set")
    assert not app.query_one("#bench-run").disabled
    assert "Measures on this machine's GPU" in _text(app, "#bench-status")


PANE_CONTENT = {
    "overview": _overview_content,
    "configs": _configs_content,
    "heatmap": _heatmap_content,
    "plots": _plots_content,
    "lookup": _lookup_content,
    "compare": _compare_content,
    "bench": _bench_content,
}


@pytest.mark.parametrize("key, tab", [(str(i + 1), tab) for i, tab in enumerate(PANE_CONTENT)])
async def test_every_pane_opens_with_content(app_db, key, tab):
    app = ExplorerApp(app_db, with_bundled=False)
    async with app.run_test(size=SIZE) as pilot:
        await _ready(pilot)
        if tab == "overview":
            await pilot.press("2")  # come back to it from another pane
        await pilot.press(key)
        await pilot.pause()
        assert app.query_one("#tabs").active == tab
        assert app.timings[f"switch_{tab}"] < 0.1
        await PANE_CONTENT[tab](app, pilot)


async def test_filter_sort_search_and_bad_filter(app_db):
    app = ExplorerApp(app_db, with_bundled=False)
    async with app.run_test(size=SIZE) as pilot:
        await _published_offline(pilot)
        pane = app.query_one(ConfigsPane)
        assert pane.view.height == 8
        await pilot.press("slash")
        await pilot.press(*"m >= 1024 and speedup < 1", "enter")
        await pilot.pause()
        assert pane.view.select("m", "n", "k").rows() == [(2048, 1024, 1024), (16384, 16384, 16384)]
        pane.query_one("#configs-filter").value = "m >="
        await pilot.press("enter")
        await pilot.pause()
        assert any("syntax" in n.message for n in app._notifications)
        assert pane.view.height == 2  # the last good view stays
        pane.query_one("#configs-filter").value = ""
        pane.query_one("#configs-search").value = "64_64_"
        pane.refresh_view()
        assert sorted(pane.view["mnk"].to_list()) == ["64_64_128", "64_64_64"]


async def test_kernel_view_and_copy(app_db):
    from cuda_l2_explorer.db.store import Store

    with Store.open(app_db) as store, store.transaction():  # a search that logged two candidates
        store.con.execute(
            "INSERT INTO runs (run_id, kind, gpu, status, tool_version) "
            "VALUES ('t1', 'tune', 'h100', 'complete', 't')"
        )
        for m, n, k in ((256, 512, 1024), (1024, 1024, 1024)):
            for cand, median, chosen in (("sm90_a|default", 9e-6, True), ("sm90_b|default", 12e-6, False)):
                store.con.execute(
                    "INSERT INTO search_log (run_id, m, n, k, candidate, stage, kernel, status, median, "
                    "chosen) VALUES ('t1', ?, ?, ?, ?, 2, ?, 'ok', ?, ?)",
                    [m, n, k, cand, cand.split("|")[0], median, chosen],
                )
    app = ExplorerApp(app_db, with_bundled=False)
    async with app.run_test(size=SIZE) as pilot:
        await _ready(pilot)
        await pilot.press("2")
        await pilot.press("y")
        assert app.clipboard.splitlines()[0].startswith("m\tn\tk")
        await pilot.press("enter")
        await _ready(pilot)
        assert isinstance(app.screen, KernelScreen)
        log = app.screen.query_one("#kernel-search-log")
        assert log.row_count == 2
        assert "sm90_a|default" in [str(c) for c in log.get_row_at(0)]  # the kept one first
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, KernelScreen)


async def test_lookup_flow(app_db):
    app = ExplorerApp(app_db, with_bundled=False)
    async with app.run_test(size=SIZE) as pilot:
        await _published_offline(pilot)
        await pilot.press("5", *"1000 1000 1000", "enter")
        await _ready(pilot)
        table = app.query_one("#lookup-table")
        # the baseline (no kernel beats it beyond the spread here), then the measured set's
        # 1024^3 and 4 published covering configs, each figure's metric beside it
        assert table.row_count == 6
        first, second = _rows(table)[:2]  # cells are plain Text: shown as written, never as markup
        assert first[LOOKUP_COLUMNS.index("tier")] == "baseline" and first[0] == "1"
        assert second[LOOKUP_COLUMNS.index("config")] == "1024_1024_1024"
        metrics = [row[LOOKUP_COLUMNS.index("metric")] for row in _rows(table)]
        assert metrics == ["device_time", "device_time", *["published"] * 4]
        assert LOOKUP_BASELINE == engine_lookup.BASELINE  # the pane names the engine's tier
        assert str(app.query_one("#lookup-message").render()).startswith("keep ")
        table.focus()
        await pilot.press("enter")  # the baseline row: nothing to open
        await pilot.pause()
        assert not isinstance(app.screen, KernelScreen)
        assert any("a baseline" in n.message for n in app._notifications)
        await pilot.press("5")
        app.query_one("#lookup-input").value = "0 1 1"
        await pilot.press("enter")
        await pilot.pause()
        assert any("positive integer" in n.message for n in app._notifications)


async def test_export_table(app_db, tmp_path):
    target = tmp_path / "view.csv"
    app = ExplorerApp(app_db, with_bundled=False)
    async with app.run_test(size=SIZE) as pilot:
        await _ready(pilot)
        await pilot.press("2", "e")
        await pilot.pause()
        assert isinstance(app.screen, ExportTableScreen)
        app.screen.query_one("#export-path").value = str(target)
        await pilot.press("enter")
        await pilot.pause()
        assert target.read_text().startswith("m,n,k")
        await pilot.press("e")
        app.screen.query_one("#export-path").value = str(target)
        await pilot.press("enter")
        await pilot.pause()
        assert any("exists" in n.message for n in app._notifications)


async def _live_bench(pilot, app, cluster: str = "", waits: int = 100, set_: str = "") -> str:
    """Run 64_64_64 from the Bench pane (on ``cluster``, of ``set_`` when given); the status line
    once it ends."""
    await pilot.press("7")
    app.query_one("#bench-mnk").value = "64_64_64"
    app.query_one("#bench-cluster").value = cluster
    app.query_one("#bench-set").value = set_
    await pilot.click("#bench-run")
    for _ in range(waits):
        await pilot.pause(0.1)
        if app.bench_process is None and not app.query_one("#bench-run").disabled:
            break
    return str(app.query_one("#bench-status").render())


async def test_live_bench_without_a_gpu_says_so(app_db):
    app = ExplorerApp(app_db, with_bundled=False)
    async with app.run_test(size=SIZE) as pilot:
        await _ready(pilot)
        status = await _live_bench(pilot, app)
        assert "exit 7" in status and ("torch" in status or "GPU" in status)
        # the app let go of the store and reads it again afterwards
        await pilot.press("r")
        await _ready(pilot)
        assert len(app.selections) == 3


async def test_live_bench_on_a_cluster_that_does_not_answer_says_so(app_db, monkeypatch):
    """The Bench pane targets a Dask cluster when given one: the run goes there (no local GPU
    needed), and a scheduler that does not answer within the wait is the run's message (exit 5)."""
    monkeypatch.setenv("CUDA_L2_EXPLORER_CLUSTER_WAIT_S", "1")
    app = ExplorerApp(app_db, with_bundled=False)
    async with app.run_test(size=SIZE) as pilot:
        await _ready(pilot)
        status = await _live_bench(pilot, app, cluster="tcp://127.0.0.1:9", waits=300)
        assert "exit 5" in status and "no Dask scheduler answered at tcp://127.0.0.1:9 within 1 s" in status


async def test_live_bench_of_an_archive_url_fetches_and_unpacks_the_set_first(app_db, tmp_path):
    """A set given as a URL in the Bench pane is downloaded and unpacked by the run (then, on a
    CPU machine, the run stops at the GPU check)."""
    served = tmp_path / "served"
    served.mkdir()
    with tarfile.open(served / "planted.tar.gz", "w:gz") as tar:
        tar.add(PLANTED_F32, arcname=f"planted/{PLANTED_F32.name}")
    handler = functools.partial(_QuietFiles, directory=str(served))
    app = ExplorerApp(app_db, with_bundled=False)
    with loopback_server(handler) as url:
        async with app.run_test(size=SIZE) as pilot:
            await _ready(pilot)
            status = await _live_bench(pilot, app, set_=f"{url}/planted.tar.gz", waits=300)
            log = "\n".join(app.query_one("#bench-log").lines)
    assert "exit 7" in status, status
    assert "unpacked: 12 files" in log, log


async def test_bench_progress_says_what_it_counts(app_db):
    app = ExplorerApp(app_db, with_bundled=False)
    async with app.run_test(size=SIZE) as pilot:
        await _ready(pilot)
        await pilot.press("7")
        pane = app.query_one(BenchPane)
        status = app.query_one("#bench-status")
        pane.progress(1_000_000, 2_000_000, "1.0/2.0 MB", "downloading https://h/set.tar.gz", "bytes")
        assert str(status.render()) == "downloading https://h/set.tar.gz · 1.0/2.0 MB"
        pane.progress(4, 16, "", "building kernels")
        assert str(status.render()) == "building kernels: 4/16 files"
        pane.progress(3, 60, "64_64_64 measuring", "bench offline")
        assert str(status.render()) == "3/60 configs · 64_64_64 measuring"


async def test_the_bench_bar_shows_only_for_a_run(app_db):
    """Idle, no bar (an empty one animates as if busy); a run shows it busy until its first
    progress record; a run that ends before counting anything hides it, one that counted keeps it."""
    from textual.widgets import ProgressBar

    app = ExplorerApp(app_db, with_bundled=False)
    async with app.run_test(size=SIZE) as pilot:
        await _ready(pilot)
        await pilot.press("7")
        pane = app.query_one(BenchPane)
        bar = app.query_one("#bench-progress", ProgressBar)
        assert not bar.display
        pane.running(True)
        assert bar.display and bar.total is None
        pane.finished("failed (exit 7): no GPU")
        assert not bar.display
        pane.running(True)
        pane.progress(3, 60, "64_64_64 measuring", "bench offline")
        pane.finished("done")
        assert bar.display and (bar.progress, bar.total) == (3, 60)
        pane.running(True)  # the next run starts busy again
        assert bar.display and bar.total is None


async def test_messages_are_shown_as_written_not_as_markup(app_db):
    """A run's error said "pip install 'cuda-l2-explorer[gpu]'" and the pane showed it without
    "[gpu]" (read as markup); a message with "[/x]" in it raised MarkupError."""
    app = ExplorerApp(app_db, with_bundled=False)
    said = "failed (exit 7): bench needs torch with CUDA: pip install 'cuda-l2-explorer[gpu]' [/x]"
    async with app.run_test(size=SIZE) as pilot:
        await _ready(pilot)
        await pilot.press("7")
        app.query_one(BenchPane).finished(said)
        assert str(app.query_one("#bench-status").render()) == said
        app.notify(said, title="bench", severity="error")
        app._show_problem("cannot open /data/[/x]/store.duckdb")
        await pilot.pause()
        assert [n.message for n in app._notifications] == [said]
        assert "/data/[/x]/store.duckdb" in str(app.query_one("#problem").render())


async def test_table_cells_and_names_are_shown_as_written(app_db):
    """A DataTable reads a str cell as markup: a compile error's "[with T=int]" was mangled and a
    "[/x]" in a message or a kernel file's path (a folder may be named so) raised MarkupError and
    stopped the app."""
    import polars as pl
    from cuda_l2_explorer.db.shapes import Shape

    said = 'error: no instance of "f" [with T=int] matches [/x]'
    detail = {
        "kernel": {"path": "/sets/[/x]/64_64_64.cu", "source_sha256": "0", "runtime_shapes": False},
        "measurements": pl.DataFrame({"status": ["compile_error"], "message": [said]}),
        "audit": pl.DataFrame(),
        "search_log": pl.DataFrame(),
    }
    app = ExplorerApp(app_db, with_bundled=False)
    async with app.run_test(size=SIZE) as pilot:
        await _ready(pilot)
        app.push_screen(KernelScreen("mine/h100_F32F16F16F32", Shape(64, 64, 64), detail))
        await pilot.pause()
        assert _rows(app.screen.query_one("#kernel-measurements")) == [("compile_error", said)]
        shown = [str(w.render()) for w in app.screen.query("Static")]
        assert any("file /sets/[/x]/64_64_64.cu" in t for t in shown)


async def test_empty_and_broken_stores_show_a_message(tmp_path):
    for path, words in ((tmp_path / "empty.duckdb", "no speedups"), (tmp_path / "bad.duckdb", "corrupt")):
        if "bad" in path.name:
            path.write_bytes(b"not a database" * 100)
        app = ExplorerApp(path, with_bundled=False)
        async with app.run_test(size=SIZE) as pilot:
            await _ready(pilot)
            problem = app.query_one("#problem")
            assert problem.display and words in str(problem.render())
            await pilot.press("2", "1")  # still usable


async def test_help_palette_and_keymap(app_db, tmp_path, monkeypatch):
    config = tmp_path / "cfg" / "cuda-l2-explorer"
    config.mkdir(parents=True)
    (config / "keys.toml").write_text('[keys]\nshow_configs = "c"\n')
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    app = ExplorerApp(app_db, with_bundled=False)
    async with app.run_test(size=SIZE) as pilot:
        await _ready(pilot)
        await pilot.press("c")
        assert app.query_one("#tabs").active == "configs"
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        titles = [c.title for c in app.get_system_commands(app.screen)]
        assert "Export table" in titles and "Copy table (MARKDOWN)" in titles
        assert all(f"Show {s.label}" in titles for s in app.selections)


async def test_k_opens_the_set_list_and_the_palette_switches_sets(app_db):
    app = ExplorerApp(app_db, with_bundled=False)
    async with app.run_test(size=SIZE) as pilot:
        await _ready(pilot)
        assert len(app.selections) >= 2
        await pilot.press("2", "k")  # from a pane's table
        select = app.query_one("#selection", Select)
        assert select.expanded and app.focused in (select, *select.query("SelectOverlay"))
        start = app.selections.index(app.shown)
        step, key = (1, "down") if start + 1 < len(app.selections) else (-1, "up")
        await pilot.press(key, "enter")
        await _ready(pilot)
        assert app.shown == app.selections[start + step]
        last = len(app.selections) - 1
        (command,) = [
            c for c in app.get_system_commands(app.screen) if c.title == f"Show {app.selections[last].label}"
        ]
        command.callback()
        await _ready(pilot)
        assert app.shown == app.selections[last]


CPU_MS_BOUND = 80  # half the fastest the replaced DataTable took


async def test_filter_and_sort_within_80_ms_on_a_full_grid(tmp_path):
    """The bundled H100 published set (1000 configs): a filter or a sort, from the key to a full
    frame drawn, costs the app at most 80 ms of CPU (median of seven; CPU time, so that other work
    on the machine does not count, each timed once the app's workers are done, so that none of
    theirs does either). The DataTable this replaced took 160-500 ms. Measured on the two-core CI
    machine: a median of 33-40 ms alone, 50.4 ms beside the other xdist worker's nvcc (its CPU time
    inflated by the shared core's caches), which a 50 ms bound failed (2026-12-08)."""
    app = ExplorerApp(tmp_path / "none.duckdb", with_bundled=True)
    async with app.run_test(size=(160, 48)) as pilot:
        await _ready(pilot)
        labels = [s.label for s in app.selections]
        app.query_one("#selection").value = labels.index(
            "cuda-l2/h100_F32F16F16F32 · h100 · offline · published"
        )
        await _ready(pilot)
        pane = app.query_one(ConfigsPane)
        assert pane.frame.height == 1000
        await pilot.press("2")

        async def cpu_ms(*keys: str) -> float:
            await app.workers.wait_for_complete()
            await pilot.pause()
            started = time.process_time()
            await pilot.press(*keys)
            _screen_lines(app)
            return (time.process_time() - started) * 1e3

        async def filtered(text: str) -> float:
            pane.query_one("#configs-filter").value = text
            pane.query_one("#configs-filter").focus()
            return await cpu_ms("enter")

        texts = ("m >= 1024 and speedup < 1", "", "regime == 'tiny'", "", "n < 4096", "", "k > 64")
        filters = [await filtered(t) for t in texts]
        assert pane.view.height == 900
        print(f"filter {sorted(filters)} ms (CPU, key to frame)")
        assert statistics.median(filters) <= CPU_MS_BOUND
        await pilot.press("escape")
        sorts = [await cpu_ms("S") for _ in range(7)]  # reverse the sort: all 900 rows reordered
        assert pane.sort_reverse and pane.view["speedup"].to_list() == sorted(
            pane.view["speedup"].to_list(), reverse=True
        )
        print(f"sort {sorted(sorts)} ms (CPU, key to frame)")
        assert statistics.median(sorts) <= CPU_MS_BOUND


def _over_best(path) -> dict[tuple[int, int, int], float]:
    """Speedup over the fastest of the seven baselines per config, from the published CSV itself."""
    from conftest import read_fixture
    from cuda_l2_explorer.db.views import BASELINES

    assert len(BASELINES) == 7
    return {shape: min(row[b] for b in BASELINES) for shape, row in read_fixture(path).items()}


async def _compare(app, pilot, left: str, right: str) -> list[tuple[str, ...]]:
    """Pick two selections by label in the Compare pane; the table's rows as shown."""
    labels = [s.label for s in app.selections]
    await pilot.press("6")
    app.query_one("#compare-left").value = labels.index(left)
    app.query_one("#compare-right").value = labels.index(right)
    await _ready(pilot)
    table = app.query_one("#compare-table")
    assert [str(c.label) for c in table.columns.values()] == ["m", "n", "k", "left", "right", "right/left"]
    return _rows(table)


async def test_compare_two_modes_and_two_sets(app_db):
    """Compare, config by config: the figures are the published CSVs' and the measured run's."""
    import math

    from conftest import OFFLINE, SERVER

    offline, server = _over_best(OFFLINE), _over_best(SERVER)
    published = "cuda-l2/h100_F32F16F16F32 · h100 · {} · published"
    measured = "ours/h100_F32F16F16F32 · h100 · offline · measured"
    app = ExplorerApp(app_db, with_bundled=False)
    async with app.run_test(size=SIZE) as pilot:
        await _ready(pilot)
        rows = await _compare(app, pilot, published.format("offline"), published.format("server"))
        expected = [
            ((m, n, k), offline[m, n, k], server[m, n, k], server[m, n, k] / offline[m, n, k])
            for (m, n, k) in offline
        ]
        assert sorted(rows) == sorted(
            (str(m), str(n), str(k), f"{a:.3f}", f"{b:.3f}", f"{r:.3f}") for (m, n, k), a, b, r in expected
        )
        ratios = [float(row[5]) for row in rows]
        assert ratios == sorted(ratios)  # worst for the right-hand side first
        summary = str(app.query_one("#compare-summary").render())
        geomean = math.exp(sum(math.log(r) for *_, r in expected) / len(expected))
        assert f"{len(expected)} common configs" in summary and f"right/left {geomean:.3f}" in summary

        # Two kernel sets: one config in common (1024^3); ours ran 10 us against torch.matmul's 8 us.
        rows = await _compare(app, pilot, published.format("offline"), measured)
        left = offline[1024, 1024, 1024]
        assert rows == [("1024", "1024", "1024", f"{left:.3f}", "0.800", f"{0.8 / left:.3f}")]
        assert f"left = {published.format('offline')}" in str(app.query_one("#compare-summary").render())


# ------------------------------------------------------------------------- keyboard and layout
_KEY_NAMES = {"/": "slash", " ": "space", "=": "equals_sign", "\r": "enter", "\b": "backspace"}


def _type_at_once(app, text: str) -> None:
    """Queue every key before the app handles the first, as a terminal delivers a quick typist's
    (or a paste's) keys in one read; pilot.press would wait for the app between two keys."""
    for ch in text:
        app.post_message(events.Key(_KEY_NAMES.get(ch, ch), None if ch in "\r\b" else ch))


def _screen_lines(app) -> list[str]:
    """The screen as a person sees it: every line of a full render of the current screen."""
    return [strip.text for strip in app.screen._compositor.render_strips()]


def _shown_rows(app, table_id: str) -> list[list[str]]:
    """The rows of a table as drawn on screen (under its header line), split into cells."""
    table = app.query_one(table_id)
    region = table.scrollable_content_region  # without the scrollbars
    lines = _screen_lines(app)[region.y + 1 : region.bottom]
    return [line[region.x : region.right].split() for line in lines if line[region.x : region.right].strip()]


async def test_keys_typed_quickly_after_slash_and_5_land_in_the_input(app_db):
    """'/m == 3' typed in one burst: the filter gets the text, not the table (where '3' would
    switch to the Heatmap and Enter open a kernel view)."""
    app = ExplorerApp(app_db, with_bundled=False)
    async with app.run_test(size=SIZE) as pilot:
        await _ready(pilot)
        await pilot.press("2")
        _type_at_once(app, "/m == 3\r")
        await _ready(pilot)
        assert app.query_one("#tabs").active == "configs"
        assert app.query_one("#configs-filter").value == "m == 3"
        assert not isinstance(app.screen, KernelScreen)
        await pilot.press("escape")
        _type_at_once(app, "5128 128 128")
        await _ready(pilot)
        assert app.query_one("#tabs").active == "lookup"
        assert app.query_one("#lookup-input").value == "128 128 128"


async def test_no_stale_row_after_clearing_an_empty_filter(tmp_path):
    """An empty result, then the filter cleared with the keys queued at once: every row drawn is
    a row of the view at its full width (a '5 6 1' row, the first config drawn at the empty
    table's column widths, stayed on screen)."""
    app = ExplorerApp(tmp_path / "none.duckdb", with_bundled=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await _ready(pilot)
        pane = app.query_one(ConfigsPane)
        assert pane.frame.height == 1000
        await pilot.press("2")
        first = [str(v) for v in pane.view.select("m", "n", "k", "regime").row(0)]
        assert app.query_one("#configs-table").cursor_row == 0  # a new table is read from the top
        assert _shown_rows(app, "#configs-table")[0][:4] == first
        await pilot.press("slash")
        _type_at_once(app, "m == 5\r")
        await _ready(pilot)
        assert pane.view.height == 0 and _shown_rows(app, "#configs-table") == []
        _type_at_once(app, "\b" * 6 + "\r")
        await _ready(pilot)
        assert pane.view.height == 1000
        shown = _shown_rows(app, "#configs-table")
        assert len(shown) >= 10
        expected = [[str(v) for v in row] for row in pane.view.select("m", "n", "k", "regime").rows()]
        assert [row[:4] for row in shown] == expected[: len(shown)]


async def test_escape_leaves_inputs_and_single_letter_keys_stay_in_them(app_db):
    app = ExplorerApp(app_db, with_bundled=False)
    async with app.run_test(size=SIZE) as pilot:
        await _ready(pilot)
        for tab_key, input_id, target in (
            ("2", "#configs-filter", "#configs-table"),
            ("5", "#lookup-input", "#lookup-table"),
            ("7", "#bench-mnk", "#bench-run"),
        ):
            await pilot.press(tab_key)
            app.query_one(input_id).focus()
            await pilot.pause()
            _type_at_once(app, "qy1e/r?")  # each a key of the app; here all of them are text
            await pilot.pause()
            assert app.query_one(input_id).value.endswith("qy1e/r?")
            assert app.is_running and not isinstance(app.screen, HelpScreen)
            assert app.query_one("#tabs").active != "overview"
            await pilot.press("escape")
            assert app.focused is app.query_one(target)
        await pilot.press("3")  # out of the input, the keys are the app's again
        assert app.query_one("#tabs").active == "heatmap"


async def test_footer_offers_no_typing_key_while_an_input_has_focus(app_db):
    from textual.keys import key_to_character

    app = ExplorerApp(app_db, with_bundled=False)
    async with app.run_test(size=SIZE) as pilot:
        await _ready(pilot)
        await pilot.press("slash")
        assert app.focused is app.query_one("#configs-filter")
        offered = [key for key, b in app.screen.active_bindings.items() if b.enabled and b.binding.show]
        typed = [key for key in offered if len(key) == 1 or key == "slash" or key_to_character(key)]
        assert offered and typed == []


async def test_footer_packs_its_keys_on_a_narrow_terminal(app_db):
    from textual.widgets import Footer

    for size, compact in (((80, 24), True), (SIZE, False)):
        app = ExplorerApp(app_db, with_bundled=False)
        async with app.run_test(size=size) as pilot:
            await _ready(pilot)
            await pilot.press("2")  # the Configs pane offers the most keys
            assert app.query_one(Footer).compact is compact
            await pilot.resize_terminal(*(SIZE if compact else (80, 24)))
            await pilot.pause()
            assert app.query_one(Footer).compact is not compact


async def test_sort_by_keyboard(app_db):
    app = ExplorerApp(app_db, with_bundled=False)
    async with app.run_test(size=SIZE) as pilot:
        await _published_offline(pilot)
        pane = app.query_one(ConfigsPane)
        await pilot.press("2", "s")
        assert isinstance(app.screen, SortScreen)
        await pilot.press("home", "down", "enter")  # the second column: n
        assert not isinstance(app.screen, SortScreen)
        assert (pane.sort_column, pane.sort_reverse) == ("n", False)
        assert pane.view["n"].to_list() == sorted(pane.view["n"].to_list())
        assert [row[1] for row in _shown_rows(app, "#configs-table")] == [str(v) for v in pane.view["n"]]
        await pilot.press("s", "enter")  # the sorted column again: reversed
        assert (pane.sort_column, pane.sort_reverse) == ("n", True)
        assert pane.view["n"].to_list() == sorted(pane.view["n"].to_list(), reverse=True)
        await pilot.press("S")
        assert (pane.sort_column, pane.sort_reverse) == ("n", False)
        await pilot.press("s", "escape")  # cancelled: nothing changes
        assert (pane.sort_column, pane.sort_reverse) == ("n", False)
        app.action_sort_configs("vs torch.matmul")  # the palette's "Sort configs by vs torch"
        assert pane.view["vs torch.matmul"].to_list() == sorted(pane.view["vs torch.matmul"].to_list())
        titles = [c.title for c in app.get_system_commands(app.screen)]
        assert "Sort configs by speedup" in titles and "Sort configs by vs torch" in titles


async def test_cursor_stays_on_its_config_through_a_filter_and_goes_to_the_top_on_a_sort(app_db):
    app = ExplorerApp(app_db, with_bundled=False)
    async with app.run_test(size=SIZE) as pilot:
        await _published_offline(pilot)
        pane = app.query_one(ConfigsPane)
        await pilot.press("2", "down", "down")
        table = app.query_one("#configs-table")
        chosen = table.cursor_key
        m = pane.view.filter(pl.col("mnk") == chosen)["m"].item()
        pane.query_one("#configs-filter").value = f"m == {m}"
        pane.refresh_view()
        assert table.cursor_key == chosen and pane.view["mnk"][table.cursor_row] == chosen
        await pilot.press("s", "home", "enter")  # sort by m: the view is read from the top
        assert table.cursor_row == 0 and table.scroll_y == 0


async def test_mouse_sorts_by_a_header_and_opens_a_row(app_db):
    app = ExplorerApp(app_db, with_bundled=False)
    async with app.run_test(size=SIZE) as pilot:
        await _published_offline(pilot)
        await pilot.press("2")
        pane, table = app.query_one(ConfigsPane), app.query_one("#configs-table")
        await pilot.click("#configs-table", offset=(9, 0))  # the header of the second column, n
        assert pane.sort_column == "n" and pane.view["n"].to_list() == sorted(pane.view["n"].to_list())
        await pilot.click("#configs-table", offset=(2, 3))  # the third row: the cursor moves there
        assert table.cursor_row == 2
        await pilot.click("#configs-table", offset=(2, 3))  # clicked again: its kernel view
        await _ready(pilot)
        assert isinstance(app.screen, KernelScreen) and str(app.screen.shape) == pane.view["mnk"][2]


async def test_a_smaller_table_replaces_a_larger_one_under_the_cursor(app_db):
    """The cursor on the last config of 8 (in the frame's order), then a selection of 2: the new
    rows are shown (the old row order must not index the new rows)."""
    app = ExplorerApp(app_db, with_bundled=False)
    async with app.run_test(size=SIZE) as pilot:
        await _published_offline(pilot)
        await pilot.press("2")
        pane, table = app.query_one(ConfigsPane), app.query_one("#configs-table")
        table.cursor_row = pane.view["mnk"].to_list().index(pane.frame["mnk"][7])
        labels = [s.label for s in app.selections]
        app.query_one("#selection").value = labels.index("ours/h100_F32F16F16F32 · h100 · offline · measured")
        await _ready(pilot)
        assert table.row_count == 2 and len(_shown_rows(app, "#configs-table")) == 2


async def _published_vs_measured(app, pilot) -> list[tuple[str, ...]]:
    """The Compare pane in its published-vs-measured view; the table's rows as shown."""
    from cuda_l2_explorer.app.panes.compare import PUBLISHED_VS_MEASURED

    await _ready(pilot)
    await pilot.press("6")
    app.query_one("#compare-view").value = PUBLISHED_VS_MEASURED
    await _ready(pilot)
    table = app.query_one("#compare-table")
    return _rows(table)


async def test_compare_shows_published_beside_measured(loaded_db):
    """Each measured config of the reference set beside its published figure, the configs the
    measurement contradicts most first, with the summary; back to two selections on request."""
    from cuda_l2_explorer.app.panes.compare import PVM_COLUMNS
    from pvm_fixtures import plant_measured_reference_set

    plant_measured_reference_set(loaded_db)
    app = ExplorerApp(loaded_db, with_bundled=False)
    async with app.run_test(size=SIZE) as pilot:
        rows = await _published_vs_measured(app, pilot)
        table = app.query_one("#compare-table")
        assert [str(c.label) for c in table.columns.values()] == [label for _, label in PVM_COLUMNS]
        assert [row[:3] for row in rows] == [
            ("64", "64", "64"),  # published 1.25, measured 0.733: contradicted
            ("1024", "1024", "2048"),  # not capturable: its isolated call, 41 / 43 against 1.10
            ("1024", "1024", "1024"),
            ("128", "64", "64"),
            ("64", "128", "64"),
            ("64", "64", "128"),
            ("2048", "1024", "1024"),  # incorrect: no measured ratio, last
        ]
        assert rows[0][3:8] == ("1.250", "0.733", f"{0.733333 / 1.25:.3f}", "contradicted", "device_time")
        assert rows[1][6:8] == ("contradicted", "isolated_call")
        assert rows[-1][4] == "-" and rows[-1][8:10] == ("incorrect", "fp16_accumulation_suspected")
        assert rows[-1][7] == "-"  # no measured ratio: no metric
        summary = str(app.query_one("#compare-summary").render())
        assert "5 configs compared" in summary and "contradicts 1" in summary
        assert "(isolated_call): 1 configs compared" in summary
        assert "1 measured config(s) have no measured ratio" in summary
        assert not app.query_one("#compare-left").display

        app.query_one("#compare-view").value = "pair"
        await _ready(pilot)
        assert app.query_one("#compare-left").display


async def test_compare_says_how_to_measure_a_published_set(app_db):
    app = ExplorerApp(app_db, with_bundled=False)
    async with app.run_test(size=SIZE) as pilot:
        assert await _published_vs_measured(app, pilot) == []
        summary = str(app.query_one("#compare-summary").render())
        assert "no harness-3 measurement" in summary
        assert "bench --set <checkout>/kernels/h100_F32F16F16F32 --set-name cuda-l2" in summary


def test_the_first_selection_is_the_measured_one_with_the_most_configs():
    """With the reference set's partial measurement bundled beside our whole grid, a fresh app
    opens on ours (both measured, H100, offline), not on the first in name order."""
    from cuda_l2_explorer.app.data import Selection, preferred_selection

    partial = Selection("cuda-l2/h100_F32F16F16F32", "h100", "offline", "measured")
    whole = Selection("ours/h100_F32F16F16F32", "h100", "offline", "measured")
    published = Selection("cuda-l2/h100_F32F16F16F32", "h100", "offline", "published")
    counts = {partial: 112, whole: 1000, published: 1000}
    assert preferred_selection([partial, published, whole], None, counts) == whole
    assert preferred_selection([partial, published, whole], partial, counts) == partial  # kept
