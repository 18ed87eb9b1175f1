"""The utterance corpus (tests/data/utterances/*.yaml) read as the chat reads each line: what the
customer typed becomes an intent and facts, through the same reading (advisor/chat/reading.py), the same
free-text reader (understand, with the open question) and the same knowledge questions the chat uses.
`python -m tests.utterances` prints the accuracy per set and every miss."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from advisor.chat import reading
from advisor.chat.consult import PATHS, planning
from advisor.chat.replies import knowledge_answer
from advisor.core.engine import Engine
from advisor.yamlio import load_file

CORPUS = Path(__file__).parent / "data" / "utterances"
FACT_OF = {path: fact for fact, path in PATHS.items()}


@dataclass(frozen=True)
class Reading:
    """What the chat made of one utterance."""

    intent: str
    facts: dict[str, Any]
    planning: bool
    ranged: tuple[int, ...] = ()


# The chat's acts in the corpus's words (the corpus was written before the acts were named).
INTENTS = {"hypothetical": "what_if", "dont_know": "skip", "concept": "question", "correction": "answer"}


def read(engine: Engine, said: str, asked: str | None = None, lang: str = "en") -> Reading:
    """One utterance as the chat reads it (advisor/chat/reading.py), with the question `asked` open."""
    turn = reading.read(said, engine.kb, asked)
    kind = INTENTS.get(turn.act, turn.act)
    got = turn.got
    if got is None or kind not in ("answer", "what_if", "question", "compare", "request_buy", "request_command"):
        return Reading(kind, {}, planning(said))
    facts = {FACT_OF.get(p, p): v for p, v in got.fields.items()}
    ranged = next(iter(got.ranged.values()), ())
    if kind == "answer" and got.invalid is not None:
        kind = "invalid"
    elif kind == "answer" and not facts and knowledge_answer(said, engine.kb, lang) is not None:
        kind = "question"
    if kind == "question":
        facts = {}
    return Reading(kind, facts, planning(said), tuple(ranged))


def expected_facts(engine: Engine, yields: dict[str, Any]) -> dict[str, Any]:
    """The corpus's facts with catalogue ids turned into the names the reader sets."""
    out = dict(yields)
    if "model" in out:
        out["model"] = engine.kb.find_model(str(out["model"])).name
    if "gpu" in out:
        out["gpu"] = engine.kb.find_gpu(str(out["gpu"])).name
    return out


def misses(engine: Engine, name: str) -> tuple[int, list[str]]:
    """The number of utterances in set `name` and a line for each one read wrongly."""
    entries = load_file(CORPUS / f"{name}.yaml")["utterances"]
    wrong = []
    for e in entries:
        lang = "de" if e.get("lang") == "de" else "en"
        got = read(engine, e["say"], e.get("asked"), lang)
        want = Reading(
            e.get("intent", "answer"),
            expected_facts(engine, e.get("yields") or {}),
            bool(e.get("planning", False)),
            tuple(e.get("ranged") or ()),
        )
        if got.ranged and not want.ranged:
            got = Reading(got.intent, got.facts, got.planning)
        if got != want:
            wrong.append(f"{e['say']!r}: got {got}, want {want}")
    return len(entries), wrong


def main() -> None:
    """Print each set's accuracy and its misses."""
    engine = Engine.load()
    names = sys.argv[1:] or sorted(p.stem for p in CORPUS.glob("*.yaml"))
    total = right = 0
    for name in names:
        count, wrong = misses(engine, name)
        total, right = total + count, right + count - len(wrong)
        print(f"{name}: {count - len(wrong)}/{count} ({100 * (count - len(wrong)) / count:.1f} %)")
        for line in wrong:
            print("  -", line)
    print(f"all: {right}/{total} ({100 * right / total:.1f} %)")


if __name__ == "__main__":
    main()
