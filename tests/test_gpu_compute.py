"""Every catalogue GPU states its dense tensor-core rates with a citation; every link latency is a measurement."""

from __future__ import annotations

import pytest

from advisor.kb.knowledge import load

PRECISIONS = ("bf16", "fp8", "fp4")


@pytest.fixture(scope="module")
def kb():
    return load()


def rate(gpu, precision):
    return getattr(gpu, f"tensor_tflops_{precision}")


def test_an_fp8_card_states_its_fp8_rate_or_says_why_not(kb):
    silent = [
        g.id for g in kb.gpus.values() if g.fp8 and g.tensor_tflops_fp8 is None and "tensor_tflops_fp8" not in g.notes
    ]
    assert silent == []


def test_no_rate_for_a_tensor_path_the_card_lacks(kb):
    assert [g.id for g in kb.gpus.values() if not g.fp8 and g.tensor_tflops_fp8 is not None] == []
    assert [g.id for g in kb.gpus.values() if not g.fp4 and g.tensor_tflops_fp4 is not None] == []


def test_every_rate_cites_a_known_source(kb):
    bad = []
    for g in kb.gpus.values():
        for p in PRECISIONS:
            key = f"tensor_tflops_{p}"
            if rate(g, p) is None:
                continue
            cite = g.cite.get(key)
            if cite is None or cite.source not in kb.sources:
                bad.append(f"{g.id} {key}")
    assert bad == []


def test_a_rate_halved_from_a_sparse_figure_says_so(kb):
    # NVIDIA prints most tensor rates 'with sparsity'; a dense figure taken from one must say it was halved.
    unsaid = []
    for g in kb.gpus.values():
        for p in PRECISIONS:
            cite = g.cite.get(f"tensor_tflops_{p}")
            if cite and "sparsity" in cite.locator and "halved" not in cite.locator and "dense" not in cite.locator:
                unsaid.append(f"{g.id} {p}")
    assert unsaid == []


def test_dense_rates_rise_as_precision_falls(kb):
    for g in kb.gpus.values():
        present = [rate(g, p) for p in PRECISIONS if rate(g, p) is not None]
        assert present == sorted(present), g.id
        assert all(0 < r < 20000 for r in present), g.id


def test_what_an_engineer_reads_for_the_common_cards(kb):
    # The figures a sizing conversation starts from: H100 SXM dense BF16 and FP8, the B200's FP4, an Ampere card's BF16.
    gpus = kb.gpus
    assert (gpus["h100-sxm"].tensor_tflops_bf16, gpus["h100-sxm"].tensor_tflops_fp8) == (989.5, 1979)
    assert gpus["h200-sxm"].tensor_tflops_fp8 == gpus["h100-sxm"].tensor_tflops_fp8
    assert gpus["b200"].tensor_tflops_fp4 == 9000
    assert gpus["a100-sxm4-80gb"].tensor_tflops_bf16 == 312
    assert gpus["a100-sxm4-80gb"].tensor_tflops_fp8 is None
    assert gpus["l40s"].tensor_tflops_fp8 == 733


def test_a_link_latency_is_a_cited_measurement(kb):
    bad = []
    for link in kb.links.values():
        if link.latency_us is None:
            assert "latency_us null" in link.notes, link.id
            continue
        cite = link.cite.get("latency_us")
        source = kb.sources.get(cite.source) if cite else None
        if source is None or source.kind != "measurement" or not cite.quote:
            bad.append(link.id)
    assert bad == []


def test_small_messages_cost_more_across_nodes_and_pcie_than_over_nvlink(kb):
    links = kb.links
    assert links["nvlink4-h100-h200-sxm"].latency_us < links["network-200g"].latency_us
    assert links["nvlink4-h100-h200-sxm"].latency_us < links["pcie-gen4-x16"].latency_us
