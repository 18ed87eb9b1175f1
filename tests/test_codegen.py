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
            env = {name: rng.choice([None, 0, 1, 2, 3.5, 64, 1e9]) for name in f.expr.names}
            assert f.fast(env) == f.expr.evaluate(env), (fid, env)
