"""Questions a customer asks during a call ("do we need NVLink?", "Brauche ich NVLink?", "what is an
all-reduce?") are answered from the knowledge base, with its sources, in the session's language."""

from __future__ import annotations

import shutil

import pytest

from advisor.chat.dialogue import ChatSession
from advisor.kb.knowledge import load
from advisor.kb.paths import knowledge_dir
from advisor.rules_check import check


def _session(engine, lang: str) -> ChatSession:
    session = ChatSession(engine, lang)
    session.opening()
    session.respond(
        "Llama 3.3 70B FP8 on two RTX PRO 6000" if lang == "en" else "Llama 3.3 70B FP8 auf zwei RTX PRO 6000"
    )
    return session


@pytest.mark.parametrize(
    ("lang", "asked", "says"),
    [
        ("en", "do we need NVLink?", "TP over PCIe works, best with working peer-to-peer"),
        ("de", "Brauche ich NVLink?", "TP über PCIe funktioniert, am besten mit funktionierendem Peer-to-Peer"),
        ("de", "Muss ich NVLink haben?", "TP über PCIe funktioniert"),
        ("en", "Do we have to buy NVLink bridges?", "TP over PCIe works"),
        ("en", "what is an all-reduce?", "two per layer in the forward pass, 160 per token"),
        ("de", "Was ist ein All-Reduce?", "zwei je Schicht im Forward-Pass, 160 je Token"),
    ],
)
def test_a_question_in_ones_own_words_gets_the_knowledge_bases_answer(engine, lang, asked, says):
    reply = _session(engine, lang).respond(asked)
    assert says in reply.text
    assert "could not read" not in reply.text and "nicht als Antwort lesen" not in reply.text
    assert reply.understood == {}  # a question changes nothing in the scenario


def test_the_answer_names_its_sources(engine):
    text = _session(engine, "en").respond("what is an all-reduce?").text
    assert "only two all-reduces in the forward path" in text  # Megatron-LM's words
    text = _session(engine, "en").respond("is NVLink required for tensor parallelism?").text
    assert "up to 168% throughput gains" in text  # one side of the recorded disagreement


def test_an_unanswerable_line_is_still_said_to_be_unread(engine):
    assert "could not read" in _session(engine, "en").respond("the rack is painted blue").text


def test_small_talk_is_answered_as_small_talk(engine):
    reply = _session(engine, "en").respond("the weather is nice today")
    assert reply.kind == "smalltalk" and "could not read" not in reply.text


def test_rules_check_refuses_a_question_without_answer_or_source(tmp_path, engine):
    root = tmp_path / "knowledge"
    shutil.copytree(knowledge_dir(), root)
    (root / "questions.yaml").write_text(
        "questions:\n"
        "  - id: broken\n"
        "    asked: {en: 'what is x', de: 'was ist x'}\n"
        "    answer: {en: 'x is y', de: 'x ist y'}\n",
        encoding="utf-8",
    )
    from advisor.core.engine import Engine

    report = check(Engine(load(root), engine.rules), run_cases=False)
    assert "question broken: an answer needs a citation" in report.problems
