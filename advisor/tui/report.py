"""A modal with the whole recommendation as the Markdown report (advisor.render.markdown), as it
pastes into a ticket; Rich renders it in one widget, which opens at once even for a long report."""

from __future__ import annotations

from rich.markdown import Markdown
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, Static

from advisor.chat.strings import t


class ReportScreen(ModalScreen[None]):
    """The full report."""

    BINDINGS = [Binding("escape,q", "close", "Close", show=False)]

    def __init__(self, markdown: str, lang: str) -> None:
        super().__init__()
        self.markdown = markdown
        self.lang = lang

    def compose(self) -> ComposeResult:
        """The report and how to close it."""
        with VerticalScroll(id="report-box", classes="dialog"):
            yield Static(Markdown(self.markdown, hyperlinks=False))
            yield Label(t("close_hint", self.lang), classes="dialog-note")

    def action_close(self) -> None:
        """Back to the chat."""
        self.dismiss(None)
