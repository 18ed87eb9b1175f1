"""Each rule's own cases, kept as data beside the rule: it fires where it should and stays quiet elsewhere."""

from __future__ import annotations

import pytest

from advisor.core.engine import Engine
from advisor.rules_check import case_fires

_ENGINE = Engine.load()
CASES = [
    pytest.param(rule.id, kind, case, id=f"{rule.id}-{kind}{i}")
    for rule in _ENGINE.rules.rules.values()
    for kind, cases in (("fires", rule.cases_fire), ("quiet", rule.cases_quiet))
    for i, case in enumerate(cases)
]


@pytest.mark.parametrize(("rule_id", "kind", "case"), CASES)
def test_rule_case(rule_id, kind, case):
    rule = _ENGINE.rules.rules[rule_id]
    assert case_fires(_ENGINE, rule, dict(case)) is (kind == "fires")


def test_every_rule_has_a_case_that_fires_it_and_one_that_does_not():
    for rule in _ENGINE.rules.rules.values():
        assert rule.cases_fire, rule.id
        assert rule.cases_quiet, rule.id
