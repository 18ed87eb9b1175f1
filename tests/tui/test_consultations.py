"""Whole consultations in the chat app, driven by Pilot: the customer's words in, a recommendation
out, and no question asked whose answer could not change it."""

from __future__ import annotations

from typing import Any

import pytest

from advisor.chat.consult import PATHS, REQUIRED, Consultation
from advisor.chat.dialogue import ChatSession, outcome
from advisor.chat.replies import choice_text
from advisor.chat.strings import fact_label
from advisor.core.layouts import Layout
from advisor.errors import AdvisorError
from advisor.render.common import headline
from advisor.tui.drawing import draw, placement
from advisor.tui.fact_panel import FactsTable
from tests.tui.conftest import advisor_said, consult, drive, say

RTX_70B = ["two RTX PRO 6000", "Llama 3.3 70B FP8 with FP8 KV cache"]
SCENARIOS: dict[str, tuple[list[str], Layout]] = {
    "rtx-pro-20-users": ([*RTX_70B, "20 users"], Layout(2, 1, 1)),
    "rtx-pro-60-users": ([*RTX_70B, "60 users"], Layout(1, 2, 1)),
    "h200-nvl-405b": (["8x H200 NVL with 4-way bridges", "Llama 3.1 405B BF16"], Layout(1, 4, 2)),
}
# Values tried for a fact to see whether its answer can change the outcome: wider than the probes
# Consultation itself uses, so the check does not simply repeat its own reasoning.
TRIALS: dict[str, tuple[Any, ...]] = {
    "users": (1, 4, 16, 32, 64, 128, 512, 2048),
    "context_tokens": (1024, 4096, 16384, 65536, 131072),
    "gpus_per_node": (1, 2, 4, 8),
    "nodes": (1, 2, 4),
    "virtualized": (True, False),
    "gpus_per_socket": (1, 2, 4),
    "max_num_seqs": (64, 256, 1024),
    "max_num_batched_tokens": (2048, 8192, 16384),
}


def moved(base: Any, trial: Any) -> bool:
    """Whether a user sees another result: the layout or the warnings, or the conversations that fit or
    an estimated speed by a tenth or more."""
    if outcome(trial) != outcome(base):
        return True
    for key in ("conversations", "one_user_tokens_per_s", "throughput_tokens_per_s"):
        a, b = base.figures.get(key), trial.figures.get(key)
        if a and b is not None and abs(b - a) / abs(a) >= 0.1:
            return True
    return False


def assert_every_question_mattered(engine: Any, session: ChatSession) -> None:
    """For each question the app asked: the model and GPU are needed for any answer at all; any other
    fact was the input of a rule that could not decide without it, or some answer to it changes the
    layout, the warnings, the conversations or the estimated speed (checked with Consultation on the
    facts known when it was asked)."""
    assert session.asked, "no question was asked"
    for asked in session.asked:
        fact = asked.question.fact
        path = PATHS[fact]
        assert path not in asked.fields, f"{fact} was asked although it was known"
        if fact in REQUIRED and not {"model", "hardware.gpu"} <= set(asked.fields):
            continue
        c = Consultation(engine, "en")
        base = c.evaluate(asked.fields)
        undecided = {rule for u in base.unknowns if u.fact == fact for rule in u.rules}
        if undecided and set(asked.question.rules) <= undecided:
            continue
        spec = engine.kb.facts[fact]
        values = TRIALS.get(fact) or tuple(choice_text(v) for v in spec.choices)
        changed = []
        for value in values:
            try:
                trial = c.evaluate({**asked.fields, path: value})
            except AdvisorError:
                continue
            if moved(base, trial):
                changed.append(value)
        assert changed, f"asked for {fact} with {asked.fields}, but no answer changes the recommendation"


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_consultation_reaches_the_recommendation(build, engine, name):
    answers, layout = SCENARIOS[name]
    app = build()

    async def script(pilot):
        session = await consult(pilot, answers)
        assert session.c.rec.layout == layout
        said = advisor_said(app)
        assert "Settled" in said[-1]
        # what could still change the answer is named, or that nothing could
        still = session.c.still_open()
        for fact, _, _ in still:
            assert f"- assumed: {fact_label(fact, 'en')} " in said[-1]
        assert ("None of the assumed values could change the answer." in said[-1]) == (not still)
        assert any(f"**Recommendation: {headline(session.c.rec)}**" in s for s in said)
        # the side panel shows what the user gave and what was assumed
        origins = {row.fact: row.origin for row in app.chat.query_one(FactsTable).rows_shown}
        assert origins["model"] == "you" and origins["gpu"] == "you" and "assumed" in origins.values()
        # the drawing groups the GPUs as the layout uses them
        places = placement(session.c.rec)
        assert len({p["copy"] for p in places if p["copy"] >= 0}) == layout.replicas
        assert max(p["stage"] for p in places) + 1 == layout.pp
        if name == "h200-nvl-405b":
            text = draw(session.c.rec, "en").plain
            assert "NVLink ⟦0 1 2 3⟧ ⟦4 5 6 7⟧" in text
            assert "copy 1: stage 1 TP[0 1 2 3] → stage 2 TP[4 5 6 7]" in text
            assert "Memory per GPU (140.4 GiB)" in text and "weights 94.3" in text and "stage 2 · TP 3" in text
        assert_every_question_mattered(engine, session)

    drive(app, script)


def test_moe_model_on_pcie_cards(build, advise, engine):
    app = build()

    async def script(pilot):
        session = await consult(pilot, ["4 RTX PRO 6000", "Qwen3-235B-A22B FP8"])
        rec = session.c.rec
        assert engine.kb.find_model(rec.input["model"]).kind == "moe"
        expected = advise(
            {"model": "Qwen3-235B-A22B", "precision": "fp8", "hardware": {"gpu": "RTX PRO 6000", "gpus_per_node": 4}}
        )
        assert rec.layout == expected.layout and rec.layout.gpus == 4
        assert rec.machine.nvlink == "none"
        assert_every_question_mattered(engine, session)

    drive(app, script)


def test_german_session_typed_key_by_key(build, engine):
    app = build(lang="de")

    async def script(pilot):
        assert app.title == "GPU-Aufteilungsberater"
        await say(pilot, "zwei RTX Pro 6000")
        first = await say(pilot, "Llama 3.3 70B FP8, KV-Cache FP8")
        # no user count yet: at full load PP 2 carries about as much as TP 2 (within 10 %) with one PCIe hand-off
        # per stage instead of per layer
        assert "Empfehlung: PP 2" in first.text
        reply = await say(pilot, "60 Nutzer")
        assert reply.rec.layout == Layout(1, 2, 1)
        assert "Notiert: Nutzer = **60**" in reply.text
        why = await say(pilot, "warum", typed=True)
        assert why.text.startswith("**Warum ich nach Kontext (Token) frage**")
        assert "Was jede Antwort ergäbe" in why.text
        how = await say(pilot, "wie")
        assert how.text.startswith("**Wie die Zahlen zustande kommen**")
        assert "kv_gib_per_conversation = kv_bytes_per_token × context_tokens / 2^30" in how.text
        assert "1,25 GiB" in how.text  # German number format
        while app.chat.last.question is not None:
            await say(pilot, "weiter")
        last = advisor_said(app)[-1]
        assert "Entschieden" in last
        assert "Angenommen, und könnte die Antwort noch ändern:" in last or "Keiner der angenommenen Werte" in last
        assert_every_question_mattered(engine, app.chat.session)

    drive(app, script)
