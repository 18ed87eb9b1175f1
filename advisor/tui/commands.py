"""The command palette (Ctrl+P) lists the same commands as the input line: each hit types the
command for the user (and `/audit` leaves the path to fill in)."""

from __future__ import annotations

from functools import partial
from typing import Any

from textual.command import DiscoveryHit, Hit, Hits, Provider

from advisor.chat.strings import t

COMMAND_LINES = (
    ("cmd_help", "/help", True),
    ("cmd_why", "why", True),
    ("cmd_how", "how", True),
    ("cmd_sources", "/sources", True),
    ("cmd_rules", "/rules", True),
    ("cmd_report", "/report", True),
    ("cmd_audit", "/audit ", False),
    ("cmd_save", "/save", True),
    ("cmd_new", "/new", True),
    ("cmd_lang_en", "/lang en", True),
    ("cmd_lang_de", "/lang de", True),
)


class AdvisorCommands(Provider):
    """The chat's commands in the palette."""

    def _entries(self) -> list[tuple[str, str, bool]]:
        lang = getattr(self.app, "lang", "en")
        out = []
        for key, line, run in COMMAND_LINES:
            if line in ("why", "how"):
                line = t(f"word_{line}", lang)
            out.append((t(key, lang), line, run))
        return out

    def _run(self, line: str, run: bool) -> None:
        app: Any = self.app
        app.type_line(line, submit=run)

    async def discover(self) -> Hits:
        """Every command, when nothing is typed yet."""
        for text, line, run in self._entries():
            yield DiscoveryHit(text, partial(self._run, line, run), help=line.strip())

    async def search(self, query: str) -> Hits:
        """Commands that match what is typed in the palette."""
        matcher = self.matcher(query)
        for text, line, run in self._entries():
            score = max(matcher.match(text), matcher.match(line))
            if score > 0:
                yield Hit(score, matcher.highlight(text), partial(self._run, line, run), help=line.strip())
