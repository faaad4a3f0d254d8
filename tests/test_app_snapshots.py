"""SVG snapshots of every pane and screen of the app at a fixed size (pytest-textual-snapshot).

Regenerate after an intended change with `pytest tests/test_app_snapshots.py --snapshot-update`
and look at the SVGs in tests/__snapshots__/ before committing them: each must show its pane with
data (tests/test_app.py checks the same content by widget id, these check how it looks).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import copy_store, store_template
from cuda_l2_explorer.app.app import ExplorerApp
from cuda_l2_explorer.db.store import Store
from test_app import _ready
from textual.widgets import Input

pytestmark = pytest.mark.usefixtures("freeze_what_outlives_it")  # conftest.py

SIZE = (160, 48)
SMALL = (80, 24)  # the smallest terminal the app is laid out for: the key figures stay in view

KERNEL_SOURCE = """\
#include <torch/extension.h>
// BM = Int<128>, BN = Int<128>, BK = Int<32>
void cuda_l2_h100_fp32(torch::Tensor a, torch::Tensor b, torch::Tensor b_col_major, torch::Tensor c) {
  // a hand-made stand-in for a measured kernel
}
"""


def _pin(db) -> None:
    """The overview shows the runs' provenance: pin what differs between two test runs; give the
    measured set more configs, and a kernel source and a search log for the kernel view."""
    from test_store import _insert_bench_run

    with Store.open(db, with_bundled=False) as store, store.transaction():
        # Three more measured configs, so Compare has distinct ratios (no ties to order).
        for run_id, shape in (("r3", (64, 64, 64)), ("r4", (64, 64, 128)), ("r5", (2048, 1024, 1024))):
            _insert_bench_run(store, run_id, *shape)
        for table in ("published_speedups", "runs"):
            store.con.execute(
                f"UPDATE {table} SET run_id = 'published-' || mode "
                "WHERE run_id IN (SELECT run_id FROM runs WHERE kind = 'published')"
            )
        store.con.execute(
            "UPDATE runs SET started_at = TIMESTAMP '2026-11-22 12:00', finished_at = NULL, "
            "source = regexp_extract(source, '[^/]+$'), command_line = 'cuda-l2-explorer import-results'"
        )
        store.con.execute(
            "INSERT INTO kernels (kernel_id, set_id, m, n, k, path, source_sha256, source, pad_bm, pad_bn, "
            "pad_bk, build_status) VALUES ('k-256', 'ours/h100_F32F16F16F32', 256, 512, 1024, "
            "'h100_F32F16F16F32/256_512_1024.cu', 'ab12cd34', ?, 128, 128, 32, 'ok')",
            [KERNEL_SOURCE],
        )
        store.con.execute(
            "INSERT INTO runs (run_id, kind, gpu, status, tool_version, started_at) "
            "VALUES ('t1', 'tune', 'h100', 'complete', 't', TIMESTAMP '2026-11-22 12:00')"
        )
        for cand, median, chosen in (("sm90_a|default", 9e-6, True), ("sm90_b|default", 12e-6, False)):
            store.con.execute(
                "INSERT INTO search_log (run_id, m, n, k, candidate, stage, kernel, status, median, chosen) "
                "VALUES ('t1', 256, 512, 1024, ?, 2, ?, 'ok', ?, ?)",
                [cand, cand.split("|")[0], median, chosen],
            )


@pytest.fixture(scope="module")
def _pinned_template(_app_template, tmp_path_factory):
    with store_template(tmp_path_factory, "pinned-template") as path:
        _pin(copy_store(_app_template, path))
    return path


@pytest.fixture
def snap_app(db_path, _pinned_template):
    """app_db pinned (made once a module, copied for each test)."""
    return ExplorerApp(copy_store(_pinned_template, db_path), with_bundled=False)


async def _steady(pilot) -> None:
    """Wait for the workers, then keep every cursor of the current screen steady (a blinking one
    makes the picture depend on timing)."""
    await _ready(pilot)
    for text_input in pilot.app.screen.query(Input):
        text_input.cursor_blink = False
    await pilot.pause()


def _picture(snap_compare, app, *steps, size=SIZE):
    """The app after pressing each step's keys in turn (a step may also be a callable)."""

    async def before(pilot):
        app.animation_level = "none"  # e.g. the Bench pane's idle progress bar sweeps with time
        await _steady(pilot)
        for step in steps:
            if callable(step):
                step(app)
            else:
                await pilot.press(*step)
            await _steady(pilot)

    return snap_compare(app, terminal_size=size, run_before=before)


def _choose_published_offline(app) -> None:
    app.query_one("#selection").value = 0


