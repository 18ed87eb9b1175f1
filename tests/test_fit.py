"""The fixed time per layer is fitted on InferenceX's rows, not set by hand (issue #24): the settings hold
what `python -m advisor.fit` computes from knowledge/fits/inferencex.csv, the fit moves the rows it was
made on towards their measurements, and one user's answer counts the term and says so."""

from __future__ import annotations

import pytest

from advisor import fit
from advisor.core.engine import Engine
from advisor.core.layouts import Layout
from advisor.inputs.scenario import build


@pytest.fixture(scope="module")
def points(engine: Engine) -> list[fit.Point]:
    return list(fit.points(engine, fit.rows(), fit.mapping()))


def test_the_settings_hold_the_fit_of_the_table(engine: Engine, points: list[fit.Point]) -> None:
    fitted = fit.fitted(points, int(fit.mapping()["fit_concurrency"]))
    assert set(fitted) == {"vllm", "sglang", "trtllm"}  # InferenceX's three frameworks
    assert fitted == engine.kb.settings["layer_overhead_ms"]


def test_most_low_concurrency_rows_land_within_a_quarter_of_their_measured_time_per_token(
    points: list[fit.Point],
) -> None:
    low = [p for p in points if p.concurrency <= 4]
    near = [p for p in low if 0.8 <= p.est_tpot_ms / p.tpot_ms <= 1.25]
    assert len(low) > 200 and len(near) / len(low) > 0.6


def test_one_user_of_gpt_oss_on_h200_pays_the_engines_time_per_layer(engine: Engine) -> None:
    raw = {
        "model": "gpt-oss-120b",
        "precision": "mxfp4",
        "hardware": {"gpu": "h200 sxm", "gpus_per_node": 1},
        "workload": {"concurrent_conversations": 1, "prompt_tokens": 900, "output_tokens": 900},
    }
    rec = engine.evaluate(build(raw, engine.kb, where="test"), only=Layout(1, 1, 1, 1), explained=False)
    env, per_layer = rec.env, engine.kb.settings["layer_overhead_ms"]["vllm"]
    reads_and_links = env["stage_mem_ms_one"] + env["stage_tp_ms_one"] + env["stage_ep_ms_one"]
    assert env["one_user_tpot_ms"] == pytest.approx(reads_and_links + env["n_layers"] * per_layer)
    assert env["n_layers"] * per_layer > 2  # 36 layers: about 2 ms of each token, as the low-load rows measure
