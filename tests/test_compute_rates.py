"""Every card's compute is known, and an unknown is never zero (issue #24): each catalogue GPU carries a
dense tensor-core rate for every precision path it has, figures derived from the vendor's own by a
documented ratio are labelled so, the time to first token of the README's answer lies above the physical
floor (the prompt's FLOPs at the card's full rated rate), and `advisor rules check` refuses a formula that
answers 0 where a fact is unknown."""

from __future__ import annotations

import json
import subprocess
import sys

from advisor.core.engine import Engine
from advisor.core.facts import scenario_facts
from advisor.inputs.scenario import build
from advisor.kb.knowledge import FormulaSpec
from advisor.kb.schema import read
from advisor.rules_check import Report, check_unknown_as_zero
from tests.scenarios import README_FIRST


def test_every_card_has_a_dense_rate_for_each_tensor_path_it_has(engine: Engine) -> None:
    missing = []
    for g in engine.kb.gpus.values():
        paths = ["bf16"] + [p for p in ("fp8", "fp4") if getattr(g, p)]
        missing += [f"{g.id} {p}" for p in paths if getattr(g, f"tensor_tflops_{p}") is None]
        for p in paths:
            assert f"tensor_tflops_{p}" in g.cite, f"{g.id} {p} has no citation"
    assert not missing


def test_a_derived_rate_is_labelled_derived_where_it_enters_the_facts(engine: Engine) -> None:
    spark = build({"model": "gpt-oss-120b", "hardware": {"gpu": "dgx spark", "gpus_per_node": 1}}, engine.kb, where="t")
    facts, origins = scenario_facts(spark, engine.kb)
    assert facts["gpu_tflops"] == 125
    assert origins["gpu_tflops"].kind == "derived"
    h100 = build({"model": "llama 3.3 70b", "hardware": {"gpu": "h100 sxm", "gpus_per_node": 2}}, engine.kb, where="t")
    assert scenario_facts(h100, engine.kb)[1]["gpu_tflops"].kind == "catalogue"


def test_the_readme_answer_has_a_time_to_first_token_above_the_physical_floor(engine: Engine) -> None:
    command = [sys.executable, "-m", "advisor", *README_FIRST, "--format", "json"]
    out = subprocess.run(command, capture_output=True, text=True, check=True)
    figures = json.loads(out.stdout)["figures"]
    g = engine.kb.gpus["rtx-pro-6000-ws"]
    params = 70.6e9  # Llama 3.3 70B
    prompt = 2000  # the default prompt the answer assumes
    floor_ms = 2 * params * prompt / (2 * g.tensor_tflops_fp8 * 1e12) * 1000
    assert figures["ttft_ms"] > floor_ms


def _formula(expr: str, when: str) -> FormulaSpec:
    entry = {
        "id": "compute-unknown",
        "result": "stage_dense_compute_ms",
        "expr": expr,
        "when": when,
        "unit": "ms",
        "kind": "estimate",
        "title": {"en": "t", "de": "t"},
        "assumptions": {"en": "a", "de": "a"},
        "cite": {"source": "advisor-derivation", "locator": "x"},
    }
    return read(FormulaSpec, entry, "test")


def test_the_rules_check_refuses_a_formula_that_reads_an_unknown_as_zero() -> None:
    report = Report()
    check_unknown_as_zero(_formula("0", "not known(gpu_tflops)"), report)
    assert [p for p in report.problems if "gpu_tflops is unknown" in str(p)]


def test_the_rules_check_keeps_a_zero_that_a_known_fact_decides() -> None:
    report = Report()
    check_unknown_as_zero(_formula("0", "tp == 1"), report)
    assert not report.problems
