"""A pre-sales engineer's call, as typed into the chat: the customer's own words for the choices
offered, numbers inside sentences, what-ifs on the GPU count, a context range, the questions that
decide the answer (precision), and quitting only on purpose. English and German, headless (the same
ChatSession runs the app and `advisor chat --plain`)."""

from __future__ import annotations

import io

import pytest

from advisor.chat.dialogue import ChatSession
from advisor.chat.plain import run as plain_run
from tests.tui.conftest import drive, say

L40S = {
    "en": ["Llama 3.3 70B", "four L40S", "around 100 chat users, and fp8", "the KV cache is FP8 too"],
    "de": ["Llama 3.3 70B", "vier L40S", "rund 100 Chat-Nutzer, und fp8", "der KV-Cache ist auch FP8"],
}
SKIP = {"en": "skip", "de": "weiter"}


def session_at(engine, lang: str, fact: str) -> ChatSession:
    """The L40S call in `lang`, with every question before the one about `fact` skipped."""
    session = ChatSession(engine, lang)
    session.opening()
    for text in L40S[lang]:
        session.respond(text)
    for _ in range(12):
        if session.question is None or session.question.fact == fact:
            break
        session.respond(SKIP[lang])
    assert session.question is not None and session.question.fact == fact
    return session


@pytest.mark.parametrize("lang", ["en", "de"])
def test_numbers_inside_a_sentence_and_the_kv_cache_type(engine, lang):
    session = ChatSession(engine, lang)
    session.opening()
    for text in L40S[lang][:3]:
        said = session.respond(text)
    assert said.understood == {"workload.concurrent_conversations": 100, "precision": "fp8"}
    kv = session.respond(L40S[lang][3])
    assert kv.understood == {"kv_cache_dtype": "fp8"}
    assert session.c.fields["precision"] == "fp8"


@pytest.mark.parametrize(
    ("lang", "said", "change"),
    [
        ("en", "what if the weights are FP8", {"precision": "fp8"}),
        ("de", "was wäre, wenn die Gewichte FP8 sind?", {"precision": "fp8"}),
        ("en", "what if 4 GPUs", {"hardware.gpus_per_node": 4}),
        ("en", "what if 8 cards?", {"hardware.gpus_per_node": 8}),
        ("de", "was wäre wenn 8 Karten", {"hardware.gpus_per_node": 8}),
    ],
)
def test_what_ifs_are_understood_and_not_kept(engine, lang, said, change):
    session = ChatSession(engine, lang)
    session.opening()
    for text in ("Llama 3.3 70B", "two L40S", "60 users"):
        session.respond(text)
    before = dict(session.c.fields)
    reply = session.respond(said)
    assert reply.kind == "what_if" and reply.understood == change
    assert session.c.fields == before


@pytest.mark.parametrize(
    ("lang", "noted"),
    [
        ("en", "I plan for the largest, 32,768"),
        ("de", "Ich plane mit dem größten, 32.768"),
    ],
)
def test_a_context_range_is_planned_for_its_peak(engine, lang, noted):
    session = session_at(engine, lang, "context_tokens")
    said = {"en": "mostly 4k, sometimes 32k", "de": "meist 4k, manchmal 32k"}[lang]
    reply = session.respond(said)
    assert reply.understood == {"workload.context_tokens": 32768}
    assert noted in reply.text


@pytest.mark.parametrize(
    ("lang", "fact", "said", "value"),
    [
        ("en", "p2p", "ok", "ok"),
        ("en", "p2p", "broken", "broken"),
        ("en", "iommu", "off", "off"),
        ("en", "iommu", "passthrough", "passthrough"),
        ("en", "acs", "disabled", "disabled"),
        ("en", "acs", "enabled", "enabled"),
        ("de", "p2p", "funktioniert", "ok"),
        ("de", "p2p", "unbekannt", "unknown"),
        ("de", "iommu", "aus", "off"),
        ("de", "iommu", "an", "translated"),
        ("de", "iommu", "unbekannt", "unknown"),
        ("de", "acs", "deaktiviert", "disabled"),
        ("de", "acs", "aktiviert", "enabled"),
        ("de", "acs", "aus", "disabled"),
        ("de", "acs", "an", "enabled"),
    ],
)
def test_the_offered_choices_are_accepted(engine, lang, fact, said, value):
    session = session_at(engine, lang, fact)
    reply = session.respond(said)
    path = {"p2p": "hardware.p2p", "iommu": "hardware.iommu", "acs": "hardware.acs"}[fact]
    assert reply.understood == {path: value}
    assert session.c.fields[path] == value
    assert "⚠" not in reply.text


def test_dont_know_leaves_the_question_to_its_default_in_german(engine):
    session = session_at(engine, "de", "iommu")
    reply = session.respond("weiß ich nicht")
    assert reply.text.startswith("Übersprungen: IOMMU bleibt beim Standardwert.")
    assert "hardware.iommu" not in session.c.fields


