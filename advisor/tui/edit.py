"""A modal that changes one fact: an input prefilled with its value; Enter applies, Esc cancels."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label

from advisor.chat.strings import t


class EditFactScreen(ModalScreen[str | None]):
    """Change one fact; dismisses with the typed value, or None."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", show=False)]

    def __init__(self, label: str, value: str, choices: tuple[str, ...], lang: str) -> None:
        super().__init__()
        self.label_text = label
        self.value = value
        self.choices = choices
        self.lang = lang

    def compose(self) -> ComposeResult:
        """Title, the prefilled input, the choices and the hint."""
        from textual.suggester import SuggestFromList

        with Vertical(id="edit-box", classes="dialog"):
            yield Label(t("edit_title", self.lang, fact=self.label_text), classes="dialog-title")
            yield Input(
                value=self.value,
                id="edit-input",
                suggester=SuggestFromList(self.choices, case_sensitive=False) if self.choices else None,
            )
            if self.choices:
                yield Label(" · ".join(self.choices), classes="dialog-note")
            yield Label(t("edit_hint", self.lang), classes="dialog-note")

    def on_mount(self) -> None:
        """Focus the input with its value selected."""
        self.query_one("#edit-input", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Apply the value."""
        event.stop()
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        """Leave the fact as it is."""
        self.dismiss(None)
