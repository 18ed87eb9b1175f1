"""Every formula has a sympy form; the forms are what the sources say; the evaluator agrees with sympy."""

from __future__ import annotations

import random

import pytest
import sympy

from advisor.core.formulas.calc import Calculator
from advisor.core.formulas.symbolic import symbol, to_sympy


@pytest.fixture(scope="module")
def calc(engine):
    return Calculator(engine.kb)


def S(name: str) -> sympy.Symbol:
    return symbol(name)


def test_kv_cache_per_token_is_kv_heads_times_head_dim_not_hidden_size(calc):
    expr = to_sympy(calc.formulas["kv-per-token-gqa"].expr)
    assert sympy.simplify(expr - 2 * S("n_layers") * S("n_kv_heads") * S("head_dim") * S("kv_bytes")) == 0
    assert S("hidden") not in expr.free_symbols


def test_ring_factor_is_2_n_minus_1_over_n_exactly(calc):
    expr = to_sympy(calc.formulas["ring-factor"].expr)
    assert [expr.subs(S("tp"), n) for n in (2, 4, 8)] == [1, sympy.Rational(3, 2), sympy.Rational(7, 4)]


def test_both_bubble_definitions(calc):
    p, m = S("pp"), S("micro_batches")
    assert sympy.simplify(to_sympy(calc.formulas["bubble-megatron"].expr) - (p - 1) / m) == 0
    assert sympy.simplify(to_sympy(calc.formulas["bubble-gpipe"].expr) - (p - 1) / (m + p - 1)) == 0
    assert to_sympy(calc.formulas["bubble-gpipe"].expr).subs({p: 4, m: 8}) == sympy.Rational(3, 11)


def test_allreduce_bytes_are_two_per_layer_of_one_activation_vector(calc):
    expr = to_sympy(calc.formulas["allreduce-bytes"].expr)
    assert sympy.simplify(expr - 2 * S("n_layers") * S("hidden") * S("act_bytes")) == 0
    assert expr.subs({S("n_layers"): 80, S("hidden"): 8192, S("act_bytes"): 2}) == sympy.Rational(5, 2) * 2**20


def test_every_formula_has_a_symbolic_form_and_the_evaluator_matches_it(calc):
    rng = random.Random(7)
    for fid, f in calc.formulas.items():
        expr = to_sympy(f.expr)
        values = {name: rng.randint(2, 64) for name in f.expr.names}
        if fid in ("expert-fraction-moe",):
            values["params"] = values["expert_params"] * 2
        got = f.compute(values)
        want = expr.subs({S(k): v for k, v in values.items()})
        if isinstance(got, bool):
            assert bool(want) is got, fid
        else:
            assert float(want) == pytest.approx(got), fid
