"""The app, headless through Textual's pilot, as bench.py measures it in each version's venv.

    python app_driver.py DB REPEATS WIDTH HEIGHT    (prints one JSON line)

It acts as a user does (keys, a click on a column header) and reads only what is on screen (the
Configs table's rows), so it times any version of the app alike:
- ``mounted_at`` / ``painted_at``: wall-clock stamps when the app is mounted and when the Configs
  table first has rows (bench.py subtracts the moment it started this process);
- ``filter_ms`` / ``clear_ms``: "/" then a filter expression and Enter (then clearing it again),
  until the table's row count has changed and the app is idle again;
- ``sort_ms``: a click on the speedup column's header, until the first row has changed and the app
  is idle again;
- ``idle_ms``: one idle wait with nothing to do, the floor under the two above.
"""

from __future__ import annotations

import asyncio
import json
import re
import resource
import sys
import time
from pathlib import Path

FILTER = "m >= 1024 and speedup < 1"
SORT_COLUMN = "speedup"
WAIT_S = 20.0


def rss_mb() -> float:
    status = Path("/proc/self/status").read_text()
    return int(re.search(r"VmRSS:\s+(\d+)", status).group(1)) / 1024


def configs_table(app):
    """The Configs pane's table: of the tables (DataTable, or the FrameTable that replaced it),
    the one that shows the most rows."""
    tables = [w for w in app.query("DataTable, FrameTable") if hasattr(w, "row_count")]
    return max(tables, key=lambda t: t.row_count) if tables else None


def header_x(table, key: str) -> int:
    """The x offset of column ``key``'s header cell, in either table's own terms."""
    if hasattr(table, "ordered_columns"):  # DataTable
        index = next(i for i, c in enumerate(table.ordered_columns) if str(c.key.value) == key)
        return sum(c.get_render_width(table) for c in table.ordered_columns[:index]) + 1
    x = 0  # FrameTable: columns keyed by name, each its width plus one blank either side
    for column_key, column in table.columns.items():
        if column_key == key:
            return x + 1
        x += column.width + 2
    raise KeyError(key)


async def wait_until(pilot, condition) -> None:
    deadline = time.perf_counter() + WAIT_S
    while not condition():
        if time.perf_counter() > deadline:
            raise TimeoutError("the app did not get there")
        await pilot.pause(0.001)
    await pilot.pause()  # and idle again: the update's own messages and a repaint handled


async def timed_filter(pilot, table, text: str) -> float:
    await pilot.press("slash")
    pilot.app.focused.value = text
    before = table.row_count
    started = time.perf_counter()
    await pilot.press("enter")
    await wait_until(pilot, lambda: table.row_count != before)
    return (time.perf_counter() - started) * 1e3


async def timed_sort(pilot, table) -> float:
    x = header_x(table, SORT_COLUMN)
    await pilot.hover(table, offset=(x, 0))  # else a click after a rebuild can land on a stale column
    await pilot.pause()
    first = table.get_row_at(0)
    started = time.perf_counter()
    await pilot.click(table, offset=(x, 0))
    await wait_until(pilot, lambda: table.row_count and table.get_row_at(0) != first)
    return (time.perf_counter() - started) * 1e3


async def run(db: Path, repeats: int, size: tuple[int, int]) -> dict:
    from cuda_l2_explorer.app.app import ExplorerApp

    app = ExplorerApp(db, None)
    out: dict = {"filter": FILTER, "sort_column": SORT_COLUMN}
    async with app.run_test(size=size) as pilot:
        out["mounted_at"] = time.time()
        await wait_until(pilot, lambda: (t := configs_table(app)) is not None and t.row_count > 0)
        out["painted_at"] = time.time()
        out["rss_after_paint_mb"] = rss_mb()
        await pilot.press("2")  # the Configs tab
        await pilot.pause(0.2)
        table = configs_table(app)
        out["rows"] = table.row_count
        out["filter_ms"], out["clear_ms"], out["sort_ms"], out["idle_ms"] = [], [], [], []
        for _ in range(repeats):
            out["filter_ms"].append(await timed_filter(pilot, table, FILTER))
            out["filtered_rows"] = table.row_count
            out["clear_ms"].append(await timed_filter(pilot, table, ""))
        for _ in range(repeats):
            out["sort_ms"].append(await timed_sort(pilot, table))
            started = time.perf_counter()
            await pilot.pause()
            out["idle_ms"].append((time.perf_counter() - started) * 1e3)
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


if __name__ == "__main__":
    db, repeats, width, height = sys.argv[1:5]
    print(json.dumps(asyncio.run(run(Path(db), int(repeats), (int(width), int(height))))))
