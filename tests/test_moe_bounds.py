"""MoE decode bounds count each activated parameter once (issue: the dense part was counted twice,
53 GB per DeepSeek-V3 token instead of about 37 GB, which made every MoE bound 24-44 % low)."""

from __future__ import annotations

import json


def test_deepseek_v3_reads_its_37b_activated_parameters_per_token(cli):
    """ "How fast can one user go with DeepSeek-V3 on an 8 x H200 box?" The model card: 671B total,
    37B activated per token; the FP8 checkpoint is about one byte per parameter."""
    code, out, _ = cli(
        "recommend", "--model", "deepseek v3", "--gpu", "h200", "--gpus", "8", "--users", "1", "--goal", "latency",
        "--format", "json",
    )  # fmt: skip
    doc = json.loads(out)
    trace = doc["figure_traces"]["decode_tokens_per_s_upper_bound"]
    read_per_token = float(trace["with_numbers"].rsplit("/", 1)[1].replace(",", ""))
    assert 36e9 < read_per_token < 39e9
    assert doc["layout_label"] == "TP 8"
    assert 980 < doc["figures"]["decode_tokens_per_s_upper_bound"] < 1090  # 4,800 GB/s x 8 / ~37.1 GB
    assert doc["figures"]["one_user_tokens_per_s"] < doc["figures"]["decode_tokens_per_s_upper_bound"] / 2


def test_every_moe_bound_reads_the_activated_share_of_the_checkpoint(engine):
    from advisor.inputs.scenario import build

    for model in (m for m in engine.kb.models.values() if m.kind == "moe" and m.active_params_b):
        rec = engine.evaluate(build({"model": model.name, "hardware": {"gpu": "b200", "gpus_per_node": 8}}, engine.kb))
        env = rec.env
        share = env["active_weight_bytes"] / env["weights_bytes"]
        assert abs(share - model.active_params_b / model.params_b) < 1e-9, model.id
