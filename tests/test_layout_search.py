"""The layout search computes every figure only for the layouts still in the race: a layout a rule rejects
(it does not fit, TP does not divide the heads) gets its figures only where it is shown. The answers are
the ones the full search gives."""

from __future__ import annotations

import json

import pytest

from advisor.core.engine import Engine
from advisor.core.layouts import Layout, Machine, max_copies, parse_layout, place
from advisor.inputs.scenario import build
from advisor.render import render

QUESTIONS = [
    # a 1,024-GPU H100 cluster and Llama 3.1 405B: most splits are rejected (TP must divide 8 KV heads)
    {
        "model": "llama-3.1-405b",
        "precision": "bf16",
        "hardware": {"gpu": "h100-sxm", "gpus_per_node": 8, "nodes": 128, "node_link_gbps": 400},
        "workload": {"concurrent_conversations": 2000},
    },
    # DeepSeek-V3 on four H200 nodes: expert-parallel layouts beside TP x PP
    {"model": "deepseek-v3", "hardware": {"gpu": "h200", "gpus_per_node": 8, "nodes": 4}},
    # a model that fits one card of few: nothing rejected for memory, the 1-GPU copies win
    {"model": "llama 3.1 8b", "hardware": {"gpu": "l40s", "gpus_per_node": 4}, "workload": {"goal": "latency"}},
    # too few GPUs for the model: every layout rejected, the alternatives all rejected ones
    {"model": "llama-3.1-405b", "hardware": {"gpu": "l40s", "gpus_per_node": 2}},
    # a training job whose sharding the advisor chooses: every layout under every sharding
    {
        "model": "llama 3.1 8b",
        "hardware": {"gpu": "h100-sxm", "gpus_per_node": 8, "nodes": 2},
        "workload": {"kind": "training"},
    },
]


def _full_search(engine: Engine) -> Engine:
    """An engine that completes every candidate before choosing: the search as it was before the shortcut."""
    full = Engine(engine.kb, engine.rules)
    full.rejecting_rules = []
    return full


@pytest.mark.parametrize("raw", QUESTIONS, ids=lambda raw: f"{raw['model']}-{raw['hardware']['gpu']}")
def test_the_answer_and_every_alternative_are_those_of_the_full_search(engine, raw):
    s = build(raw, engine.kb)
    for lang in ("en", "de"):
        quick = render("json", engine.evaluate(s, lang=lang), engine.kb, engine.rules)
        full = render("json", _full_search(engine).evaluate(s, lang=lang), engine.kb, engine.rules)
        assert json.loads(quick) == json.loads(full)


def test_a_layout_the_user_names_is_answered_in_full_even_where_a_rule_rejects_it(engine):
    """`--layout` TP 3 for a model with 8 KV heads: rejected, and still every figure and the reasons."""
    s = build({"model": "llama 3.3 70b", "hardware": {"gpu": "h100-sxm", "gpus_per_node": 8}}, engine.kb)
    only = parse_layout("tp3")
    rec = engine.evaluate(s, only=only)
    full = _full_search(engine).evaluate(s, only=only)
    assert rec.layout == only
    assert rec.figures == full.figures and rec.figures["one_user_tokens_per_s"] is not None
    assert [f.rule for f in rec.findings] == [f.rule for f in full.findings]
    assert "tp-must-divide-heads" in {f.rule for f in rec.findings}


def test_rejected_layouts_shown_as_alternatives_carry_their_figures(engine):
    """The 1,024-GPU cluster: one GPU per copy does not fit and TP 1024 does not divide the heads, yet
    both are shown (the splits a user asks about) with their figures and the rule that rejects them."""
    rec = engine.evaluate(build(QUESTIONS[0], engine.kb))
    shown = {a.layout.label(): a for a in rec.alternatives}
    rejected = [a for a in rec.alternatives if a.rejected]
    assert len(rejected) >= 2
    for alt in rejected:
        assert alt.figures["weights_gib_per_gpu"] is not None, alt.layout
        assert alt.rules, alt.layout
    assert any("tp-must-divide-heads" in a.rules for a in shown.values())


@pytest.mark.parametrize(
    "machine",
    [
        Machine(128, 8, 8, True),  # HGX nodes: one NVLink domain per node
        Machine(3, 8, 2, True),  # NVLink bridges in pairs
        Machine(2, 8, 4, True, 4),  # bridged fours on two sockets
        Machine(4, 4, 1, False, 2),  # PCIe cards on two sockets
        Machine(5, 6, 1, False),  # six cards a node, no NVLink
        Machine(1, 10, 2, True, 5),  # ten cards, pairs bridged, five per socket
    ],
    ids=lambda m: f"{m.nodes}x{m.per_node}-d{m.domain}-s{m.socket}",
)
def test_the_copies_counted_are_the_copies_placed(machine):
    """The search counts copies per size without placing them across the cluster: every count is what
    placing them one after the other on real GPU ids gives, and one more copy does not fit."""
    for size in range(1, machine.total + 1):
        count = max_copies(size, machine)
        if count:
            assert place(Layout(count, size, 1), machine) is not None, size
        assert place(Layout(count + 1, size, 1), machine) is None, size
