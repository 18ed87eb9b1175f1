"""Every choice the chat offers, in the words it shows in English and German, is read back as that
choice when typed as the answer to its question (advisor/chat/strings.yaml `choices:` and the field
table's `text: values` in knowledge/fields.yaml must agree)."""

from __future__ import annotations

import pytest

from advisor.chat.strings import choice_label
from advisor.i18n import LANGS
from advisor.inputs.fields import field_table
from advisor.inputs.freetext import understand

OFFERED = [
    (f.fact, f.path, choice, lang)
    for f in field_table().fields
    if f.type == "enum"
    for choice in f.choices
    for lang in LANGS
]


@pytest.mark.parametrize(("fact", "path", "choice", "lang"), OFFERED)
def test_each_offered_choice_is_read_back(engine, fact, path, choice, lang):
    typed = choice_label(fact, choice, lang)
    got = understand(typed, engine.kb, fact)
    assert got.fields == {path: choice}, f"{typed!r} answering the {fact} question"


def test_a_shared_word_goes_to_the_question_asked(engine):
    assert understand("aus", engine.kb, "acs").fields == {"hardware.acs": "disabled"}
    assert understand("aus", engine.kb, "iommu").fields == {"hardware.iommu": "off"}
    # asked about something else, "aus" names neither
    assert understand("aus", engine.kb, "users").fields == {}


@pytest.mark.parametrize(
    ("typed", "fact", "expected"),
    [("aus", "iommu", "off"), ("deaktiviert", "acs", "disabled"), ("funktioniert", "p2p", "ok")],
)
def test_set_takes_the_words_the_chat_offers_in_german(engine, typed, fact, expected):
    """An engineer corrects a fact with /set in the German words the question offered."""
    from advisor.chat.dialogue import ChatSession

    session = ChatSession(engine, "de")
    session.opening()
    session.respond("Llama 3.3 70B FP8 auf zwei RTX PRO 6000, 60 Nutzer")
    reply = session.respond(f"/set {fact} {typed}")
    assert reply.understood == {path_of(fact): expected}
    assert session.respond(f"/set {fact} vielleicht").text.startswith("`vielleicht` ist kein gültiger Wert")


def path_of(fact: str) -> str:
    return field_table().by_fact()[fact].path
