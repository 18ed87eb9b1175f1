"""Words and numbers in the reader's language: plurals, separators, rule pages."""

from __future__ import annotations

from advisor.i18n import Message, Text, fill, outline
from tests.scenarios import H100_PCIE_70B


def test_counts_take_the_singular_for_one(cli):
    """ "Two H100 PCIe, Llama 3.1 70B FP8, 20 users": one copy per GPU holds a single conversation."""
    code, out, _ = cli(*H100_PCIE_70B)
    assert "keeps only 1 conversation per card" in out
    code, out, _ = cli(*H100_PCIE_70B, "--lang", "de")
    assert "nur 1 Gespräch je Karte" in out


def test_a_plural_field_writes_the_number_and_its_noun_in_each_language():
    msg = Message.of(
        Text({"en": "{n:|conversation|conversations} fit", "de": "{n:|Gespräch|Gespräche} passen"}), {"n": 1}
    )
    assert (msg.render("en"), msg.render("de")) == ("1 conversation fit", "1 Gespräch passen")
    assert fill("{n:|copy|copies}", {"n": 1200}, "de") == "1.200 copies"
    assert fill("{n:|GPU|GPUs} idle", {"n": None}) == "? GPUs idle"


def test_rule_pages_show_the_fact_behind_a_count():
    assert (
        outline("needs {deployed_gpus:|GPU|GPUs} but sees {visible_gpus}")
        == "needs {deployed_gpus} GPUs but sees {visible_gpus}"
    )
    assert outline("needs {deployed_gpus:|GPU|GPUs}", braces=False) == "needs deployed_gpus GPUs"
