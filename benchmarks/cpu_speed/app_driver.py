"""The app, headless through Textual's pilot, as bench.py measures it in each version's venv.

    python app_driver.py DB REPEATS WIDTH HEIGHT    (prints one JSON line)

It acts as a user does (keys, a click on a column header) and reads only what is on screen (the
Configs table's rows), so it times any version of the app alike. Each latency runs from the
moment the input event reaches the app to the end of the first frame that shows its result: the
screen's compositor update, encoded as the terminal's bytes (what a real terminal would be sent;
headless Textual skips only that encoding, so it is done here). Textual draws on a timer (60 frames
a second at most), so a frame follows the work by up to ~17 ms; that wait is part of what a user
sees and is counted.

Nothing polls the app while it works: the pilot's own ``press`` and ``click`` wait until the
process has been idle for 20 ms slices (``wait_for_idle``), ~90 ms for a key that does nothing,
and a busy wait loop steals the interpreter from the app's loading thread (it made the first
paint 0.8 s later). The events are sent as the pilot sends them, and the frames are watched.

- ``mounted_at`` / ``painted_at``: wall-clock stamps when the app is mounted and when a frame
  first shows the Configs table with rows (bench.py subtracts the moment it started this process);
- ``filter_ms`` / ``clear_ms``: Enter in the filter input ("/" then the expression, not timed)
  to the frame with the filtered rows (then the same clearing the filter);
- ``sort_ms``: a click on the speedup column's header to the frame whose first row changed;
- ``sort_key_ms``: the reverse-sort key (S) on the table, to the same;
- ``idle_frame_ms``: a key the app ignores, with a repaint of the table, to the next frame (the
  floor under the latencies above: the frame timer and one table's repaint).
"""

from __future__ import annotations

import asyncio
import json
import re
import resource
import sys
import time
from collections.abc import Callable
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


class Frames:
    """Watches the app's frames: after each one, checks a condition; the first frame that
    finds it true is stamped, with the frame's terminal bytes encoded first."""

    def __init__(self, app) -> None:
        self.app = app
        self.condition: Callable[[], bool] | None = None
        self.done = asyncio.Event()
        self.stamp = 0.0
        display = app._display

        def watched(screen, renderable) -> None:
            display(screen, renderable)
            if renderable is not None and hasattr(renderable, "render_segments"):
                renderable.render_segments(app.console)  # what a terminal would be sent
            if self.condition is not None and self.condition():
                self.stamp = time.perf_counter()
                self.condition = None
                self.done.set()

        app._display = watched

    async def until(self, condition: Callable[[], bool], send: Callable[[], None]) -> float:
        """Send an event and wait (without polling) for the first frame where ``condition``
        holds; milliseconds from the event to the end of that frame."""
        self.done.clear()
        self.condition = condition
        started = time.perf_counter()
        send()
        await asyncio.wait_for(self.done.wait(), WAIT_S)
        return (self.stamp - started) * 1e3


def key(app, name: str, char: str | None = None):
    """A key event as the pilot sends it (the driver's message to the app)."""
    from textual import events

    def send() -> None:
        event = events.Key(name, char)
        event.set_sender(app)
        app._driver.send_message(event)

    return send


def click(app, widget, offset: tuple[int, int]):
    """A mouse click as the pilot sends it (down, up, click to the screen), without its pauses."""
    from textual.events import Click, MouseDown, MouseUp
    from textual.pilot import _get_mouse_message_arguments

    def send() -> None:
        arguments = _get_mouse_message_arguments(widget, offset, button=1)
        app.mouse_position = (arguments["x"], arguments["y"])
        for kind in (MouseDown, MouseUp, Click):
            app.screen._forward_event(kind(**({**arguments, "chain": 1} if kind is Click else arguments)))

    return send


async def timed_filter(pilot, frames: Frames, table, text: str) -> float:
    await pilot.press("slash")
    pilot.app.focused.value = text
    await pilot.pause()
    before = table.row_count
    ms = await frames.until(lambda: table.row_count != before, key(pilot.app, "enter", "\r"))
    await pilot.pause()
    return ms


async def timed_sort(pilot, frames: Frames, table, send) -> float:
    first = table.get_row_at(0)
    ms = await frames.until(lambda: table.row_count and table.get_row_at(0) != first, send)
    await pilot.pause()
    return ms


async def run(db: Path, repeats: int, size: tuple[int, int]) -> dict:
    from cuda_l2_explorer.app.app import ExplorerApp

    app = ExplorerApp(db, None)
    out: dict = {"filter": FILTER, "sort_column": SORT_COLUMN}
    async with app.run_test(size=size) as pilot:
        out["mounted_at"] = time.time()
        frames = Frames(app)
        painted = asyncio.Event()
        frames.condition = lambda: (t := configs_table(app)) is not None and t.row_count > 0
        frames.done = painted
        await asyncio.wait_for(painted.wait(), 60)
        out["painted_at"] = time.time() - (time.perf_counter() - frames.stamp)
        out["rss_after_paint_mb"] = rss_mb()
        frames.done = asyncio.Event()
        await pilot.press("2")  # the Configs tab
        await pilot.pause(0.2)
        table = configs_table(app)
        out["rows"] = table.row_count
        for name in ("filter_ms", "clear_ms", "sort_ms", "sort_key_ms", "idle_frame_ms"):
            out[name] = []
        for _ in range(repeats):
            out["filter_ms"].append(await timed_filter(pilot, frames, table, FILTER))
            out["filtered_rows"] = table.row_count
            out["clear_ms"].append(await timed_filter(pilot, frames, table, ""))
        table.focus()
        await pilot.pause()
        x = header_x(table, SORT_COLUMN)
        await pilot.hover(table, offset=(x, 0))  # else a click after a rebuild can land on a stale column
        for _ in range(repeats):
            out["sort_ms"].append(await timed_sort(pilot, frames, table, click(app, table, (x, 0))))
        ignored = key(app, "f12")
        for _ in range(repeats):
            out["sort_key_ms"].append(await timed_sort(pilot, frames, table, key(app, "S", "S")))
            # A key bound to nothing, and a repaint of the table asked for with it: the next frame.
            out["idle_frame_ms"].append(
                await frames.until(lambda: True, lambda: (ignored(), table.refresh()))
            )
            await pilot.pause()
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


if __name__ == "__main__":
    db, repeats, width, height = sys.argv[1:5]
    print(json.dumps(asyncio.run(run(Path(db), int(repeats), (int(width), int(height))))))
