"""Known failures in any evidence: the messages of knowledge/messages.yaml and the signatures of
knowledge/failures.yaml, matched line by line.

Guarantees: every catalogued failure whose pattern matches a line of a file becomes the evidence fact
`failure_ID` with that line (the first match per failure and file) and the message it matched; the
patterns are checked to run in linear time when the catalogue loads (advisor.kb.signatures). Each
pattern's anchor, a literal every match holds, is found with str.find, and the pattern is tried on the
lines that hold it alone, so a file costs one fast scan per pattern and one bounded try per line found.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

from advisor.inputs.evidence import Parsed
from advisor.inputs.evidence.reader import Contribution, Reader, fact
from advisor.kb.knowledge import ANY_FAILURE, SPECIFIC_FAILURE, Message, load_failures, load_messages, signatures
from advisor.kb.signatures import anchor, problem

KIND = "known-failure"
SHOWN = 300  # the evidence text a finding quotes (Parsed.at); a longer line is quoted from just before its match


class Signature:
    """One line pattern of a failure: the fact it sets, its anchor and compiled form, its message."""

    __slots__ = ("anchor", "branched", "fact", "family", "message", "pattern", "specific", "variant")

    def __init__(self, fact_name: str, pattern: str, message: Message | None, specific: bool = True) -> None:
        self.fact = fact_name
        self.specific = specific  # it explains itself: no `unless: ['*']`
        self.anchor = anchor(pattern)
        self.pattern = re.compile(pattern)
        self.message = message
        # the message's place in its source: the pattern of one branch and the message's own share it
        self.family = (message.source, message.file, message.line, message.format) if message else None
        self.branched = message is not None and bool(message.causes)  # a line one branch claims is not its own
        self.variant = False  # the pattern of one branch: it claims every line it matches (set by _catalogue)

    def lines(self, text: str) -> Iterator[tuple[int, str, int]]:
        """Each line of `text` the pattern matches: (1-based number, the line, column of the match)."""
        at, number, counted = text.find(self.anchor), 1, 0
        while at >= 0:
            start = text.rfind("\n", 0, at) + 1
            end = text.find("\n", at)
            end = len(text) if end < 0 else end
            m = self.pattern.search(text, start, end)
            if m is not None:
                number += text.count("\n", counted, start)
                counted = start
                yield number, text[start:end], m.start() - start
            at = text.find(self.anchor, end + 1) if end < len(text) else -1


# a word of an anchor that the text must hold as a whole word: letters and underscores between other characters
WORD = re.compile(r"[A-Za-z_]{3,64}")


def _key_word(text: str) -> str | None:
    """The longest word of an anchor bounded on both sides inside it (so the text holds it as a whole word
    wherever the anchor stands), or None where the anchor has none."""
    inner = [m.group(0) for m in WORD.finditer(text) if m.start() > 0 and m.end() < len(text)]
    bounded = [w for w in inner if not text[text.index(w) - 1].isalpha()]
    return max(bounded, key=len) if bounded else None


class Catalogue:
    """The signatures, and which of them a text can hold: those whose anchor's key word it has (one pass of
    WORD over the text), and those without a key word, which are always searched."""

    def __init__(self, sigs: tuple[Signature, ...]) -> None:
        self.signatures = sigs
        self.by_word: dict[str, list[int]] = {}
        self.always: list[int] = []
        for i, sig in enumerate(sigs):
            word = _key_word(sig.anchor)
            if word is None:
                self.always.append(i)
            else:
                self.by_word.setdefault(word, []).append(i)

    def candidates(self, text: str) -> list[Signature]:
        """The signatures that may match somewhere in `text`, in catalogue order."""
        words = set(WORD.findall(text)) & self.by_word.keys()
        chosen = sorted({*self.always, *(i for w in words for i in self.by_word[w])})
        return [self.signatures[i] for i in chosen]


@cache
def _catalogue(root: Path | None = None) -> Catalogue:
    """Every failure's patterns; a pattern that could be slow is left out (the knowledge base refuses it
    when it loads, with file and line)."""
    out = []
    for failure, patterns in signatures(load_failures(root), load_messages(root)):
        specific = ANY_FAILURE not in failure.unless
        out += [Signature(failure.fact, p, m, specific) for p, m in patterns if p and not problem(p)]
    branched = {s.family for s in out if s.branched}
    for s in out:
        s.variant = s.family in branched and not s.branched
    return Catalogue(tuple(out))


def recognise(text: str) -> bool:
    """Whether any catalogued failure's pattern stands in the text (parse then passes over comments)."""
    return any(next(s.lines(text), None) is not None for s in _catalogue().candidates(text))


def parse(text: str, file: str) -> Parsed:
    """The first line of each failure in the file (the earliest any of its patterns matches), and the
    message it matched; a comment line (a capture's header, a pasted note starting with '#') only quotes
    a message and is passed over."""
    out = Parsed(KIND, file)
    first: dict[str, tuple[int, str, int, Signature]] = {}
    claimed: set[tuple[object, int]] = set()  # (message, line) that the pattern of one of its branches matched
    for sig in sorted(_catalogue().candidates(text), key=lambda s: not s.variant):
        for lineno, line, column in sig.lines(text):
            if line.lstrip().startswith("#") or (sig.branched and (sig.family, lineno) in claimed):
                continue
            if sig.fact not in first or lineno < first[sig.fact][0]:
                first[sig.fact] = (lineno, line, column, sig)
            if not sig.variant:
                break
            claimed.add((sig.family, lineno))
    for name, (lineno, line, column, sig) in sorted(first.items(), key=lambda kv: kv[1][0]):
        out.data[name] = sig.message.locator if sig.message else True
        out.at(name, lineno, line if len(line) <= SHOWN else "..." + line[max(0, column - 80) :])
        if sig.specific and SPECIFIC_FAILURE not in out.data:
            out.data[SPECIFIC_FAILURE] = True
            out.at(SPECIFIC_FAILURE, lineno, line)
    return out


def facts(p: Parsed) -> list[Contribution]:
    """One fact per failure matched, with its line."""
    return [fact(name, True, p.evidence.get(name)) for name in p.data]


def _yields() -> tuple[str, ...]:
    return (*dict.fromkeys("fact:" + s.fact for s in _catalogue().signatures), "fact:" + SPECIFIC_FAILURE)


FAILURES = Reader(KIND, recognise, parse, facts, yields=_yields())
