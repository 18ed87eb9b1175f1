"""The formulas as sympy expressions: for `advisor formulas`, the rule-base check and the tests.

The same parsed tree that `advisor.core.formulas.calc` evaluates is turned into sympy here, node by node, with
the fact table as the symbol table; exact constants become Rational. Importing this module imports
sympy (about 0.6 s), so nothing on the answer path does.
"""

from __future__ import annotations

import ast
from functools import cache

import sympy

from advisor.errors import ExpressionError
from advisor.kb.expr import Expression

_FUNCTIONS = {
    "max": sympy.Max,
    "min": sympy.Min,
    "ceil": sympy.ceiling,
    "floor": sympy.floor,
    "abs": sympy.Abs,
    "log": sympy.log,
}
_BINARY = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
    ast.Pow: lambda a, b: a**b,
    ast.Mod: lambda a, b: sympy.Mod(a, b),
    ast.FloorDiv: lambda a, b: sympy.floor(a / b),
}
_COMPARE = {
    ast.Lt: sympy.Lt,
    ast.LtE: sympy.Le,
    ast.Gt: sympy.Gt,
    ast.GtE: sympy.Ge,
    ast.Eq: sympy.Eq,
    ast.NotEq: sympy.Ne,
}


@cache
def symbol(name: str) -> sympy.Symbol:
    """The one symbol of a fact: real and non-negative, as every quantity here is."""
    return sympy.Symbol(name, real=True, nonnegative=True)


def to_sympy(e: Expression) -> sympy.Expr:
    """The sympy form of a parsed formula."""
    return _convert(e.tree, e.text)


def _convert(node: ast.expr, text: str) -> sympy.Expr:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return sympy.Integer(node.value) if isinstance(node.value, int) else sympy.Rational(str(node.value))
    if isinstance(node, ast.Name):
        return symbol(node.id)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_convert(node.operand, text)
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        return _BINARY[type(node.op)](_convert(node.left, text), _convert(node.right, text))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCTIONS:
        return _FUNCTIONS[node.func.id](*(_convert(a, text) for a in node.args))
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _COMPARE:
        return _COMPARE[type(node.ops[0])](_convert(node.left, text), _convert(node.comparators[0], text))
    raise ExpressionError(f"{ast.unparse(node)!r} has no symbolic form", where=text)
