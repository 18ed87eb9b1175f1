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


def test_every_rule_condition_from_the_load_cache_answers_as_the_interpreter(engine):
    """The load cache keeps each rule condition as compiled Python, run where every fact it reads is
    known; where one is unknown the three-valued interpreter decides. Over values of each fact's type
    (unknown among them) both give the same outcome for every rule of every scope."""
    import random

    from advisor.kb.cache import _reduce_expression

    rng = random.Random(5)

    def values(name):
        spec = engine.kb.facts.get(name)
        kind = spec.type if spec is not None else "number"
        if kind == "bool":
            return [None, True, False]
        if kind == "enum":
            return [None, *spec.choices]
        if kind == "text":
            return [None, "", "x"]
        return [None, 0, 1, 2, 3, 8, 64, 0.5, 1e9]

    for rule in engine.rules.rules.values():
        rebuild, args = _reduce_expression(rule.when)
        cached = rebuild(*args)
        interpreted = parse(rule.when.text, rule.when.names)
        for _ in range(40):
            env = {name: rng.choice(values(name)) for name in sorted(rule.when.names)}
            assert cached.evaluate(env) == interpreted.evaluate(env), (rule.id, env)
        known = {name: next(v for v in values(name) if v is not None) for name in rule.when.names}
        assert cached.evaluate(known) == interpreted.evaluate(known), rule.id


def test_a_compiled_condition_is_no_backdoor_for_names_it_does_not_read():
    """The compiled Python reads only the facts the condition names, and `true`/`false` and `known()` mean
    what they mean to the interpreter."""
    from advisor.kb.cache import _reduce_expression

    e = parse("known(tp) and (ep > 1 or false) and true", {"tp", "ep"})
    rebuild, args = _reduce_expression(e)
    cached = rebuild(*args)
    assert cached.evaluate({"tp": 2, "ep": 4, "__import__": 1}) is True
    assert cached.evaluate({"tp": None, "ep": 4}) is False
    assert cached.evaluate({"tp": 2, "ep": None}) is None
    assert cached.evaluate({"tp": 2, "ep": 1}) is False
    # what `known()` wraps is computed as the interpreter computes it: a division by zero is no answer
    e = parse("known(a / b) or a > 5", {"a", "b"})
    rebuild, args = _reduce_expression(e)
    cached = rebuild(*args)
    for env in ({"a": 1, "b": 0}, {"a": 9, "b": 0}, {"a": 1, "b": 2}, {"a": None, "b": 2}):
        assert cached.evaluate(env) == e.evaluate(env), env
