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
