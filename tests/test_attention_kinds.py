"""Sliding-window and chunked attention, embeddings and 16-bit parts of quantized checkpoints, as users ask.

Each hand computation in a docstring uses the model's config.json values cited in knowledge/models.yaml;
GiB = 2^30 bytes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from advisor.core.layouts import Layout
from advisor.inputs.modelconfig import model_from_config

DATA = Path(__file__).parent / "data"
GiB = 2**30


def gemma(gpu: str, gpus: int, users: int, precision: str = "bf16") -> dict:
    return {
        "model": "Gemma 3 27B",
        "precision": precision,
        "kv_cache_dtype": "bf16",
        "hardware": {"gpu": gpu, "gpus_per_node": gpus},
        "workload": {"concurrent_conversations": users, "context_tokens": 32768},
    }


GEMMA_KV_32K = 2 * 16 * 128 * 2 * (10 * 32768 + 52 * 1024) / GiB


def test_gemma_3_27b_at_32k_context_caches_2_9_gib_per_conversation_not_15_5(advise):
    """Gemma 3 27B, BF16 cache, 32k context. Per layer and token: K and V (2) × 16 KV heads × head_dim 128 ×
    2 bytes = 8,192 B. 62 layers: 52 sliding (window 1,024) and 10 global. One conversation:
    8,192 × (10 × 32,768 + 52 × 1,024) = 8,192 × 380,928 = 3,120,562,176 B = 2.906 GiB — where charging
    every layer the full context would give 8,192 × 62 × 32,768 B = 15.5 GiB."""
    rec = advise(gemma("RTX PRO 6000", 1, 8))
    assert rec.env["kv_gib_per_conversation"] == pytest.approx(3_120_562_176 / GiB)
    assert rec.figures["kv_gib_per_conversation"] == round(GEMMA_KV_32K, 4)
    assert rec.env["kv_bytes_per_token"] * 32768 / GiB == pytest.approx(15.5)
    assert rec.layout == Layout(1, 1, 1)


def test_gemma_3_27b_on_one_rtx_pro_6000_holds_12_users_at_32k(advise):
    """Usable 0.9 × 95.6 GiB = 86.04 GiB; BF16 weights 27.0B × 2 B = 50.31 GiB (embedding counted once, tied);
    86.04 − 50.31 = 35.73 GiB of cache / 2.906 GiB = 12 conversations (with the full context on every layer: 2)."""
    rec = advise(gemma("RTX PRO 6000", 1, 12))
    assert rec.figures["weights_gib"] == pytest.approx(27.007991808e9 * 2 / GiB)
    assert rec.env["cache_gib_per_gpu"] == pytest.approx(0.9 * 95.6 - 27.007991808e9 * 2 / GiB)
    assert rec.figures["conversations"] == 12


def test_gemma_3_27b_on_two_rtx_pro_6000_for_16_users_runs_two_copies_not_tp2(advise):
    """Each card holds 12 conversations at 32k, so two copies hold 24 ≥ 16 users: no split is needed."""
    rec = advise(gemma("RTX PRO 6000", 2, 16))
    assert rec.layout == Layout(2, 1, 1)
    assert rec.figures["conversations"] == 24


def test_gemma_3_27b_int4_on_one_rtx_4090_fits_two_conversations_at_32k(advise):
    """INT4 (AWQ/GPTQ, 0.515625 B per weight with group-128 scales) keeps the 262,208 × 5,376 embedding
    (1.410B parameters, tied) in 16 bits: (27.008B − 1.410B) × 0.515625 B + 1.410B × 2 B = 13.199 + 2.819 GB
    = 14.92 GiB, not 27.008B × 0.515625 B = 12.97 GiB."""
    rec = advise(gemma("RTX 4090", 1, 2, precision="int4"))
    embed = 262208 * 5376
    assert rec.env["embed_params"] == embed
    assert rec.env["weights_gib"] == pytest.approx(((27.007991808e9 - embed) * 0.515625 + embed * 2) / GiB)
    assert rec.layout == Layout(1, 1, 1)
    assert rec.figures["conversations"] == int(rec.env["cache_gib_per_gpu"] // GEMMA_KV_32K) >= 2


def test_gemma_3_27b_in_bf16_does_not_fit_one_l40s_but_two_cards_hold_it(advise):
    """50.3 GiB of BF16 weights exceed one L40S; TP 2 halves them per card and the window keeps the cache small."""
    one = advise(gemma("L40S", 1, 4))
    assert one.layout is None
    two = advise(gemma("L40S", 2, 4))
    assert two.layout == Layout(1, 2, 1)
    assert two.figures["conversations"] >= 4


def test_gemma_3_27b_parameters_count_the_tied_embedding_about_27_0b(engine):
    """62 × (attention 66.06M + MLP 346.82M) = 25.60B, plus the 262,208 × 5,376 embedding once (tied) = 27.01B."""
    from advisor.inputs.modelconfig import estimate_params

    total, _ = estimate_params(engine.kb.find_model("gemma 3 27b").config)
    assert round(total / 1e9, 1) == 27.0


@pytest.mark.parametrize(
    ("model", "billions"),
    [("llama-3.1-8b", 8.03), ("llama-3.1-70b", 70.55), ("qwen2.5-72b", 72.7), ("gemma-3-27b-it", 27.0)],
)
def test_models_without_a_published_count_match_their_config_derived_count(engine, model, billions):
    """The catalogue notes state the config-derived count of every model whose params_b is null."""
    from advisor.inputs.modelconfig import estimate_params

    m = engine.kb.models[model]
    assert m.params_b is None
    total, _ = estimate_params(m.config)
    assert total / 1e9 == pytest.approx(billions, abs=0.05)


def test_gpt_oss_120b_on_one_h100_at_128k_halves_the_cache(advise):
    """gpt-oss-120b: 36 layers alternate banded (128-token window) and full attention. Per layer and token:
    2 × 8 KV heads × 64 × 2 B = 2,048 B. At 131,072 tokens: 2,048 × (18 × 131,072 + 18 × 128) B = 4.50 GiB,
    about half the 9.0 GiB of charging all 36 layers the full context."""
    rec = advise(
        {
            "model": "gpt-oss-120b",
            "precision": "mxfp4",
            "kv_cache_dtype": "bf16",
            "hardware": {"gpu": "H100 SXM", "gpus_per_node": 1},
            "workload": {"concurrent_conversations": 2, "context_tokens": 131072},
        }
    )
    assert rec.env["local_layers"] == 18 and rec.env["local_window"] == 128
    assert rec.env["kv_gib_per_conversation"] == pytest.approx(2048 * (18 * 131072 + 18 * 128) / GiB)
    assert rec.layout == Layout(1, 1, 1)
    assert rec.figures["conversations"] >= 2


def test_llama_4_scout_on_two_h200_charges_chunked_layers_one_chunk(advise):
    """Llama 4 Scout: 48 layers, every 4th a NoPE full-attention layer (12), the other 36 attend within
    8,192-token chunks. Per layer and token 2 × 8 × 128 × 2 B = 4,096 B. At 32,768 tokens:
    4,096 × (12 × 32,768 + 36 × 8,192) B = 2.625 GiB per conversation (6.0 GiB with every layer full).
    On TP 2 each GPU holds half the KV heads: 1.3125 GiB."""
    rec = advise(
        {
            "model": "llama 4 scout",
            "precision": "bf16",
            "kv_cache_dtype": "bf16",
            "hardware": {"gpu": "H200 SXM", "gpus_per_node": 2},
            "workload": {"concurrent_conversations": 16, "context_tokens": 32768},
        }
    )
    assert rec.env["kv_gib_per_conversation"] == pytest.approx(4096 * (12 * 32768 + 36 * 8192) / GiB)
    assert rec.layout == Layout(1, 2, 1, 2) or rec.layout.gpus_per_replica == 2
    assert rec.env["kv_gib_per_conversation_per_gpu"] == pytest.approx(2.625 / 2)
    assert rec.figures["conversations"] >= 16


def test_a_config_json_with_layer_types_is_read_as_sliding_window():
    """The fixture follows google/gemma-3-27b-it's config.json: layer_types name 52 sliding and 10 full layers."""
    m = model_from_config(DATA / "gemma-3-27b-it-config.json")
    assert (m.local_attention, m.local_window, m.local_layers) == ("sliding", 1024, 52)
    assert round(m.params_b, 1) == 27.0


