"""What an utterance does (knowledge/dialogue.yaml): answer, correct, suppose, compare, ask why, how
or why not, ask about a concept, request the command, a purchase or a saved transcript, not know,
stray out of scope, or chat. The cues are read wherever they stand in the line; the facts the line
names (read by advisor/inputs/freetext.py) decide the acts that need them or exclude them.

Only `answer` and `correction` change facts; every other act leaves them as they are.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Any

from advisor.inputs.letters import fold
from advisor.kb.paths import knowledge_dir

FILE = "dialogue.yaml"
SAID = 2000  # characters: the cues of an act are read in a line's first 2,000 (a pasted page is no utterance)
COMMITTING = ("answer", "correction")
REQUESTS = ("request_save", "request_command", "request_buy")


@dataclass(frozen=True)
class ActRow:
    """One act of the table: its cues per language, its weak cues, and what it needs of the facts."""

    kind: str
    cues: tuple[re.Pattern[str], ...]
    weak: tuple[re.Pattern[str], ...] = ()
    alone: bool = False
    needs_facts: bool = False
    no_facts: bool = False


@dataclass(frozen=True)
class Act:
    """The act of one utterance, and the text after its cue (what a why-not or a what-if is about)."""

    kind: str
    rest: str = ""

    @property
    def commits(self) -> bool:
        return self.kind in COMMITTING


@cache
def table() -> tuple[tuple[ActRow, ...], dict[str, Any]]:
    """The acts in the order they are tried, and the language markers."""
    from advisor.yamlio import load_file_cached

    data = load_file_cached(knowledge_dir() / FILE)
    rows = []
    for kind in data["order"]:
        raw = data["acts"][kind]
        rows.append(
            ActRow(
                kind,
                tuple(re.compile(fold(p), re.I) for p in (raw.get("cues") or {}).values()),
                tuple(re.compile(fold(p), re.I) for p in (raw.get("weak") or {}).values()),
                bool(raw.get("alone")),
                bool(raw.get("needs_facts")),
                bool(raw.get("no_facts")),
            )
        )
    return tuple(rows), dict(data["language"])


def is_question(text: str) -> bool:
    """Whether the line asks: it ends in a question mark, or an interrogative opens it."""
    rows, _ = table()
    if text.rstrip().endswith("?"):
        return True
    question = next(r for r in rows if r.kind == "question")
    return any(p.search(text + "?") for p in question.cues)


def classify(text: str, facts: bool, alternatives: bool = False) -> Act:
    """The act of `text`; `facts`: whether it names a value of any fact; `alternatives`: whether it names
    two values of one fact ("fp8 or bf16")."""
    said = fold(" ".join(text[:SAID].lower().split()))
    rows, _ = table()
    asking = said.endswith("?")
    for row in rows:
        if row.needs_facts and not (alternatives if row.kind == "compare" else facts):
            continue
        if (row.no_facts or row.alone) and facts:
            continue
        m = _cue(row, said, asking)
        if m is None:
            continue
        if row.kind == "question" and facts:
            return Act("hypothetical", said)  # "is 8k enough for them?": tried, not taken
        return Act(row.kind, said[m.end() :].strip(" \t:,?!."))
    return Act("answer", said)


def _cue(row: ActRow, said: str, asking: bool) -> re.Match[str] | None:
    for p in row.cues:
        m = p.search(said)
        if m:
            return m
    if row.weak and (asking or is_question(said)):
        for p in row.weak:
            m = p.search(said)
            if m:
                return m
    return None


@cache
def _markers() -> dict[str, frozenset[str]]:
    return {code: frozenset(fold(w) for w in words) for code, words in table()[1]["markers"].items()}


def language(text: str, current: str) -> str:
    """The language the line is written in where it says so clearly, else `current`."""
    _, lang = table()
    words = re.findall(r"[a-z]+", fold(text.lower()))
    counts = {code: sum(1 for w in words if w in markers) for code, markers in _markers().items()}
    if re.search(r"[äöüß]", text.lower()):
        counts["de"] = counts.get("de", 0) + 1
    best = max(counts, key=lambda code: counts[code])
    if best == current:
        return current
    if counts[best] >= int(lang["least"]) and counts[best] - counts.get(current, 0) >= int(lang["margin"]):
        return best
    return current
