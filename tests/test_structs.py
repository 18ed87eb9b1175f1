"""The result records keep what their dataclasses gave: immutability, equality, repr, defaults, copies."""

from __future__ import annotations

import pickle

import pytest

from advisor.core.engine import Engine
from advisor.core.layouts import Layout
from advisor.core.records import Firing, Recommendation
from advisor.inputs.scenario import build
from advisor.structs import FrozenInstanceError, replace


@pytest.fixture(scope="module")
def rec() -> Recommendation:
    engine = Engine.load()
    scenario = build(
        {"model": "llama-3.3-70b", "precision": "fp8", "hardware": {"gpu": "rtx-pro-6000", "gpus_per_node": 2}},
        engine.kb,
    )
    return engine.evaluate(scenario)


def test_a_finding_cannot_be_changed_and_compares_by_value(rec: Recommendation) -> None:
    finding = rec.findings[0]
    with pytest.raises(FrozenInstanceError):
        finding.severity = "error"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del finding.rule  # type: ignore[misc]
    german = replace(finding, lang="de")
    assert german.lang == "de" and finding.lang == "en" and german.rule == finding.rule
    assert german != finding and replace(german, lang="en") == finding
    assert {Layout(1, 2, 1): "x"}[Layout(1, 2, 1)] == "x"  # frozen records hash by value
    assert repr(finding).startswith(f"Finding(rule={finding.rule!r}, severity={finding.severity!r}")


def test_a_recommendation_is_mutable_unhashable_and_survives_pickling(rec: Recommendation) -> None:
    copy = pickle.loads(pickle.dumps(rec))
    assert copy.layout == rec.layout and copy.figures == rec.figures and copy.findings == rec.findings
    assert "trace_builder" not in repr(rec)  # repr=False fields stay out of the repr
    with pytest.raises(TypeError):
        hash(rec)
    fresh = Recommendation({}, None, {}, [], [], [], {})
    assert fresh.firings == [] and fresh.firings is not Recommendation({}, None, {}, [], [], [], {}).firings
    assert fresh.lang == "en"
    fresh.lang = "de"
    assert replace(fresh, layout=Layout(1, 2, 1)).lang == "de"


def test_layouts_sort_by_their_fields_and_records_reject_unknown_fields() -> None:
    assert sorted([Layout(2, 1, 1), Layout(1, 2, 1), Layout(1, 1, 2)]) == [
        Layout(1, 1, 2),
        Layout(1, 2, 1),
        Layout(2, 1, 1),
    ]
    assert Layout(1, 2, 1) < Layout(1, 2, 2) and Layout(1, 2, 1).ep == 1
    with pytest.raises(TypeError):
        Firing("r", True, {}, None, "extra")  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Firing(rule="r", outcome=True)  # type: ignore[call-arg]
