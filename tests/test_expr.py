"""The rule-condition language: whitelisted, three-valued, never Python's eval."""

from __future__ import annotations

import pytest

from advisor.errors import ExpressionError
from advisor.kb.expr import parse

KNOWN = {"tp", "p2p", "users", "conversations", "n_heads", "virtualized"}


def test_unknown_facts_make_comparisons_unknown_and_kleene_logic_decides_what_it_can():
    e = parse("tp > 1 and p2p == 'broken'", KNOWN)
    assert e.evaluate({"tp": 2, "p2p": None}) is None
    assert e.evaluate({"tp": 1, "p2p": None}) is False  # unknown and False is False
    assert parse("tp > 1 or p2p == 'broken'", KNOWN).evaluate({"tp": 2, "p2p": None}) is True


def test_known_asks_whether_a_fact_has_a_value():
    e = parse("not known(p2p) or p2p == 'broken'", KNOWN)
    assert e.evaluate({"p2p": None}) is True
    assert e.evaluate({"p2p": "ok"}) is False


def test_divides_and_arithmetic():
    e = parse("tp > 1 and not divides(tp, n_heads)", KNOWN)
    assert e.evaluate({"tp": 3, "n_heads": 64}) is True
    assert e.evaluate({"tp": 4, "n_heads": 64}) is False
    assert parse("users / 0", KNOWN).evaluate({"users": 3}) is None  # no ZeroDivisionError


@pytest.mark.parametrize(
    "text",
    ["__import__('os')", "tp.__class__", "open('x')", "[x for x in users]", "lambda: 1", "tp[0]", "f'{tp}'"],
)
def test_anything_but_facts_operators_and_the_listed_functions_is_refused(text):
    with pytest.raises(ExpressionError):
        parse(text, KNOWN)


def test_an_unknown_name_is_refused_with_the_closest_one():
    with pytest.raises(ExpressionError) as err:
        parse("userz > 3", KNOWN)
    assert "'users'" in err.value.one_line()
