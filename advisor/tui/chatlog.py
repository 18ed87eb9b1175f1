"""The conversation pane: what the user typed and what the advisor answered, newest at the bottom.

A RichLog renders each message once, at the pane's width, into lines: a long consultation stays
quick to lay out (a widget per Markdown block made every turn slower than the one before).
`messages` keeps the texts, for tests and for nothing else.
"""

from __future__ import annotations

from rich.markdown import Markdown
from rich.padding import Padding
from rich.text import Text
from textual import events
from textual.widgets import RichLog


class ChatLog(RichLog):
    """The messages of the consultation."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(wrap=True, markup=False, highlight=False, auto_scroll=False, min_width=20, **kwargs)  # type: ignore[arg-type]
        self.messages: list[tuple[str, str]] = []
        self._width = 0  # the width the lines were rendered at

    def on_resize(self, event: events.Resize) -> None:
        """Render every message again at the new width: wrapped text re-wraps, nothing is clipped.
        (Textual also runs RichLog's own handler, which writes what waited for a known size.)"""
        width = self.scrollable_content_region.width
        if width == self._width:
            return
        self._width = width
        if self.messages:
            self.clear()
            for role, text in self.messages:
                self._append(self._render_message(role, text))

    def add_user(self, text: str) -> None:
        """Show what the user typed (a pasted block keeps its lines)."""
        self.messages.append(("user", text))
        self._append(self._render_message("user", text))

    def add_advisor(self, markdown: str) -> None:
        """Show an advisor message, rendered from Markdown; one taller than the pane is shown from its
        first line (with the question above it), so the reader starts at the beginning of the answer."""
        self.messages.append(("advisor", markdown))
        start = len(self.lines)
        self._append(self._render_message("advisor", markdown))
        if len(self.lines) - start > self.scrollable_content_region.height > 0:
            self.scroll_to(y=max(start - 2, 0), animate=False, immediate=True)

    @staticmethod
    def _render_message(role: str, text: str) -> Padding:
        """A message as the pane shows it: the user's line indented and bold, the advisor's Markdown."""
        if role == "user":
            return Padding(Text("› " + text.rstrip(), style="bold"), (1, 0, 0, 6))
        return Padding(Markdown(text, hyperlinks=False), (1, 0, 0, 0))

    def _append(self, renderable: Padding) -> None:
        """Write at the bottom and scroll there now, so the message is in the next frame (RichLog's
        own auto-scroll waits for a refresh, which shows the new message one frame later)."""
        width = self.scrollable_content_region.width
        # The pane's own width, not the console's (which a headless run leaves at 80 columns).
        self.write(renderable, width=width if width >= self.min_width else None)
        self.scroll_end(animate=False, immediate=True, x_axis=False)

    def clear_log(self) -> None:
        """Remove every message (a new consultation)."""
        self.messages.clear()
        self.clear()
