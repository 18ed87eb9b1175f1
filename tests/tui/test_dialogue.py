"""The conversation behind the app, without a screen: the variants of why, why not, what if, bad
values and commands, in English and German. (The Pilot tests drive the same turns through the app.)"""

from __future__ import annotations

import pytest

from advisor.chat.dialogue import ChatSession, parse_intent, read_layout
from advisor.core.layouts import Layout

RTX_60 = ["two RTX PRO 6000", "Llama 3.3 70B FP8 with FP8 KV cache", "60 users"]


@pytest.fixture()
def rtx60(engine) -> ChatSession:
    session = ChatSession(engine, "en")
    session.opening()
    for text in RTX_60:
        session.respond(text)
    return session


@pytest.mark.parametrize(
    ("text", "kind", "rest"),
    [
        ("why?", "why", ""),
        ("Warum", "why", ""),
        ("how", "how", ""),
        ("wie?", "how", ""),
        ("why not TP=4?", "why_not", "tp=4"),
        ("warum nicht Replikate?", "why_not", "replikate"),
        ("what if 120 users?", "hypothetical", "120 users"),
        ("was wäre wenn 120 Nutzer", "hypothetical", "wenn 120 nutzer"),
        ("hm. and if we capped it at 32k?", "hypothetical", "we capped it at 32k"),
        ("/lang de", "command", "/lang de"),
        ("wie viele GPUs", "answer", "wie viele GPUs"),
    ],
)
def test_intents(engine, text, kind, rest):
    assert parse_intent(text, engine.kb) == (kind, rest)


@pytest.mark.parametrize(
    ("text", "layout"),
    [
        ("TP=4", Layout(2, 4, 1)),
        ("tp 2 pp 2", Layout(2, 2, 2)),
        ("replicas=2,tp=2", Layout(2, 2, 1)),
        ("replicas", Layout(8, 1, 1)),
        ("Replikate", Layout(8, 1, 1)),
        ("one card", Layout(1, 1, 1)),
        ("PP", Layout(1, 1, 8)),
        ("TP", Layout(1, 8, 1)),
        ("something", None),
    ],
)
def test_layouts_named_in_why_not(text, layout):
    assert read_layout(text, total=8, per_node=8) == layout


def test_why_not_variants(rtx60):
    assert "TP 4 needs 4 GPUs; this machine has 2." in rtx60.respond("why not TP=4?").text
    pp = rtx60.respond("why not PP 2").text
    assert pp.startswith("**Why not PP 2?**") and "less throughput: about" in pp and "nothing gained" not in pp
    assert "TP 2 is the recommendation." in rtx60.respond("why not tp=2").text
    assert "I could not read a layout in “something else”" in rtx60.respond("why not something else").text


def test_what_if_variants(rtx60):
    assert "| Layout | TP 2 | 2 × 1 GPU |" in rtx60.respond("what if 20 users").text
    assert "I could not read a change in “the moon”" in rtx60.respond("what if the moon").text
    failed = rtx60.respond("what if 0 users").text  # the engine's reason, not a "?"
    assert (
        failed == "With that change the advisor cannot answer: chat: workload.concurrent_conversations: "
        "the number must be at least 1, not 0"
    )
    assert rtx60.c.fields["workload.concurrent_conversations"] == 60


def test_why_at_a_rule_question_and_once_settled(rtx60):
    rtx60.respond("skip")
    assert rtx60.question.fact == "p2p"
    why = rtx60.respond("why").text
    assert "`tp-over-pcie-p2p-broken`" in why and "| peer-to-peer = broken | PP 2 · conversations " in why
    while rtx60.question is not None:
        rtx60.respond("skip")
    why = rtx60.respond("why").text
    assert why.startswith("**Why TP 2**") and "`split-for-capacity`" in why
    assert "| 2 × 1 GPU | 28 | holds 28 conversations, 32 fewer than the 60 users |" in why


def test_bad_values_and_commands(rtx60):
    assert "`many` is not a valid users: a whole number" in rtx60.respond("/set users many").text
    assert "Unknown fact `colour`" in rtx60.respond("/set colour blue").text
    assert "Unknown command `/frobnicate`" in rtx60.respond("/frobnicate").text
    assert "Usage: `/lang de` or `/lang en`" in rtx60.respond("/lang fr").text
    assert "none | bridge-2 | bridge-4 | nvswitch" in rtx60.respond("/set nvlink bridge-3").text
    assert "hardware.nvlink" not in rtx60.c.fields and rtx60.c.rec.layout == Layout(1, 2, 1)
    assert rtx60.respond("/set context 32k").text.startswith("Unknown fact")
    changed = rtx60.respond("/set context_tokens 32k")
    assert changed.text.startswith("Changed context (tokens): 8,192 → 32,768.")
    assert "users-exceed-capacity" in changed.text
    assert rtx60.respond("/report").report.startswith("# Recommendation: TP 2")


def test_german_explanations_before_and_after_the_recommendation(engine):
    session = ChatSession(engine, "de")
    session.opening()
    assert "Ohne Modell gibt es überhaupt keine Empfehlung" in session.respond("warum").text
    assert "Noch keine Empfehlung" in session.respond("wie").text
    for text in ("zwei RTX Pro 6000", "Llama 3.3 70B FP8 mit FP8-KV-Cache", "60 Nutzer"):
        session.respond(text)
    why_not = session.respond("warum nicht Replikate?").text
    assert why_not.startswith("**Warum nicht 2 × 1 GPU?**")
    assert "Was dagegen spricht" in why_not and "users-exceed-capacity" in why_not
    assert session.respond("was wäre wenn 120 Nutzer").text.startswith("**Was wäre, wenn Nutzer = 120?**")
    assert session.respond("/lang en").text.startswith("Language: English.")
    assert session.c.rec.lang == "en" and session.question.text.startswith("How long")