def test_a_config_json_with_a_sliding_window_pattern_and_no_layer_types(tmp_path):
    """Older Gemma 3 configs state sliding_window_pattern 6 instead of layer_types."""
    raw = json.loads((DATA / "gemma-3-27b-it-config.json").read_text())
    del raw["text_config"]["layer_types"]
    raw["text_config"]["sliding_window_pattern"] = 6
    path = tmp_path / "config.json"
    path.write_text(json.dumps(raw))
    m = model_from_config(path)
    assert (m.local_attention, m.local_layers) == ("sliding", 52)


def test_a_qwen_config_with_use_sliding_window_false_has_full_attention(tmp_path):
    """Qwen2.5 configs carry sliding_window with use_sliding_window false: no layer is local."""
    raw = json.loads((DATA / "qwen3-8b-config.json").read_text())
    raw.update({"sliding_window": 131072, "use_sliding_window": False})
    path = tmp_path / "config.json"
    path.write_text(json.dumps(raw))
    assert model_from_config(path).local_attention == "none"


def test_cli_reads_the_sliding_window_config_and_runs_one_copy_per_card(cli):
    """8 users at 32k on two RTX PRO 6000: 12 conversations per card, so two copies, not TP 2."""
    code, out, err = cli(
        "recommend",
        "--model",
        str(DATA / "gemma-3-27b-it-config.json"),
        "--gpu",
        "RTX PRO 6000",
        "--gpus",
        "2",
        "--users",
        "8",
        "--context",
        "32768",
        "--format",
        "json",
    )
    assert code == 0, err
    doc = json.loads(out)
    assert doc["layout"]["replicas"] == 2 and doc["layout"]["tp"] == 1
    assert doc["figures"]["kv_gib_per_conversation"] == pytest.approx(GEMMA_KV_32K, abs=1e-3)
    assert "kv-per-conversation-local" in json.dumps(doc["figure_traces"])
