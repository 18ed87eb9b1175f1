"""The footnotes of the current recommendation; choosing one opens its quote (SourceChosen)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.message import Message
from textual.widgets import OptionList

if TYPE_CHECKING:
    from advisor.kb.knowledge import Citation, Knowledge


class SourcesList(OptionList):
    """Numbered sources: [n] title — where."""

    class SourceChosen(Message):
        """The user chose footnote `number`."""

        def __init__(self, number: int) -> None:
            super().__init__()
            self.number = number

    def show(self, notes: list[Citation], kb: Knowledge | None) -> None:
        """List these citations, numbered from 1."""
        options = []
        for i, c in enumerate(notes, 1):
            source = kb.sources.get(c.source) if kb is not None else None
            text = Text(f"[{i}] ", style="bold")
            text.append(source.title if source else c.source)
            if c.locator:
                text.append(f" — {c.locator}", style="dim")
            options.append(text)
        self.clear_options()
        self.add_options(options)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        """Enter or a click opens the chosen source."""
        event.stop()
        self.post_message(self.SourceChosen(event.option_index + 1))
