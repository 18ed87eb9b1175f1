"""The help screen: help.en.md or help.de.md beside this module, rendered as Markdown."""

from __future__ import annotations

from pathlib import Path

from rich.markdown import Markdown
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static


def help_text(lang: str) -> str:
    """The help page in `lang`."""
    path = Path(__file__).with_name(f"help.{lang}.md")
    if not path.exists():
        path = Path(__file__).with_name("help.en.md")
    return path.read_text(encoding="utf-8")


class HelpScreen(ModalScreen[None]):
    """What to type, the commands and the keys."""

    BINDINGS = [Binding("escape,f1,q", "close", "Close", show=False)]

    def __init__(self, lang: str) -> None:
        super().__init__()
        self.lang = lang

    def compose(self) -> ComposeResult:
        """The help page."""
        with VerticalScroll(id="help-box", classes="dialog"):
            yield Static(Markdown(help_text(self.lang), hyperlinks=False))

    def action_close(self) -> None:
        """Back to the chat."""
        self.dismiss(None)
