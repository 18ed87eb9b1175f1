"""A modal that asks before a key ends an open consultation: y or Enter quits, n or Esc stays.

Only the quit key asks: "quit" typed alone is already a sentence said on purpose, and ctrl+c stays
the way out that always works.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label

from advisor.chat.strings import t


class QuitScreen(ModalScreen[bool]):
    """Ask whether to end the consultation; dismisses with True to quit."""

    BINDINGS = [
        Binding("y,j,enter,ctrl+q", "answer(True)", show=False),
        Binding("n,escape", "answer(False)", show=False),
    ]

    def __init__(self, lang: str) -> None:
        super().__init__()
        self.lang = lang

    def compose(self) -> ComposeResult:
        """The question and the keys that answer it."""
        with Vertical(id="quit-box", classes="dialog"):
            yield Label(t("quit_title", self.lang), classes="dialog-title")
            yield Label(t("quit_note", self.lang))
            yield Label(t("quit_keys", self.lang), classes="dialog-note")

    def action_answer(self, quit: bool) -> None:
        """Quit (True) or go back to the consultation (False)."""
        self.dismiss(quit)
