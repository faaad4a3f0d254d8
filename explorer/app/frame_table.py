"""FrameTable: a read-only table that draws only the rows on screen (Textual's Line API).

Textual's DataTable builds a Row object per row, measures every cell and caches renders by row
key, so refilling 1000 rows costs hundreds of milliseconds and a refill after an empty view can
leave rows drawn at the empty table's column widths. Here the cells are formatted once, when
the data arrives; a filter or a sort only hands over a new row order (``show_rows``), and a
frame draws the visible rows from it. Column widths are fixed by the data, not by the view.

The reading side mirrors DataTable's (``columns``, ``row_count``, ``cursor_row``,
``get_row_at``), so copying rows works on either.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

CELL_PADDING = 1  # blank cells either side of a value, as in DataTable


@dataclass
class TableColumn:
    key: str
    label: str
    width: int  # of the widest value or label, padding not included
    right: bool = False  # numbers align right

    def cell(self, text: str) -> str:
        body = text.rjust(self.width) if self.right else text.ljust(self.width)
        pad = " " * CELL_PADDING
        return pad + body[: self.width] + pad

    def header(self, marker: str) -> str:
        """The label with its one-character marker (or a blank) after it, aligned as the values."""
        return self.cell(self.label + (marker or " "))


class FrameTable(ScrollView, can_focus=True):
    """Rows of preformatted cells; ``show_rows`` picks which rows and in which order."""

    COMPONENT_CLASSES = {
        "frame-table--header",
        "frame-table--cursor",
        "frame-table--even-row",
    }
    DEFAULT_CSS = """
    FrameTable {
        background: $surface;
        color: $foreground;
        height: auto;
        max-height: 100%;
        &:focus {
            background-tint: $foreground 5%;
            & > .frame-table--cursor {
                background: $block-cursor-background;
                color: $block-cursor-foreground;
                text-style: $block-cursor-text-style;
            }
        }
        & > .frame-table--header { text-style: bold; background: $panel; color: $foreground; }
        & > .frame-table--even-row { background: $surface-lighten-1 50%; }
        &:dark > .frame-table--even-row { background: $surface-darken-1 40%; }
        & > .frame-table--cursor {
            background: $block-cursor-blurred-background;
            color: $block-cursor-blurred-foreground;
            text-style: $block-cursor-blurred-text-style;
        }
    }
    """
    BINDINGS = [
        Binding("enter", "select_row", "select row", show=False),
        Binding("up", "move(-1)", show=False),
        Binding("down", "move(1)", show=False),
        Binding("pageup", "page(-1)", show=False),
        Binding("pagedown", "page(1)", show=False),
        Binding("home", "move_to(0)", show=False),
        Binding("end", "move_to(-1)", show=False),
        Binding("left", "scroll_left", show=False),
        Binding("right", "scroll_right", show=False),
    ]

    cursor_row: reactive[int] = reactive(0, always_update=True, init=False)

    class Chosen(Message):
        """Something chosen in a table (its ``control``, for ``@on`` selectors): ``key`` names it."""

        def __init__(self, table: FrameTable, key: str) -> None:
            self.table = table
            self.key = key
            super().__init__()

        @property
        def control(self) -> FrameTable:
            return self.table

    class RowSelected(Chosen):
        """Enter (or a click on the cursor row): ``key`` is the row's key."""

    class HeaderSelected(Chosen):
        """A click on a column's label: ``key`` is the column's key."""

    def __init__(self, *, zebra_stripes: bool = True, **kwargs) -> None:
        super().__init__(**kwargs)
        self.zebra_stripes = zebra_stripes
        self.columns: dict[str, TableColumn] = {}
        self._rows: list[Sequence[str]] = []  # every row's cells, in the order set_rows gave them
        self._keys: list[str] = []
        self._order: list[int] = []  # the rows shown, as indices into _rows
        self._markers: dict[str, str] = {}  # text after a column's label (a sort arrow)
        self._header: list[Segment] | None = None
        self._styles: dict[str, Style] = {}  # computed once per style change, not once per line

    # ------------------------------------------------------------------ data
    def set_rows(
        self,
        columns: Sequence[tuple[str, str, bool]],
        rows: Sequence[Sequence[str]],
        keys: Sequence[str] | None = None,
        order: Sequence[int] | None = None,
    ) -> None:
        """Columns as (key, label, right-aligned) and every row's cells as text, shown in ``order``
        (all, as given, by default). A column is as wide as its widest value or its label and a
        one-character marker. The cursor stays on its row's key where the new rows show it."""
        current = self.cursor_key  # of the old rows: their order indexes them, not the new ones
        self._rows = list(rows)
        self._keys = list(keys) if keys is not None else [str(i) for i in range(len(self._rows))]
        widths = [len(label) + 1 for _, label, _ in columns]
        for row in self._rows:
            for i, text in enumerate(row):
                if len(text) > widths[i]:
                    widths[i] = len(text)
        self.columns = {
            key: TableColumn(key, label, width, right)
            for (key, label, right), width in zip(columns, widths, strict=True)
        }
        self._header = None
        self._show(range(len(self._rows)) if order is None else order, current)

    def show_rows(self, order: Sequence[int], keep_cursor: bool = True) -> None:
        """Show these rows (indices into the rows set) in this order. The cursor stays on its row
        where that row is still shown and ``keep_cursor`` asks for it, else goes to the top."""
        self._show(order, self.cursor_key if keep_cursor else None)

    def _show(self, order: Sequence[int], current: str | None) -> None:
        self._order = list(order)
        width = sum(c.width + 2 * CELL_PADDING for c in self.columns.values())
        self.virtual_size = Size(width, len(self._order) + 1)  # +1: the header line
        position = {self._keys[i]: n for n, i in enumerate(self._order)} if current is not None else {}
        self.cursor_row = position.get(current, 0)
        self.refresh()

    def set_marker(self, column_key: str | None, marker: str) -> None:
        """One character after one column's label (a sort arrow); the others lose theirs."""
        self._markers = {column_key: marker} if column_key in self.columns else {}
        self._header = None
        self.refresh()

    @property
    def row_count(self) -> int:
        return len(self._order)

    @property
    def cursor_key(self) -> str | None:
        if not self._order:
            return None
        return self._keys[self._order[min(self.cursor_row, len(self._order) - 1)]]

    def get_row_at(self, index: int) -> list[str]:
        return list(self._rows[self._order[index]])

    def shown_keys(self) -> list[str]:
        return [self._keys[i] for i in self._order]

    # ------------------------------------------------------------- rendering
    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._header = None
        self._styles = {}

    def _style(self, component: str) -> Style:
        """The widget's style with a component's on top ('' for none), cached until styles change."""
        style = self._styles.get(component)
        if style is None:
            style = self.rich_style
            if component:
                style += self.get_component_rich_style(component)
            self._styles[component] = style
        return style

    def _header_segments(self) -> list[Segment]:
        if self._header is None:
            style = self._style("frame-table--header")
            self._header = [
                Segment(c.header(self._markers.get(c.key, "")), style) for c in self.columns.values()
            ]
        return self._header

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.size.width
        base = self._style("")
        if y == 0:
            segments = self._header_segments()
        else:
            index = scroll_y + y - 1
            if index >= len(self._order):
                return Strip.blank(width, base)
            style = base
            if index == self.cursor_row:
                style = self._style("frame-table--cursor")
            elif self.zebra_stripes and index % 2:
                style = self._style("frame-table--even-row")
            row = self._rows[self._order[index]]
            segments = [
                Segment(c.cell(text), style) for c, text in zip(self.columns.values(), row, strict=True)
            ]
        strip = Strip(segments).crop(scroll_x, scroll_x + width)
        return strip.extend_cell_length(width, base)

    def watch_cursor_row(self, old: int, new: int) -> None:
        if self._order and not 0 <= new < len(self._order):
            self.cursor_row = max(0, min(new, len(self._order) - 1))
            return
        self._scroll_cursor_into_view()
        self.refresh()

    def _scroll_cursor_into_view(self) -> None:
        visible = max(self.scrollable_content_region.height - 1, 1)  # lines under the header
        top = round(self.scroll_y)
        if self.cursor_row < top:
            self.scroll_to(y=self.cursor_row, animate=False)
        elif self.cursor_row >= top + visible:
            self.scroll_to(y=self.cursor_row - visible + 1, animate=False)

    # --------------------------------------------------------------- actions
    def action_move(self, step: int) -> None:
        if self._order:
            self.cursor_row = max(0, min(self.cursor_row + step, len(self._order) - 1))

    def action_page(self, direction: int) -> None:
        self.action_move(direction * max(self.scrollable_content_region.height - 1, 1))

    def action_move_to(self, index: int) -> None:
        if self._order:
            self.cursor_row = index % len(self._order)

    def action_select_row(self) -> None:
        key = self.cursor_key
        if key is not None:
            self.post_message(self.RowSelected(self, key))

    def _on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        scroll_x, scroll_y = self.scroll_offset
        if offset.y == 0:
            x = offset.x + scroll_x
            for column in self.columns.values():
                x -= column.width + 2 * CELL_PADDING
                if x < 0:
                    self.post_message(self.HeaderSelected(self, column.key))
                    return
            return
        index = scroll_y + offset.y - 1
        if 0 <= index < len(self._order):
            if index == self.cursor_row:
                self.action_select_row()
            self.cursor_row = index
