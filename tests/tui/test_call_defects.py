"""Defects from the issue's call notes not pinned elsewhere: `chat --plain` echoes what it noted,
answers why-not and keeps what-ifs hypothetical, and writes assumptions in words; a why-not never
shows negative memory; the German GPU drawing writes decimal commas; a count of one is singular."""

from __future__ import annotations

import io
import re

from advisor.chat.dialogue import ChatSession
from advisor.chat.plain import run as plain_run
from advisor.tui.drawing import draw


def plain_call(engine, lang: str, typed: str, tmp_path) -> str:
    """What `advisor chat --plain` prints for these lines."""
    out = io.StringIO()
    plain_run(engine, lang, transcripts=tmp_path, stdin=io.StringIO(typed), stdout=out)
    return out.getvalue()


def test_plain_chat_echoes_answers_why_not_and_keeps_what_ifs_hypothetical(engine, tmp_path):
    text = plain_call(
        engine,
        "en",
        "Llama 3.1 70B on 4 RTX 4090\n60 chat users\nwhy not TP 4\nwhat if the weights are FP8\nskip\n",
        tmp_path,
    )
    assert "Noted: users = 60" in text
    assert "Why not TP 4" in text
    assert "PP 4" in text  # the what-if's answer
    ours = "\n".join(line for line in text.splitlines() if not re.match(r"\[\d+\]", line))  # less the sources
    assert not re.search(r"\b[a-z_]+=(False|True)\b", ours)


def test_a_what_if_in_plain_chat_is_not_kept(engine):
    session = ChatSession(engine, "en")
    session.opening()
    for line in ("Llama 3.1 70B on 4 RTX 4090", "60 chat users"):
        session.respond(line)
    reply = session.respond("what if the weights are FP8")
    assert reply.kind == "what_if" and "precision" not in session.c.fields
    assert session.c.rec is not None and session.c.rec.layout is None  # still BF16: nothing fits


def test_why_not_never_shows_negative_memory(engine):
    session = ChatSession(engine, "en")
    session.opening()
    for line in ("Llama 3.1 70B on 4 RTX 4090", "60 chat users"):
        session.respond(line)
    for layout in ("TP 4", "PP 4", "4 replicas"):
        text = session.respond(f"why not {layout}").text
        assert not re.search(r"-\d[\d.,]* GiB", text), text


def test_the_german_drawing_writes_decimal_commas_and_singular_counts(engine):
    session = ChatSession(engine, "de")
    session.opening()
    for line in ("zwei RTX PRO 6000", "Llama 3.3 70B FP8, KV-Cache FP8", "1 Nutzer"):
        session.respond(line)
    drawn = draw(session.c.rec, "de").plain
    assert re.search(r"\d,\d GiB", drawn) and not re.search(r"\d\.\d GiB", drawn)
    said = "\n".join(session.respond(w).text for w in ("warum", "wie"))
    assert "1 Gespräche" not in said and "1 GPUs" not in said
