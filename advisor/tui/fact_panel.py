"""The facts panel: each fact known so far, its value and where it came from (the user, the
topology, an edit, or assumed). Enter or a click on a row asks to change it (EditRequested).

A small line widget rather than a DataTable: a turn usually changes one value, and a DataTable
redraws every row on any change; here only the rows whose text changed are drawn again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from advisor.chat.strings import t

if TYPE_CHECKING:
    from advisor.chat.dialogue import FactRow

WIDTHS = (16, 20, 10)  # fact, value, from; each cell has a space either side
HEADERS = ("col_fact", "col_value", "col_from")


class FactsTable(ScrollView, can_focus=True):
    """The facts so far under a fixed header row; select one to change it."""

    BINDINGS = [
        Binding("up", "cursor(-1)", "Up", show=False),
        Binding("down", "cursor(1)", "Down", show=False),
        Binding("pageup", "cursor(-8)", show=False),
        Binding("pagedown", "cursor(8)", show=False),
        Binding("enter", "select", "Change", show=False),
    ]
    COMPONENT_CLASSES = {"facts--header", "facts--even", "facts--cursor"}
    DEFAULT_CSS = """
    FactsTable {
        background: $surface;
        color: $foreground;
        & > .facts--header { text-style: bold; background: $panel; }
        & > .facts--even { background: $surface-lighten-1 50%; }
        & > .facts--cursor { background: $block-cursor-blurred-background; }
        &:focus > .facts--cursor {
            background: $block-cursor-background;
            color: $block-cursor-foreground;
            text-style: $block-cursor-text-style;
        }
    }
    """

    class EditRequested(Message):
        """The user wants to change one fact."""

        def __init__(self, row: FactRow) -> None:
            super().__init__()
            self.row = row

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.rows_shown: list[FactRow] = []
        self.lang = "en"
        self.cursor_row = 0

    # --- content -----------------------------------------------------------------------------------

    def show(self, rows: list[FactRow], lang: str) -> None:
        """Show these facts, keeping the cursor on the same row where it can. When the same facts are
        shown in the same order, only the rows whose text changed are drawn again."""
        before, self.rows_shown = self.rows_shown, list(rows)
        same = lang == self.lang and [r.path for r in rows] == [r.path for r in before]
        self.lang = lang
        self.virtual_size = Size(sum(WIDTHS) + 2 * len(WIDTHS), len(rows) + 1)
        self.cursor_row = min(self.cursor_row, max(len(rows) - 1, 0))
        if not same:
            self.refresh()
            return
        for i, (old, new) in enumerate(zip(before, rows, strict=False)):
            if (old.label, old.shown, old.origin) != (new.label, new.shown, new.origin):
                self._refresh_row(i)

    def move_cursor(self, row: int) -> None:
        """Put the cursor on row `row` (clamped) and scroll it into view."""
        if not self.rows_shown:
            return
        old, self.cursor_row = self.cursor_row, min(max(row, 0), len(self.rows_shown) - 1)
        self._refresh_row(old)
        self._refresh_row(self.cursor_row)
        top = int(self.scroll_y)
        visible = max(self.scrollable_content_region.height - 1, 1)
        if self.cursor_row < top:
            self.scroll_to(y=self.cursor_row, animate=False)
        elif self.cursor_row >= top + visible:
            self.scroll_to(y=self.cursor_row - visible + 1, animate=False)

    def _refresh_row(self, index: int) -> None:
        """Draw one row again, where it is in view (the header stays on line 0)."""
        y = index + 1 - int(self.scroll_y)
        if 1 <= y < self.size.height:
            self.refresh(Region(0, y, self.size.width, 1))

    # --- drawing -----------------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        """Line `y` of the view: the header, or a fact row."""
        width = self.scrollable_content_region.width
        base = self.rich_style
        if y == 0:
            cells = tuple(t(key, self.lang) for key in HEADERS)
            return self._strip(cells, base + self.get_component_rich_style("facts--header"), width)
        index = int(self.scroll_y) + y - 1
        if index >= len(self.rows_shown):
            return Strip.blank(width, base)
        row = self.rows_shown[index]
        style = base
        if index % 2:
            style += self.get_component_rich_style("facts--even")
        if index == self.cursor_row:
            style += self.get_component_rich_style("facts--cursor")
        return self._strip((row.label, row.shown, row.origin), style, width)

    def _strip(self, cells: tuple[str, ...], style: Style, width: int) -> Strip:
        segments: list[Segment] = []
        for text, cell_width in zip(cells, WIDTHS, strict=False):
            cell = Text(text, no_wrap=True, overflow="ellipsis")
            cell.truncate(cell_width, overflow="ellipsis", pad=True)
            segments.append(Segment(f" {cell.plain} ", style))
        return Strip(segments).adjust_cell_length(width, style)

    # --- actions -----------------------------------------------------------------------------------

    def action_cursor(self, step: int) -> None:
        """Move the cursor by `step` rows."""
        self.move_cursor(self.cursor_row + step)

    def action_select(self) -> None:
        """Ask to edit the fact under the cursor."""
        if 0 <= self.cursor_row < len(self.rows_shown):
            self.post_message(self.EditRequested(self.rows_shown[self.cursor_row]))

    def on_click(self, event: events.Click) -> None:
        """A click on a row selects it and asks to edit it."""
        offset = event.get_content_offset(self)
        if offset is None or offset.y == 0:
            return
        index = int(self.scroll_y) + offset.y - 1
        if index < len(self.rows_shown):
            self.move_cursor(index)
            self.action_select()
