"""The conversation pane: what the user typed and what the advisor answered, newest at the bottom.

A RichLog renders each message once, at the pane's width, into lines: a long consultation stays
quick to lay out (a widget per Markdown block made every turn slower than the one before).
`messages` keeps the texts, for tests and for nothing else.
"""

from __future__ import annotations

from rich.markdown import Markdown
from rich.padding import Padding
from rich.text import Text
from textual.widgets import RichLog


class ChatLog(RichLog):
    """The messages of the consultation."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(wrap=True, markup=False, highlight=False, auto_scroll=False, min_width=40, **kwargs)  # type: ignore[arg-type]
        self.messages: list[tuple[str, str]] = []

    def add_user(self, text: str) -> None:
        """Show what the user typed (a pasted block keeps its lines)."""
        self.messages.append(("user", text))
        self._append(Padding(Text("› " + text.rstrip(), style="bold"), (1, 0, 0, 6)))

    def add_advisor(self, markdown: str) -> None:
        """Show an advisor message, rendered from Markdown; one taller than the pane is shown from its
        first line (with the question above it), so the reader starts at the beginning of the answer."""
        self.messages.append(("advisor", markdown))
        start = len(self.lines)
        self._append(Padding(Markdown(markdown, hyperlinks=False), (1, 0, 0, 0)))
        if len(self.lines) - start > self.scrollable_content_region.height > 0:
            self.scroll_to(y=max(start - 2, 0), animate=False, immediate=True)

    def _append(self, renderable: Padding) -> None:
        """Write at the bottom and scroll there now, so the message is in the next frame (RichLog's
        own auto-scroll waits for a refresh, which shows the new message one frame later)."""
        self.write(renderable)
        self.scroll_end(animate=False, immediate=True, x_axis=False)

    def clear_log(self) -> None:
        """Remove every message (a new consultation)."""
        self.messages.clear()
        self.clear()
