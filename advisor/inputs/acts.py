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
LONG_QUESTION = 6  # words: a question this long that names values asks about them ("8 H100s?" answers)
SAID = 2000  # characters: the cues of an act are read in a line's first 2,000 (a pasted page is no utterance)
COMMITTING = ("answer", "correction")


@dataclass(frozen=True)
class ActRow:
    """One act of the table: its cues per language, its weak cues, and what it needs of the facts."""

    kind: str
    cues: tuple[re.Pattern[str], ...]
    weak: tuple[re.Pattern[str], ...] = ()
    alone: bool = False
    needs_facts: bool = False
    no_facts_unless_asked: bool = False
    beats_asked: bool = False
    needs_no_facts: bool = False
    unless_named: bool = False


@dataclass(frozen=True)
class Act:
    """The act of one utterance, and the text after its cue (what a why-not or a what-if is about)."""

    kind: str
    rest: str = ""
    asked: bool = False  # a question naming values, or a weak cue's: tried, unless the knowledge base answers it

    @property
    def commits(self) -> bool:
        return self.kind in COMMITTING


@cache
def document() -> dict[str, Any]:
    """knowledge/dialogue.yaml as read."""
    from advisor.yamlio import load_file_cached

    return dict(load_file_cached(knowledge_dir() / FILE))


@cache
def table() -> tuple[tuple[ActRow, ...], dict[str, Any]]:
    """The acts in the order they are tried, and the language markers."""
    data = document()
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
                bool(raw.get("no_facts_unless_asked")),
                bool(raw.get("beats_asked")),
                bool(raw.get("needs_no_facts")),
                bool(raw.get("unless_named")),
            )
        )
    return tuple(rows), dict(data["language"])


def classify(text: str, facts: bool, alternatives: bool = False, asked_only: bool = False, named: bool = False) -> Act:
    """The act of `text`; `facts`: whether it names a value of any fact; `alternatives`: whether it names
    two values of one fact ("fp8 or bf16"); `asked_only`: whether its only value, unhedged, is the open
    question's; `named`: whether it names a model or card of the catalogue."""
    said = fold(" ".join(text[:SAID].lower().split()))
    rows, _ = table()
    asking = said.endswith("?")
    for row in rows:
        if not _allowed(row, facts, alternatives, asked_only, "?" in said) or (row.unless_named and named):
            continue
        found = _cue(row, _last_sentence(said) if row.kind == "question" else said, asking)
        if found is None:
            continue
        m, weak = found
        if row.kind == "question" and facts:
            return Act("hypothetical", said, asked=True)  # "is 8k enough for them?": tried, not taken
        rest = "" if row.kind == "question" else said[m.end() :].strip(" \t:,?!.")
        return Act(row.kind, rest, asked=weak)
    if asking and not facts:
        return Act("question", said)  # a question nothing else reads: answered, never taken as a value
    if asking and len(_last_sentence(said).split()) >= LONG_QUESTION:
        return Act("hypothetical", said, asked=True)  # "... ob vLLM Telemetrie schickt?": asked, not said
    return Act("answer", said)


def _last_sentence(said: str) -> str:
    """The line's last sentence: 'keine ahnung, ist ein PoC. 5?' asks nothing but '5?'."""
    parts = re.split(r"(?<=[.!;?])\s{1,3}", said.rstrip(" ?"))
    parts[-1] += "?" if said.rstrip().endswith("?") else ""
    return parts[-1] if parts else said


def _allowed(row: ActRow, facts: bool, alternatives: bool, asked_only: bool, asking_anywhere: bool) -> bool:
    """Whether the act can be the line's, given the values it names."""
    if row.needs_facts and not (alternatives if row.kind == "compare" else facts):
        return False
    if (row.alone or row.needs_no_facts) and facts:
        return False
    if row.no_facts_unless_asked and facts and not asking_anywhere:
        return False
    return not (row.beats_asked and facts and not asked_only)


def _cue(row: ActRow, said: str, asking: bool) -> tuple[re.Match[str], bool] | None:
    """The act's cue in the line, and whether it is a weak one."""
    for p in row.cues:
        m = p.search(said)
        if m:
            return m, False
    if row.weak and asking:
        for p in row.weak:
            m = p.search(said)
            if m:
                return m, True
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
