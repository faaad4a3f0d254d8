"""SVG snapshots of the app's screens at a fixed size (pytest-textual-snapshot).

Regenerate after an intended change with `pytest tests/test_app_snapshots.py --snapshot-update`
and look at the SVGs in tests/__snapshots__/ before committing them.
"""

from __future__ import annotations

import pytest
from cuda_l2_explorer.app.app import ExplorerApp
from cuda_l2_explorer.db.store import Store
from test_app import _ready
from textual.widgets import Input

SIZE = (140, 42)


@pytest.fixture
def snap_app(app_db):
    # The overview shows the runs' provenance: pin what differs between two test runs.
    with Store.open(app_db, with_bundled=False) as store, store.transaction():
        for table in ("published_speedups", "runs"):
            store.con.execute(
                f"UPDATE {table} SET run_id = 'published-' || mode "
                "WHERE run_id IN (SELECT run_id FROM runs WHERE kind = 'published')"
            )
        store.con.execute(
            "UPDATE runs SET started_at = TIMESTAMP '2026-11-22 12:00', finished_at = NULL, "
            "source = regexp_extract(source, '[^/]+$'), command_line = 'cuda-l2-explorer import-results'"
        )
    return ExplorerApp(app_db, with_bundled=False)


@pytest.mark.parametrize(
    "keys",
    [["1"], ["2"], ["3"], ["5", *"1000 1000 1000", "enter"], ["question_mark"]],
    ids=["overview", "configs", "heatmap", "lookup", "help"],
)
def test_screens(snap_compare, snap_app, keys):
    async def before(pilot):
        await _ready(pilot)
        # A blinking cursor makes the picture depend on timing: keep every cursor steady.
        for text_input in snap_app.query(Input):
            text_input.cursor_blink = False
        snap_app.query_one("#selection").value = 0
        await _ready(pilot)
        await pilot.press(*keys)
        await _ready(pilot)

    assert snap_compare(snap_app, terminal_size=SIZE, run_before=before)