def test_the_questions_are_asked_with_their_choices_in_german(engine):
    session = session_at(engine, "de", "iommu")
    shown = session.respond("warum").text
    assert "Auswahl: `aus`, `Passthrough`, `übersetzt`" in shown
    assert "`off`" not in shown


@pytest.mark.parametrize(
    ("lang", "said", "error"),
    [
        ("en", "maybe", "⚠ “maybe” is not one of the choices for the IOMMU: `off`, `passthrough`, `translated`."),
        ("de", "vielleicht", "⚠ „vielleicht“ gehört nicht zur Auswahl für IOMMU: `aus`, `Passthrough`, `übersetzt`."),
    ],
)
def test_a_word_that_is_no_choice_is_said_in_the_sessions_language(engine, lang, said, error):
    session = session_at(engine, lang, "iommu")
    reply = session.respond(said)
    assert error in reply.text
    assert "is not one of" not in reply.text or lang == "en"
    assert "chat:" not in reply.text and "hardware.iommu" not in reply.text
    assert "hardware.iommu" not in session.c.fields and reply.question.fact == "iommu"


@pytest.mark.parametrize(
    ("lang", "said"),
    [
        ("en", "each user's speed matters most, it's interactive"),
        ("de", "jeder einzelne Nutzer soll schnell sein"),
    ],
)
def test_a_goal_in_the_customers_words(engine, lang, said):
    session = ChatSession(engine, lang)
    session.opening()
    for text in ("Llama 3.3 70B", "four L40S"):
        session.respond(text)
    reply = session.respond(said)
    assert reply.understood == {"workload.goal": "latency"}
    assert "⚠" not in reply.text


@pytest.mark.parametrize(("lang", "users"), [("en", "60 chat users"), ("de", "60 Chat-Nutzer")])
def test_precision_is_asked_when_it_decides_the_fit_and_serving_is_not(engine, lang, users):
    """Llama 70B on four RTX 4090: no layout holds it in BF16, FP8 weights fit; 60 chat users are served."""
    session = ChatSession(engine, lang)
    session.opening()
    session.respond("Llama 3.3 70B")
    first = session.respond({"en": "four RTX 4090", "de": "vier RTX 4090"}[lang])
    assert first.rec is not None and first.rec.layout is None
    assert first.question is not None and first.question.fact == "precision"
    second = session.respond(users)
    assert second.understood["workload.concurrent_conversations"] == 60
    asked = [second.question.fact] if second.question else []
    for _ in range(12):
        if session.question is None:
            break
        skipped = session.respond(SKIP[lang])
        if skipped.question is not None:
            asked.append(skipped.question.fact)
    assert "workload_kind" not in asked
    fp8 = session.respond({"en": "what if the weights are fp8", "de": "was wäre, wenn die Gewichte fp8 sind"}[lang])
    assert fp8.kind == "what_if" and "PP 4" in fp8.text


def test_a_message_starting_with_q_is_a_message_in_the_app(build):
    app = build()

    async def script(pilot):
        reply = await say(pilot, "qwen3 235b on 4 h200nvl", typed=True)
        assert app.is_running
        assert app.chat.session.c.fields["model"].startswith("Qwen3-235B")
        assert reply.understood["hardware.gpus_per_node"] == 4
        await say(pilot, "quit")
        await pilot.pause()
        assert app.is_running and type(app.screen).__name__ == "QuitScreen"  # a consultation is open: asks
        await pilot.press("y")
        await pilot.pause()
        assert not app.is_running

    drive(app, script)


@pytest.mark.parametrize("answer", ["n", "y"])
def test_q_sent_alone_asks_before_it_ends_an_open_consultation(build, answer):
    app = build()

    async def script(pilot):
        await say(pilot, "llama 3.3 70b on two rtx pro 6000", typed=True)
        await say(pilot, "q")
        await pilot.pause()
        assert type(app.screen).__name__ == "QuitScreen"
        await pilot.press(answer)
        await pilot.pause()
        assert app.is_running is (answer == "n")
        if answer == "n":
            assert app.chat.session.c.fields["model"].startswith("Llama 3.3 70B")  # the consultation goes on

    drive(app, script)


@pytest.mark.parametrize("line", ["/quit", "exit", "beenden", "q"])
def test_quit_typed_alone_ends_the_app(build, line):
    app = build(lang="de" if line == "beenden" else "en")

    async def script(pilot):
        await say(pilot, line)
        await pilot.pause()
        assert not app.is_running

    drive(app, script)


def test_ctrl_q_quits(build):
    app = build()

    async def script(pilot):
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert not app.is_running

    drive(app, script)


def test_plain_chat_reads_q_messages_and_quits_on_q(engine, tmp_path):
    out = io.StringIO()
    plain_run(engine, "en", tmp_path, stdin=io.StringIO("qwen3 235b on 4 h200nvl\nq\n4 users\n"), stdout=out)
    text = out.getvalue()
    assert "model = Qwen3-235B-A22B" in text
    assert "users = 4" not in text  # nothing after "quit" is read
