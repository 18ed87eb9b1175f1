"""The generated plain-Python formulas are fresh and agree with the interpreted expressions."""

from __future__ import annotations

import random

from advisor.core.formulas import codegen
from advisor.core.formulas import generated as formulas_generated
from advisor.core.formulas.calc import Calculator


def test_generated_module_is_fresh():
    """Regenerate with `python -m advisor.core.formulas.codegen` after editing knowledge/formulas.yaml,
    and read the diff."""
    assert formulas_generated.SOURCE_HASH == codegen.source_hash()
    assert codegen.TARGET.read_text(encoding="utf-8") == codegen.render()


def test_generated_functions_match_the_interpreter(engine):
    calc = Calculator(engine.kb)
    rng = random.Random(11)
    for fid, f in calc.formulas.items():
        assert f.fast is not None, fid
        for _ in range(5):
            env = {name: rng.choice([None, 0, 1, 2, 3.5, 64, 1e9]) for name in sorted(f.expr.names)}
            assert f.fast(env) == f.expr.evaluate(env), (fid, env)
        if f.when is not None:  # a condition: the generated code decides only where every fact is known
            assert f.fast_when is not None, fid
            for _ in range(8):
                env = {name: rng.choice(_values(engine.kb.facts[name])) for name in sorted(f.when.names)}
                held = f.fast_when(env)
                assert held is None or held == (f.when.evaluate(env) is True), (fid, env)
                assert f.applies(env) == (f.when.evaluate(env) is True), (fid, env)


def _values(spec):
    """Values a fact of this type may hold, unknown included."""
    if spec.type == "bool":
        return [None, True, False]
    if spec.type == "enum":
        return [None, *spec.choices]
    if spec.type == "text":
        return [None, "", "x"]
    return [None, 0, 1, 2, 3.5, 64, 1e9]


def test_a_power_of_a_batch_size_is_computed_and_a_huge_one_refused_alike(engine):
    """The MoE weight read raises the chance that no token picks an expert to the batch's power: the
    generated code and the interpreter agree on large exponents (the sampled env above once drew a
    batch of 1e9 in a hash order the sorted names no longer depend on)."""
    calc = Calculator(engine.kb)
    f = calc.formulas["stage-weights-moe"]
    env = {name: 1 for name in f.expr.names}
    for batch, experts_per_tok, tp in ((256, 8, 1), (10**9, 8, 1), (10**9, 0, 10**9)):
        env.update(expert_batch=batch, experts_per_tok=experts_per_tok, n_experts=256, tp=tp, expert_fraction=0.9)
        assert f.fast(env) == f.expr.evaluate(env)
    env.update(expert_batch=256, experts_per_tok=8)
    assert f.expr.evaluate(env) is not None  # 0.97 ** 256 is a number, not a refusal


def test_generated_plan_is_fresh():
    """The one function of every layout formula is regenerated with the formulas, and runs exactly the
    calculator's layout formulas in its order."""
    from advisor.core.formulas import generated_plan

    assert generated_plan.SOURCE_HASH == codegen.source_hash()
    assert codegen.PLAN_TARGET.read_text(encoding="utf-8") == codegen.render_plan()


def test_the_generated_plan_computes_what_the_walked_plan_computes(engine):
    """Every candidate layout of clusters large enough to use the generated plan (dense and MoE, PCIe
    and NVLink, one node and many, serving and training, facts left unknown): the same facts and the
    same trace as walking the scenario's plan formula by formula."""
    from advisor.core.engine import Search
    from advisor.core.facts import scenario_facts
    from advisor.core.formulas import generated_plan
    from advisor.core.layouts import candidates, machine_of
    from advisor.inputs.scenario import build

    whens = {fid: f.when for fid, f in engine.calc.formulas.items() if f.when is not None}
    scenarios = [
        {"model": "llama-3.1-405b", "hardware": {"gpu": "h100-sxm", "gpus_per_node": 8, "nodes": 16}},
        {"model": "deepseek-v3", "hardware": {"gpu": "h200", "gpus_per_node": 8, "nodes": 4}},
        {"model": "qwen3-235b-a22b", "hardware": {"gpu": "l40s", "gpus_per_node": 8, "nodes": 2}},
        {"model": "llama 3.3 70b", "precision": "fp8", "hardware": {"gpu": "rtx pro 6000", "gpus_per_node": 8}},
        {
            "model": "llama 3.1 8b",
            "hardware": {"gpu": "h100-sxm", "gpus_per_node": 8, "nodes": 8},
            "workload": {"kind": "training"},
        },
    ]
    checked = 0
    for raw in scenarios:
        s = build(raw, engine.kb)
        env, _ = scenario_facts(s, engine.kb)
        trace: dict[str, str] = {}
        engine.calc.run(env, engine.calc.scenario_ids, trace)
        walk = engine.calc.runner(engine.calc.plan(env, engine.calc.layout_ids), 1)  # formula by formula
        for layout in candidates(machine_of(env), env["n_layers"] or 1, env["model_kind"] == "moe"):
            machine = machine_of(env)
            walked = engine.candidate(layout, env, trace, None, Search(walk, machine, []))
            one = engine.candidate(
                layout, env, trace, None, Search(lambda e, t: generated_plan.run_layout(e, t, whens), machine, [])
            )
            engine.complete(walked)
            engine.complete(one)
            assert one.env == walked.env, (raw["model"], layout)
            assert one.trace == walked.trace, (raw["model"], layout)
            checked += 1
    assert checked > 300
