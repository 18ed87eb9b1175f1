"""The published measurements the advisor is calibrated against (knowledge/measurements.yaml): each names a
source that quotes its number word for word, a known model, precision, GPU and link, a layout that occupies
exactly the GPUs measured, and either a value or a ratio against another layout; `advisor rules check`
names each kind of breakage."""

from __future__ import annotations

import pytest

from advisor.kb.knowledge import METRICS, Knowledge, load
from tests.editing import edit_once


@pytest.fixture(scope="module")
def kb() -> Knowledge:
    return load()


def test_the_seeds_own_figures_are_recorded_as_the_seed_states_them(kb):
    dl380a = kb.measurements["dl380a-70b-split-four-one-user"]
    assert (dl380a.gpu, dl380a.gpus, dl380a.layout.label, dl380a.value) == ("rtx-pro-6000-server", 4, "TP 4", 33)
    assert "33 tokens per second for one user" in dl380a.quote
    one_user = kb.measurements["dgx-spark-pair-tp-vs-pp-one-user"]
    assert (one_user.model, one_user.precision, one_user.nodes, one_user.node_link) == (
        "gpt-oss-120b",
        "mxfp4",
        2,
        "network-200g",
    )
    assert (one_user.layout.label, one_user.versus.label, one_user.ratio, one_user.concurrency) == (
        "TP 2",
        "PP 2",
        1.37,
        1,
    )
    batched = kb.measurements["dgx-spark-pair-pp-vs-tp-batch-128"]
    assert (batched.layout.label, batched.versus.label, batched.concurrency, batched.metric) == (
        "PP 2",
        "TP 2",
        128,
        "throughput_tokens_per_s",
    )
    assert batched.ratio >= 2


def test_every_measurement_names_what_the_knowledge_base_knows(kb):
    for m in kb.measurements.values():
        assert m.source in kb.sources, m.id
        assert m.model in kb.models, m.id
        assert m.precision in kb.precisions, m.id
        assert m.gpu in kb.gpus, m.id
        assert m.metric in METRICS, m.id
        if m.nodes > 1:
            assert m.node_link in kb.links, m.id
        else:
            assert m.node_link is None, m.id


def test_every_quote_stands_in_its_source(kb):
    for m in kb.measurements.values():
        words = " ".join(m.quote.split())
        assert any(words in " ".join(q.text.split()) for q in kb.sources[m.source].quotes), m.id


def test_every_layout_occupies_exactly_the_gpus_measured(kb):
    for m in kb.measurements.values():
        for layout in (m.layout, m.versus):
            if layout is None:
                continue
            assert layout.replicas * layout.tp * layout.pp * layout.dp == m.gpus, m.id
            assert (layout.tp * layout.dp) % layout.ep == 0, m.id
        assert m.gpus % m.nodes == 0, m.id


def test_each_gives_a_value_or_a_ratio_never_both(kb):
    for m in kb.measurements.values():
        relative = (m.versus is not None, m.ratio is not None)
        assert relative in ((False, False), (True, True)), m.id
        assert (m.value is None) == (m.ratio is not None), m.id
        assert (m.value if m.value is not None else m.ratio) > 0, m.id


def test_the_collection_spans_dense_and_moe_pcie_nvlink_and_several_nodes(kb):
    ms = list(kb.measurements.values())
    assert len(ms) >= 16
    assert len({m.source for m in ms}) >= 4
    assert sum(kb.models[m.model].kind == "moe" for m in ms) >= 3
    assert sum(kb.models[m.model].kind == "dense" for m in ms) >= 3
    without_nvlink = [m for m in ms if m.gpus > 1 and m.nodes == 1 and kb.gpus[m.gpu].nvlink_fitted == "none"]
    assert len(without_nvlink) >= 3
    assert sum(m.nodes > 1 for m in ms) >= 2
    assert {"h100-sxm", "h200-sxm", "b200", "rtx-pro-6000-server"} <= {m.gpu for m in ms}
    assert {"one_user_tokens_per_s", "throughput_tokens_per_s", "ttft_ms", "tpot_ms"} <= {m.metric for m in ms}


@pytest.mark.parametrize(
    ("old", "new", "named"),
    [
        ('quote: "| 1 | 406.77 | 18.58 | 51.67 |"', 'quote: "| 1 | 306.77 | 18.58 | 51.67 |"', "quote not found"),
        ("    gpus: 4\n    nodes: 1\n", "    gpus: 8\n    nodes: 1\n", "occupies 4 GPUs, not the 8 measured"),
        ("    value: 33\n", "    value: 33\n    ratio: 1.2\n", "needs exactly one of a value or a versus"),
        ("    gpu: rtx-pro-6000-server\n", "    gpu: rtx-pro-7000\n", "names unknown GPU 'rtx-pro-7000'"),
        ("    node_link: network-200g\n", "    node_link: null\n", "spans 2 nodes but names no node_link"),
    ],
)
def test_rules_check_names_a_broken_measurement(cli, knowledge_copy, old, new, named):
    edit_once(knowledge_copy / "measurements.yaml", old, new)
    code, out, err = cli("rules", "check", "--quick")
    assert code != 0
    assert "measurement " in out + err and named in out + err
