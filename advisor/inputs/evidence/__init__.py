"""Host evidence: recognising a file's kind by its content, and the records parsers return.

Every parser takes the text of one file and returns a `Parsed` record: the facts it found, each
with the line it came from (`Evidence`), and notes about what it could not read. Parsers never
raise on bad input; a file they cannot use yields a note, and the audit goes on with the rest.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

# CSI sequences (colours, cursor moves), OSC sequences (titles, links) and the two-byte escapes, as
# terminals and `script` captures write them; each alternative is bounded, so cleaning is linear
ANSI = re.compile(r"\x1b\[[0-?]{0,32}[ -/]{0,8}[@-~]|\x1b\][^\x07\x1b\n]{0,2048}(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
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


PAIR_STATES = ("ok", "capable", "shm", "refused", "unsupported", "blocked", "broken")
ALL_PAIRS = "*"


@dataclass(frozen=True)
class PairState:
    """What one piece of evidence says of peer-to-peer between two GPUs: `pair` "0-1" (ALL_PAIRS: every
    pair of the host), a state of PAIR_STATES (ok: transfers work; capable: the driver says they could;
    shm: NCCL chose shared memory instead; refused: the engine found no P2P;
    unsupported: the cards or the platform have no P2P by design;
    blocked: P2P is possible but the platform turns it away; broken: transfers hang, fail or corrupt),
    how strong the evidence is (1: what the card or platform is known to do, 2: the driver's or NCCL's
    claim, 3: a transfer that was made or measured), its line and why, in words."""

    pair: str
    state: str
    strength: int
    evidence: Evidence | None
    why: str


def pair_key(a: int, b: int) -> str:
    """The key of the pair of two GPU indices, the smaller first."""
    return f"{min(a, b)}-{max(a, b)}"


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
        if key not in self.evidence:
            self.evidence[key] = Evidence(self.file, lineno, text.strip()[:300])


def gap(start: str, limit: int = 200) -> str:
    """A regex gap of at most `limit` characters on one line that never runs over another `start`.

    `start GAP end` searched in a line of many starts would scan from each start to the end of the
    line (quadratic: 1 MB of "NCCL INFO Channel" took minutes); with the gap stopping at the next
    start, each character is scanned from one start at most, so the search is linear by construction."""
    return f"(?:(?!{re.escape(start)})[^\\n]){{0,{limit}}}?"


def clean(text: str) -> str:
    """Text as parsers want it: no ANSI colours, no carriage returns, no NUL bytes."""
    if "\x1b" in text:
        text = ANSI.sub("", text)
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text.replace("\x00", "") if "\x00" in text else text


QUOTE = re.compile(r"^[ \t]{0,3}> ?", re.M)


def unquoted(text: str) -> str | None:
    """A paste whose every non-blank line starts with '>' (a quote in a mail, a forum or Markdown), with
    that one level of quoting taken off each line; None where it is not such a paste."""
    if not text.lstrip(" \t\n").startswith(">"):
        return None  # the first line already says: most files stop here
    lines = [line for line in text.split("\n") if line.strip()]
    if len(lines) < 2 or not all(line.lstrip(" \t").startswith(">") for line in lines):
        return None
    return QUOTE.sub("", text)


@dataclass
class InputFile:
    """One file given to the audit: what it was recognised as, notes on reading it, and the problems
    that cost evidence (not read at all, read only in part, a reader that failed on it)."""

    path: str
    kinds: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
