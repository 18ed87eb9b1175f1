"""Host evidence: recognising a file's kind by its content, and the records parsers return.

Every parser takes the text of one file and returns a `Parsed` record: the facts it found, each
with the line it came from (`Evidence`), and notes about what it could not read. Parsers never
raise on bad input; a file they cannot use yields a note, and the audit goes on with the rest.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
MAX_TEXT = 8 * 1024 * 1024


@dataclass(frozen=True)
class Evidence:
    """Where a fact was read: file, 1-based line, and the text of that line."""

    file: str
    line: int
    text: str

    def as_dict(self) -> dict[str, Any]:
        """The contract's evidence object."""
        return {"file": self.file, "line": self.line, "text": self.text}


@dataclass
class Parsed:
    """What one parser read from one file."""

    kind: str
    file: str
    data: dict[str, Any] = field(default_factory=dict)
    evidence: dict[str, Evidence] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def at(self, key: str, lineno: int, text: str) -> None:
        """Remember where `key` was read."""
        self.evidence.setdefault(key, Evidence(self.file, lineno, text.strip()[:300]))


def clean(text: str) -> str:
    """Text as parsers want it: no ANSI colours, no carriage returns, no NUL bytes."""
    return ANSI.sub("", text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", ""))


@dataclass
class InputFile:
    """One file given to the audit: what it was recognised as, and what could not be read."""

    path: str
    kinds: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
