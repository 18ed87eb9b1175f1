"""A modal that shows one footnote: the source's title, publisher and date, where in it, the quoted
words and the trust note."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, Static

from advisor.chat.strings import t

if TYPE_CHECKING:
    from advisor.kb.knowledge import Citation, Knowledge


class SourceScreen(ModalScreen[None]):
    """Footnote `number`: its source and quote."""

    BINDINGS = [Binding("escape,enter,q", "close", "Close", show=False)]

    def __init__(self, number: int, cite: Citation, kb: Knowledge, lang: str) -> None:
        super().__init__()
        self.number = number
        self.cite = cite
        self.kb = kb
        self.lang = lang

    def compose(self) -> ComposeResult:
        """The source, the locator, the quote."""
        source = self.kb.sources.get(self.cite.source)
        body = Text()
        if source is not None:
            body.append(f"{source.publisher or '—'}" + (f", {source.date}" if source.date else "") + "\n", style="dim")
            if source.url:
                body.append(source.url + "\n", style="underline")
        body.append(f"\n{t('source_locator', self.lang)}: ", style="bold")
        body.append((self.cite.locator or "—") + "\n")
        body.append(f"\n{t('source_quote', self.lang)}:\n", style="bold")
        if self.cite.quote:
            body.append(f"“{self.cite.quote}”\n", style="italic")
        else:
            body.append(t("no_quote", self.lang) + "\n", style="dim italic")
        if source is not None and source.trust:
            body.append(f"\n{t('source_trust', self.lang)}: ", style="bold")
            body.append(source.trust + "\n", style="dim")
        title = source.title if source is not None else self.cite.source
        with VerticalScroll(id="source-box", classes="dialog"):
            yield Label(Text(f"[{self.number}] {title}", style="bold"), classes="dialog-title")
            yield Static(body, markup=False)
            yield Label(t("close_hint", self.lang), classes="dialog-note")

    def action_close(self) -> None:
        """Back to the chat."""
        self.dismiss(None)
