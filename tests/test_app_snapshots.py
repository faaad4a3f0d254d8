"""SVG snapshots of the app's screens at a fixed size (pytest-textual-snapshot).

Regenerate after an intended change with `pytest tests/test_app_snapshots.py --snapshot-update`
and look at the SVGs in tests/__snapshots__/ before committing them.
"""

from __future__ import annotations

import pytest
from test_app import _ready
from textual.widgets import Input

from explorer.app.app import ExplorerApp

SIZE = (140, 42)


@pytest.fixture
def snap_app(app_db):
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
