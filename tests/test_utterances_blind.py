"""The blind utterance sets, kept as regression sets once measured (tests/data/utterances-blind-*/,
PROVENANCE.md in each): whole customer calls run through the chat and graded turn by turn against what
the reviewers' listener understood (tests/chat_blind.py). Each set must stay at or above the share it
reached after its misses were fixed; `python -m tests.chat_blind` lists every miss."""

from __future__ import annotations

import pytest

from tests.chat_blind import DATA, run

FLOORS = {
    "utterances-blind-1": 0.88,
    "utterances-blind-2": 0.84,
    "utterances-blind-3": 0.75,
    "utterances-blind-4": 0.85,
    "utterances-blind-5": 0.72,
    "utterances-blind-6": 0.62,
}


@pytest.mark.parametrize("name", sorted(FLOORS))
def test_the_blind_set_is_still_understood(engine, name):
    rows = run(engine, DATA / name)
    right = sum(r["ok"] for r in rows)
    assert len(rows) >= 200  # whole calls: every set holds 200 turns or more
    misses = [
        f"{r['where']} {r['say'][:80]!r}: {r['act']}, want {r['want_act']} {r['want']}" for r in rows if not r["ok"]
    ]
    assert right / len(rows) >= FLOORS[name], "\n".join(misses)
