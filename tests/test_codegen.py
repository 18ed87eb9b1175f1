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
