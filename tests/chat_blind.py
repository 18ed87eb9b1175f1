"""The blind utterance sets (tests/data/utterances-blind-*/) run as whole dialogues through the chat, and
each customer turn graded against what the reviewer's listener understood (FORMAT.md beside each set):

- answer / correction: the chat takes the facts, asks nothing back, and the facts taken are the
  listener's (catalogue ids as names; token counts within 3 %);
- hypothetical: the chat tries the listener's facts and keeps none; compare: it compares the values
  named (as sets);
- evidence: it reads the paste as evidence and takes every fact the listener names;
- dont_know: it leaves the open question to its default (skipping it, or taking `unknown`);
- clarify: it asks back (a confirmation, a choice of variants, "did you mean");
- every other act: the same act, and nothing taken (requests may take the facts said with them).

`python -m tests.chat_blind DIR` prints the figure per act and every miss."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import Any

from advisor.chat.consult import FACT_OF_PATH, PATHS, Question
from advisor.chat.dialogue import ChatSession
from advisor.core.engine import Engine
from advisor.yamlio import load_file

DATA = Path(__file__).parent / "data"
TOKENS = ("context_tokens", "prompt_tokens", "output_tokens", "max_num_batched_tokens")
SAME_ACT = {"question": "concept", "why_ask": "why", "general": "concept", "out_of_scope_topic": "out_of_scope"}


def _names(engine: Engine, facts: dict[str, Any]) -> dict[str, Any]:
    kb, out = engine.kb, {}
    for key, value in (facts or {}).items():
        table = kb.gpus if key == "gpu" else kb.models if key == "model" else None
        if table is not None:
            value = (
                [table[v].name if v in table else v for v in value]
                if isinstance(value, list)
                else (table[value].name if value in table else value)
            )
        out[key] = value
    return out


def _same(key: str, got: Any, want: Any) -> bool:
    if isinstance(got, bool) or isinstance(want, bool):
        return got == want
    if isinstance(got, (int, float)) and isinstance(want, (int, float)):
        return abs(got - want) <= 0.03 * max(abs(got), abs(want)) if key in TOKENS else float(got) == float(want)
    return str(got).lower() == str(want).lower()


def _all_same(got: dict[str, Any], want: dict[str, Any]) -> bool:
    return set(got) == set(want) and all(_same(k, got[k], v) for k, v in want.items())


def grade(
    want_act: str,
    want: dict[str, Any],
    act: str,
    kind: str,
    taken: dict[str, Any],
    tried: dict[str, Any],
    asks_back: bool,
    compared: dict[str, list[str]],
) -> bool:
    """Whether the chat understood one turn as the listener did (see the module's doc)."""
    if want_act in ("answer", "correction"):
        return act in ("answer", "correction") and not asks_back and _all_same(taken, want)
    if want_act == "hypothetical":
        return kind == "what_if" and _all_same(tried, want)
    if want_act == "compare":
        lists = {k: v for k, v in want.items() if isinstance(v, list)}
        return act == "compare" and all(
            {str(x) for x in compared.get(k, [])} == set(map(str, v)) for k, v in lists.items()
        )
    if want_act == "evidence":
        named = {k: v for k, v in want.items() if not isinstance(v, list)}
        return act == "evidence" and all(k in taken and _same(k, taken[k], v) for k, v in named.items())
    if want_act == "dont_know":
        return act == "dont_know" or (act == "answer" and bool(taken) and all(v == "unknown" for v in taken.values()))
    if want_act == "clarify":
        return asks_back
    if want_act in ("request_buy", "request_command"):
        return act == want_act and all(k in want and _same(k, v, want[k]) for k, v in taken.items())
    return SAME_ACT.get(want_act, want_act) == SAME_ACT.get(act, act) and not taken


def _ask(session: ChatSession, engine: Engine, fact: str | None) -> None:
    """Open the question the reviewer's advisor had just asked (or none)."""
    if fact and fact in PATHS:
        spec = engine.kb.facts.get(fact)
        text = spec.question.get(session.lang) if spec is not None and spec.question else fact
        q = Question(fact, text, (), tuple(spec.choices) if spec is not None else ())
        session.question, session.c.asked = q, q
    elif not session.pending and not session.offered:
        session.question, session.c.asked = None, None


def run(engine: Engine, folder: Path) -> list[dict[str, Any]]:
    """Every turn of every set in `folder`, with what the chat made of it and whether that is right."""
    rows = []
    for path in sorted(folder.glob("set-*.yaml")):
        for dialogue in load_file(path)["dialogues"]:
            session = ChatSession(engine, "de" if dialogue["turns"][0].get("lang") == "de" else "en")
            session.opening()
            for number, turn in enumerate(dialogue["turns"]):
                _ask(session, engine, turn.get("asked"))
                reply = session.respond(turn["say"])
                facts = {FACT_OF_PATH.get(p, p): v for p, v in reply.understood.items()}
                taken = facts if reply.kind not in ("what_if", "compare") else {}
                tried = facts if reply.kind == "what_if" else {}
                got = session.turn.got
                compared = {FACT_OF_PATH.get(p, p): list(v) for p, v in (got.alternatives.items() if got else [])}
                asks_back = bool(session.pending or session.offered)
                want = _names(engine, {k: v for k, v in (turn.get("facts") or {}).items() if k != "range"})
                ok = grade(turn["act"], want, session.turn.act, reply.kind, taken, tried, asks_back, compared)
                rows.append(
                    {
                        "where": f"{path.stem}:{dialogue['id']}:{number}",
                        "say": turn["say"],
                        "want_act": turn["act"],
                        "want": want,
                        "act": session.turn.act,
                        "taken": taken,
                        "tried": tried,
                        "ok": ok,
                    }
                )
    return rows


def main() -> None:
    """Print the figure of each folder named (default: every blind set) and its misses."""
    engine = Engine.load()
    folders = [Path(a) for a in sys.argv[1:]] or sorted(DATA.glob("utterances-blind-*"))
    for folder in folders:
        rows = run(engine, folder)
        right = sum(r["ok"] for r in rows)
        print(f"{folder.name}: {right}/{len(rows)} ({100 * right / len(rows):.1f} %)")
        by, good = Counter(r["want_act"] for r in rows), Counter(r["want_act"] for r in rows if r["ok"])
        print("  " + ", ".join(f"{act} {good[act]}/{n}" for act, n in by.most_common()))
        for r in rows:
            if not r["ok"]:
                got = f"{r['act']} {r['taken'] or r['tried']}"
                print(f"  - {r['where']} {r['say'][:90]!r}: {got}, want {r['want_act']} {r['want']}")


if __name__ == "__main__":
    main()
