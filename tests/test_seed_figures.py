"""Every figure of the seed articles, reproduced from the formulas (seed-002 / seed-000, seed-001, seed-003)."""

from __future__ import annotations

import pytest

from advisor.core.formulas.calc import Calculator
from advisor.core.layouts import Layout
from tests.conftest import RTX_PRO_70B, with_users

MiB = 2**20


def test_llama_70b_activation_is_16_kib_and_160_allreduces_carry_2_5_mib(advise):
    rec = advise(with_users(RTX_PRO_70B, 60))
    assert rec.layout == Layout(1, 2, 1)
    assert rec.env["activation_bytes_per_token"] == 16 * 1024
    assert rec.figures["allreduce_count_per_token"] == 160
    assert rec.figures["allreduce_mib_per_token"] == 2.5
    assert rec.env["allreduce_bytes_per_token"] == 2.5 * MiB


@pytest.mark.parametrize(("tp", "ms"), [(2, 82), (4, 123), (8, 143)])
def test_2000_token_prompt_over_pcie5_takes_82_123_143_ms(advise, tp, ms):
    scenario = {
        **RTX_PRO_70B,
        "hardware": {"gpu": "RTX PRO 6000 Server", "gpus_per_node": 8},
        "workload": {"prompt_tokens": 2000, "concurrent_conversations": 8},
    }
    rec = advise(scenario, layout=Layout(1, tp, 1))
    assert rec.env["tp_link"] == "pcie"
    assert rec.env["tp_link_gbs"] == 64
    assert round(rec.figures["prefill_allreduce_ms"]) == ms


@pytest.mark.parametrize(("tp", "bridge", "pcie_ms"), [(2, "bridge-2", 81.92), (4, "bridge-4", 122.88)])
def test_h200_nvl_bridge_takes_about_a_seventh_of_the_pcie_time(advise, tp, bridge, pcie_ms):
    scenario = {
        "model": "llama-3.3-70b-instruct",
        "precision": "bf16",
        "hardware": {"gpu": "H200 NVL", "gpus_per_node": tp, "nvlink": bridge},
        "workload": {"prompt_tokens": 2000, "concurrent_conversations": 8},
    }
    rec = advise(scenario, layout=Layout(1, tp, 1))
    assert rec.env["tp_link"] == "nvlink"
    assert rec.env["tp_link_gbs"] == 450
    assert rec.figures["prefill_allreduce_ms"] == pytest.approx(pcie_ms * 64 / 450, rel=1e-3)
    assert 6.5 < pcie_ms / rec.figures["prefill_allreduce_ms"] < 7.5  # "about a seventh"


def test_fp8_cache_of_an_8192_token_conversation_is_1_25_gib(advise):
    rec = advise(with_users(RTX_PRO_70B, 20))
    assert rec.env["kv_bytes_per_token"] == 2 * 80 * 8 * 128 * 1
    assert rec.figures["kv_gib_per_conversation"] == 1.25


def test_one_card_holds_14_conversations_two_replicas_28_tp2_about_83(advise):
    few = advise(with_users(RTX_PRO_70B, 20))
    assert few.figures["weights_gib"] == 68
    assert few.figures["usable_gib_per_gpu"] == pytest.approx(0.9 * 95.6)
    assert few.env["cache_gib_per_gpu"] == pytest.approx(18.04)
    assert few.env["conversations_per_replica"] == 14
    assert few.figures["conversations"] == 28
    many = advise(with_users(RTX_PRO_70B, 60))
    assert many.env["weights_gib_per_gpu"] == 34
    assert round(many.env["cache_gib_per_gpu"]) == 52
    assert many.figures["conversations"] == 83


def _calc(engine):
    return Calculator(engine.kb)


def test_bubble_at_depth_4_with_8_micro_batches_is_27_percent_gpipe_and_37_5_megatron(engine):
    calc = _calc(engine)
    env = {"pp": 4, "micro_batches": 8}
    assert calc.formulas["bubble-gpipe"].compute(env) == pytest.approx(3 / 11)
    assert round(calc.formulas["bubble-gpipe"].compute(env) * 100) == 27
    assert calc.formulas["bubble-megatron"].compute(env) == 0.375


def test_pipeline_scenario_reports_both_bubble_forms(advise):
    scenario = {
        **RTX_PRO_70B,
        "hardware": {"gpu": "RTX PRO 6000 Server", "gpus_per_node": 4},
        "workload": {"concurrent_conversations": 8},
    }
    rec = advise(scenario, layout=Layout(1, 1, 4))
    assert rec.env["micro_batches"] == 8
    assert rec.figures["bubble_fraction"] == pytest.approx(0.2727, abs=1e-4)
    assert rec.env["bubble_megatron"] == 0.375
    assert rec.finding("pipeline-bubble") is not None


def test_70b_bf16_gradients_are_140_gb_about_two_seconds_over_pcie5(engine):
    calc = _calc(engine)
    env = {"params": 70e9, "grad_bytes": 2, "replicas": 2, "dp_link_gbs": 64}
    env["grad_allreduce_bytes"] = calc.formulas["grad-bytes"].compute(env)
    assert calc.formulas["grad-gb"].compute(env) == 140
    seconds = calc.formulas["grad-allreduce-time"].compute(env)
    assert seconds == pytest.approx(2.1875)
    assert round(seconds) == 2


def test_nvlink_is_seven_times_pcie5_per_direction_not_fourteen(advise):
    rec = advise(
        {"model": "llama-3.3-70b-instruct", "hardware": {"gpu": "H200 NVL", "gpus_per_node": 2, "nvlink": "bridge-2"}}
    )
    assert rec.env["nvlink_speedup"] == pytest.approx(450 / 64)
    assert round(rec.env["nvlink_speedup"]) == 7


def test_qwen3_235b_checkpoints_134_gb_nvfp4_and_236_gb_fp8_need_two_or_four_cards(advise):
    for precision, size_gb in (("nvfp4", 134), ("fp8", 236)):
        rec = advise(
            {
                "model": "Qwen3-235B-A22B",
                "precision": precision,
                "hardware": {"gpu": "RTX PRO 6000", "gpus_per_node": 4},
                "workload": {"concurrent_conversations": 8},
            }
        )
        assert rec.env["weights_bytes"] == size_gb * 1e9
        assert not rec.env["fits_one_gpu"]
        assert rec.layout.gpus_per_instance == (2 if precision == "nvfp4" else 4)
    # FP8 would squeeze into three cards only as a three-stage pipeline; TP needs a divisor of the heads
    assert rec.env["min_gpus_to_fit"] == 3


def test_gpt_oss_120b_mxfp4_at_65_3_gb_fits_one_128_gb_unit(advise):
    rec = advise({"model": "gpt-oss-120b", "precision": "mxfp4", "hardware": {"gpu": "DGX Spark", "gpus_per_node": 1}})
    assert rec.env["weights_bytes"] == 65.3e9
    assert rec.env["fits_one_gpu"]
