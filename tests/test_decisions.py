"""The seeds' decisions: one card, replicas or a split, and which split, for the platforms they discuss."""

from __future__ import annotations

from advisor.core.layouts import Layout
from tests.conftest import RTX_PRO_70B, with_users


def test_two_rtx_pro_6000_with_20_users_run_two_replicas(advise):
    rec = advise(with_users(RTX_PRO_70B, 20))
    assert rec.layout == Layout(2, 1, 1)
    assert rec.finding("replicate-what-fits") is not None
    tp2 = next(a for a in rec.alternatives if a.layout == Layout(1, 2, 1))
    assert "tp-for-model-that-fits-one-card" in tp2.rules


def test_two_rtx_pro_6000_with_60_users_split_tp2_with_p2p_caveat_and_pp_to_test(advise):
    rec = advise(with_users(RTX_PRO_70B, 60))
    assert rec.layout == Layout(1, 2, 1)
    assert rec.finding("split-for-capacity") is not None
    caveat = rec.finding("tp-over-pcie")
    assert caveat is not None and "pipeline" in caveat.explanation
    assert any(c.source == "seed-002" for c in caveat.sources)
    assert Layout(1, 1, 2) in [a.layout for a in rec.alternatives]
    replicas = next(a for a in rec.alternatives if a.layout == Layout(2, 1, 1))
    assert any("28 conversations" in w for w in replicas.why_not)
    assert {u.fact for u in rec.unknowns} >= {"p2p", "iommu", "acs"}


def test_broken_p2p_turns_the_60_user_case_to_pipeline_parallelism(advise):
    scenario = with_users(RTX_PRO_70B, 60)
    scenario["hardware"] = {**scenario["hardware"], "p2p": "broken"}
    rec = advise(scenario)
    assert rec.layout == Layout(1, 1, 2)
    tp2 = next(a for a in rec.alternatives if a.layout == Layout(1, 2, 1))
    assert "tp-over-pcie-p2p-broken" in tp2.rules


def test_eight_h200_nvl_run_tp_inside_each_four_card_domain_and_pp_between(advise):
    rec = advise(
        {
            "model": "Llama 3.1 405B",
            "precision": "bf16",
            "hardware": {"gpu": "H200 NVL", "gpus_per_node": 8, "nvlink": "bridge-4"},
            "workload": {"concurrent_conversations": 16},
        }
    )
    assert not rec.env["fits_one_gpu"]
    assert rec.env["min_gpus_to_fit"] > 4  # more than one NVLink domain
    assert rec.layout == Layout(1, 4, 2)
    assert rec.finding("tp-in-domain-pp-between") is not None
    assert rec.finding("nvlink-domains-in-node") is not None
    tp8 = next(a for a in rec.alternatives if a.layout == Layout(1, 8, 1))
    assert "tp-within-nvlink-domain" in tp8.rules
    assert "--tensor-parallel-size 4 --pipeline-parallel-size 2" in rec.launch["vllm"]
    assert "--tp 4 --pp-size 2" in rec.launch["sglang"]


def test_a_model_that_fits_one_card_is_replicated_when_copies_hold_the_users(advise):
    rec = advise(
        {
            "model": "Llama 3.1 8B",
            "hardware": {"gpu": "L40S", "gpus_per_node": 4},
            "workload": {"concurrent_conversations": 16},
        }
    )
    assert rec.layout == Layout(4, 1, 1)
    assert "--data-parallel-size 4" in rec.launch["vllm"]


def test_a_model_that_fits_one_card_is_split_for_one_users_speed(advise):
    rec = advise(
        {
            "model": "Llama 3.1 8B",
            "hardware": {"gpu": "H100 SXM", "gpus_per_node": 4},
            "workload": {"concurrent_conversations": 1, "goal": "latency"},
        }
    )
    assert rec.layout.tp > 1
    assert rec.finding("split-for-single-user-speed") is not None
    replicas = next(a for a in rec.alternatives if a.layout == Layout(4, 1, 1))
    assert any("slower for one user" in w for w in replicas.why_not)


def test_a_model_that_fits_one_card_is_split_when_copies_cannot_hold_the_users(advise):
    """80 users on 2 RTX PRO 6000: split over both cards. TP 2 estimates 706 tokens/s, PP 2 637, within the
    10 % tolerance, so the next key decides: PP 2's traffic crosses PCIe once per stage, not per layer."""
    rec = advise(with_users(RTX_PRO_70B, 80))
    assert rec.layout == Layout(1, 1, 2)
    assert rec.finding("split-for-capacity") is not None
    tp2 = next(a for a in rec.alternatives if a.layout == Layout(1, 2, 1))
    assert any("within 10 %" in w for w in tp2.why_not)


def test_an_mla_model_for_many_users_uses_expert_and_data_parallelism(advise):
    rec = advise(
        {
            "model": "DeepSeek-V3",
            "precision": "fp8",
            "hardware": {"gpu": "H200 SXM", "gpus_per_node": 8},
            "workload": {"concurrent_conversations": 200},
        }
    )
    assert rec.layout == Layout(8, 1, 1, ep=8)
    assert rec.finding("moe-expert-parallel") is not None
    assert "--data-parallel-size 8 --enable-expert-parallel" in rec.launch["vllm"]
    assert "--tp 8 --dp 8 --enable-dp-attention --ep-size 8" in rec.launch["sglang"]  # SGLang's --tp is the EP width


def test_two_nodes_of_eight_run_tp_per_node_and_pp_across_nodes(advise):
    rec = advise(
        {
            "model": "Llama 3.1 405B",
            "precision": "bf16",
            "hardware": {"gpu": "H100 SXM", "gpus_per_node": 8, "nodes": 2, "node_link_gbps": 400},
            "workload": {"concurrent_conversations": 8},
        }
    )
    assert rec.layout == Layout(1, 8, 2)
    assert rec.finding("pp-across-nodes") is not None
    assert "ray" in rec.launch["vllm"]


def test_a_model_too_big_for_the_machine_gets_an_error_and_no_layout(advise):
    rec = advise({"model": "Llama 3.1 405B", "precision": "bf16", "hardware": {"gpu": "RTX 4090", "gpus_per_node": 2}})
    assert rec.layout is None
    error = rec.finding("model-does-not-fit")
    assert error is not None and error.severity == "error"
    assert rec.launch == {}


def test_three_cards_use_a_pipeline_because_three_does_not_divide_64_heads(advise):
    rec = advise(
        {
            "model": "Llama 3.3 70B",
            "precision": "bf16",
            "hardware": {"gpu": "RTX PRO 6000", "gpus_per_node": 3},
            "workload": {"concurrent_conversations": 60},
        }
    )
    assert rec.layout == Layout(1, 1, 3)
    assert rec.finding("uneven-gpus-use-pipeline") is not None
    tp3 = [a for a in rec.alternatives if a.layout.tp == 3]
    assert all("tp-must-divide-heads" in a.rules and a.rejected for a in tp3)


def test_german_session_gives_german_texts_and_decimal_commas(advise):
    rec = advise(with_users(RTX_PRO_70B, 60), lang="de")
    finding = rec.finding("split-for-capacity")
    assert "Gespräche" in finding.explanation
    assert "34,0 GiB" in finding.explanation
