"""The facts panel: each fact known so far, its value and where it came from (the user, the
topology, an edit, or assumed). Enter on a row asks to change it (EditRequested)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.message import Message
from textual.widgets import DataTable

from advisor.tui.strings import t

if TYPE_CHECKING:
    from advisor.tui.dialogue import FactRow


class FactsTable(DataTable[str]):
    """The facts so far; select one to change it."""

    class EditRequested(Message):
        """The user wants to change one fact."""

        def __init__(self, row: FactRow) -> None:
            super().__init__()
            self.row = row

    def __init__(self, **kwargs: object) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)  # type: ignore[arg-type]
        self.rows_shown: list[FactRow] = []
        self.lang = "en"

    def show(self, rows: list[FactRow], lang: str) -> None:
        """Show these facts, keeping the cursor on the same row where it can."""
        row_before = self.cursor_row
        if lang != self.lang or not self.columns:
            self.lang = lang
            self.clear(columns=True)
            self.add_column(t("col_fact", lang), width=16, key="fact")
            self.add_column(t("col_value", lang), width=21, key="value")
            self.add_column(t("col_from", lang), width=11, key="from")
        else:
            self.clear()
        self.rows_shown = list(rows)
        for row in rows:
            self.add_row(row.label, row.shown, row.origin, key=row.path)
        if rows:
            self.move_cursor(row=min(max(row_before, 0), len(rows) - 1), animate=False)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Enter (or a click) on a row asks to edit that fact."""
        event.stop()
        if 0 <= event.cursor_row < len(self.rows_shown):
            self.post_message(self.EditRequested(self.rows_shown[event.cursor_row]))
