"""The answer line: completes names, the question's choices and commands as the user types, and
turns a multi-line paste (an `nvidia-smi topo -m` matrix) into one submission."""

from __future__ import annotations

import re
from collections.abc import Iterable

from textual import events
from textual.message import Message
from textual.suggester import Suggester
from textual.widgets import Input


class AnswerSuggester(Suggester):
    """Suggests a completion of the word being typed from the current list (model and GPU names, the
    question's choices, commands); the list changes with every question."""

    def __init__(self, words: Iterable[str] = ()) -> None:
        super().__init__(use_cache=False, case_sensitive=True)
        self.words: tuple[str, ...] = tuple(words)

    def set_words(self, words: Iterable[str]) -> None:
        """Replace the completion list."""
        expanded: list[str] = []
        for w in words:
            expanded.append(w)
            vendor = re.match(r"^(NVIDIA|AMD|Intel)\s+(\S.*)$", w)
            if vendor:
                expanded.append(vendor.group(2))
        self.words = tuple(dict.fromkeys(expanded))

    async def get_suggestion(self, value: str) -> str | None:
        """The whole value, completed at its last words by the first word list entry they begin."""
        if not value.strip():
            return None
        low = value.lower()
        starts = [0] + [m.end() for m in re.finditer(r"[\s,;(]+", value)]
        for start in starts:
            tail = low[start:]
            if len(tail) < 2:
                continue
            for word in self.words:
                if len(word) > len(tail) and word.lower().startswith(tail):
                    return value + word[len(tail) :]
        return None


class ChatInput(Input):
    """Where the user types; Enter submits."""

    class Pasted(Message):
        """A block of several lines was pasted (evidence such as a topology matrix)."""

        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    def _on_paste(self, event: events.Paste) -> None:
        text = event.text.replace("\r\n", "\n").replace("\r", "\n")  # terminals paste lines with CR
        if "\n" in text.strip():
            event.prevent_default()
            event.stop()
            self.post_message(self.Pasted(text))