def _compare_sets(app) -> None:
    labels = [s.label for s in app.selections]
    app.query_one("#compare-left").value = labels.index(
        "cuda-l2/h100_F32F16F16F32 · h100 · offline · published"
    )
    app.query_one("#compare-right").value = labels.index("ours/h100_F32F16F16F32 · h100 · offline · measured")


PANES = {
    "overview": [_choose_published_offline, ["2"], ["1"]],
    "configs": [_choose_published_offline, ["2"]],
    "heatmap": [_choose_published_offline, ["3"]],
    "plots": [["4"]],  # the measured selection (chosen first): the plot of speedup against size
    "lookup": [_choose_published_offline, ["5", *"1000 1000 1000", "enter"]],
    "compare": [["6"], _compare_sets],
    "bench": [["7"]],
    "help": [["question_mark"]],
}


@pytest.mark.parametrize("steps", PANES.values(), ids=PANES.keys())
def test_screens(snap_compare, snap_app, steps):
    assert _picture(snap_compare, snap_app, *steps)


# At 80x24: the geomean (Overview), the speedup (Configs) and the predicted speedup (Lookup) are in
# view without scrolling; the title bar goes and the controls take one line each.
SMALL_PANES = {name: PANES[name] for name in ("overview", "configs", "lookup", "compare")}


@pytest.mark.parametrize("steps", SMALL_PANES.values(), ids=SMALL_PANES.keys())
def test_screens_at_80x24(snap_compare, snap_app, steps):
    assert _picture(snap_compare, snap_app, *steps, size=SMALL)


def _published_vs_measured(app) -> None:
    from cuda_l2_explorer.app.panes.compare import PUBLISHED_VS_MEASURED

    app.query_one("#compare-view").value = PUBLISHED_VS_MEASURED


@pytest.fixture
def pvm_app(loaded_db):
    """The fixture's published rows and a planted harness-3 measurement of the same set."""
    from pvm_fixtures import plant_measured_reference_set

    plant_measured_reference_set(loaded_db)
    return ExplorerApp(loaded_db, with_bundled=False)


@pytest.mark.parametrize("size", [SIZE, SMALL], ids=["160x48", "80x24"])
def test_compare_published_vs_measured(snap_compare, pvm_app, size):
    """Compare's published-vs-measured view: the summary, then the configs the measurement
    contradicts most first, with status and audit findings."""
    assert _picture(snap_compare, pvm_app, ["6"], _published_vs_measured, size=size)


def test_compare_published_without_measurement(snap_compare, snap_app):
    """A set published but not measured: the pane names the command that would measure it."""
    assert _picture(snap_compare, snap_app, ["6"], _published_vs_measured)


def test_sort_menu(snap_compare, snap_app):
    """s in the Configs table: the columns, the sorted one marked."""
    assert _picture(snap_compare, snap_app, _choose_published_offline, ["2"], ["s"])


def _focus_configs_table(app) -> None:
    app.query_one("#configs-table").focus()


# Configs of the measured set, filtered to 256x512x1024, Enter: its kernel view.
KERNEL_VIEW = (["2", "slash", *"m == 256", "enter"], _focus_configs_table, ["enter"])


def test_kernel_view(snap_compare, snap_app):
    """The kernel view of the measured 256x512x1024: source, measurements, search log."""
    assert _picture(snap_compare, snap_app, *KERNEL_VIEW)


def test_kernel_export_dialog(snap_compare, snap_app):
    assert _picture(snap_compare, snap_app, *KERNEL_VIEW, ["x"])


def test_table_export_dialog(snap_compare, snap_app):
    assert _picture(snap_compare, snap_app, _choose_published_offline, ["2"], ["e"])


def test_error_invalid_lookup_shape(snap_compare, snap_app):
    assert _picture(snap_compare, snap_app, ["5", *"0 1 x", "enter"])


def test_error_unusable_store(snap_compare, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a relative path: the message names it the same in every run
    (tmp_path / "bad.duckdb").write_bytes(b"not a database" * 100)
    app = ExplorerApp(tmp_path.joinpath("bad.duckdb").relative_to(tmp_path), with_bundled=False)
    assert _picture(snap_compare, app)


def test_every_snapshot_belongs_to_a_test(request):
    """syrupy fails a run that leaves a snapshot no test reads (a renamed or removed test) only in a
    single process: under ``pytest -n 2`` (the README's test command) its workers skip that check.
    Here it is for this module's snapshots, against every test of the module (whatever -k chose)."""
    module = request.node.getparent(pytest.Module)
    tests = {item.name for item in module.collect() if "snap_compare" in item.fixturenames}
    folder = Path(__file__).parent / "__snapshots__" / Path(__file__).stem
    stale = sorted(p.name for p in folder.iterdir() if p.suffix != ".svg" or p.stem not in tests)
    assert len(tests) >= 20 and not stale, f"delete the snapshots no test reads: {stale}"
