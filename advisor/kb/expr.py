"""The small expression language of rule conditions and formulas.

Text is parsed with `ast` into a whitelisted tree and interpreted; it is never passed to `eval`.
Names must come from a declared table, so an unknown fact is a load error, not a silent False.
Evaluation uses three-valued logic: a missing fact (None) makes a comparison unknown, and
`unknown and False` is False, `unknown or True` is True, as in Kleene's logic; `known(x)` asks
whether a fact has a value at all.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from advisor.errors import ExpressionError

MAX_LENGTH = 600
MAX_DEPTH = 40

Env = Mapping[str, Any]
Node = Callable[[Env], Any]

_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Pow: lambda a, b: power(a, b),
    ast.Mod: operator.mod,
    ast.FloorDiv: operator.floordiv,
}
_COMPARE: dict[type, Callable[[Any, Any], bool]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}


MAX_EXPONENT = 64  # for integer powers and constant exponents: 10**10**10 would run for hours and fill memory


def power(a: Any, b: Any) -> Any:
    """`a ** b` for operands that stay small: an integer power past MAX_EXPONENT is taken in floats, whose
    range bounds it (OverflowError, the expression's None), so a probability to the power of a batch
    size (0.97 ** 256) is computed while a huge integer never is."""
    if abs(a) > 10**12:
        raise OverflowError(f"{a!r} ** {b!r} is beyond what a rule may compute")
    if abs(b) > MAX_EXPONENT and abs(a) > 1:
        return float(a) ** float(b)
    return operator.pow(a, b)


def _divides(a: Any, b: Any) -> bool:
    return a != 0 and b % a == 0


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "min": min,
    "max": max,
    "ceil": math.ceil,
    "floor": math.floor,
    "abs": abs,
    "log": math.log,
    "divides": _divides,
}


class Expression:
    """A parsed, checked expression: its source text, the names it reads, and its evaluator.

    An expression checked before (`deferred`: read back from the load cache, or named by the generated
    formulas module) keeps only its text and names until it is first evaluated or its tree is asked
    for; a start that never evaluates it never parses it.
    """

    __slots__ = ("text", "names", "_tree", "_runner")
    text: str
    names: frozenset[str]
    _tree: ast.expr | None
    _runner: Node | None

    def __init__(self, text: str, names: frozenset[str], tree: ast.expr | None = None, run: Node | None = None) -> None:
        for slot, value in (("text", text), ("names", names), ("_tree", tree), ("_runner", run)):
            object.__setattr__(self, slot, value)

    @classmethod
    def deferred(cls, text: str, names: Iterable[str]) -> Expression:
        """An expression checked earlier, parsed on first use."""
        return cls(text.strip(), frozenset(names))

    @property
    def tree(self) -> ast.expr:
        """The whitelisted syntax tree."""
        if self._tree is None:
            self._build()
        assert self._tree is not None
        return self._tree

    def _build(self) -> None:
        done = parse(self.text, self.names)
        object.__setattr__(self, "_tree", done._tree)
        object.__setattr__(self, "_runner", done._runner)

    def evaluate(self, env: Env) -> Any:
        """The value over `env`; None when a fact it needs is unknown. Arithmetic errors give None."""
        run = self._runner
        if run is None:
            self._build()
            run = self._runner
            assert run is not None
        try:
            return run(env)
        except (ZeroDivisionError, OverflowError, TypeError, ValueError):
            return None

    def __eq__(self, other: object) -> bool:
        return other.__class__ is self.__class__ and (self.text, self.names) == (other.text, other.names)

    def __hash__(self) -> int:
        return hash((self.text, self.names))

    def __repr__(self) -> str:
        return f"Expression(text={self.text!r}, names={sorted(self.names)!r})"

    def __setattr__(self, name: str, value: Any) -> None:
        from advisor.structs import FrozenInstanceError

        raise FrozenInstanceError(f"cannot assign to field {name!r}")


def parse(text: str, known: Iterable[str], *, where: str = "") -> Expression:
    """Parse `text`, allowing only the names in `known` and the functions in FUNCTIONS."""
    if not isinstance(text, str) or not text.strip():
        raise ExpressionError("empty expression", where=where)
    if len(text) > MAX_LENGTH:
        raise ExpressionError(f"expression longer than {MAX_LENGTH} characters", where=where)
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as exc:
        raise ExpressionError(f"cannot parse {text!r}: {exc.msg}", where=where) from None
    known_set = frozenset(known)
    names: set[str] = set()
    run = _compile(tree, known_set, names, where, 0)
    return Expression(text.strip(), frozenset(names), tree, run)


def _compile(node: ast.expr, known: frozenset[str], names: set[str], where: str, depth: int) -> Node:
    if depth > MAX_DEPTH:
        raise ExpressionError(f"expression nested deeper than {MAX_DEPTH}", where=where)

    def sub(child: ast.expr) -> Node:
        return _compile(child, known, names, where, depth + 1)

    if isinstance(node, ast.Constant):
        if not isinstance(node.value, (int, float, str, bool)) or node.value is None:
            raise ExpressionError(f"constant {node.value!r} is not allowed", where=where)
        value = node.value
        return lambda env: value
    if isinstance(node, ast.Name):
        if node.id in ("true", "false"):
            flag = node.id == "true"
            return lambda env: flag
        if node.id not in known:
            from advisor.fuzzy import closest

            raise ExpressionError(f"unknown name {node.id!r}", where=where, hint=closest(node.id, known))
        names.add(node.id)
        key = node.id
        return lambda env: env.get(key)
    if isinstance(node, (ast.List, ast.Tuple)):
        items = [sub(e) for e in node.elts]
        return lambda env: tuple(i(env) for i in items)
    if isinstance(node, ast.UnaryOp):
        operand = sub(node.operand)
        if isinstance(node.op, ast.Not):
            return lambda env: _not(operand(env))
        if isinstance(node.op, ast.USub):
            return lambda env: None if (v := operand(env)) is None else -v
        raise ExpressionError("only 'not' and '-' are allowed as unary operators", where=where)
    if isinstance(node, ast.BoolOp):
        parts = tuple(sub(v) for v in node.values)
        return _all_of(parts) if isinstance(node.op, ast.And) else _any_of(parts)
    if isinstance(node, ast.BinOp):
        op = _BINARY.get(type(node.op))
        if op is None:
            raise ExpressionError(f"operator {type(node.op).__name__} is not allowed", where=where)
        right_node = node.right
        if isinstance(node.op, ast.Pow) and (
            (isinstance(right_node, ast.BinOp) and isinstance(right_node.op, ast.Pow))
            or (
                isinstance(right_node, ast.Constant)
                and isinstance(right_node.value, (int, float))
                and abs(right_node.value) > MAX_EXPONENT
            )
        ):
            raise ExpressionError(
                f"'**' takes an exponent of at most {MAX_EXPONENT}, and no power of a power", where=where
            )
        left, right = sub(node.left), sub(node.right)
        arith = op  # narrowed to not-None here; the closure would not see the narrowing of `op`
        return lambda env: _arith(arith, left(env), right(env))
    if isinstance(node, ast.Compare):
        ops = []
        for o in node.ops:
            compare = _COMPARE.get(type(o))
            if compare is None:
                raise ExpressionError(f"comparison {type(o).__name__} is not allowed", where=where)
            ops.append(compare)
        first = sub(node.left)
        rest = [sub(c) for c in node.comparators]
        if len(ops) == 1:
            op, second = ops[0], rest[0]
            if isinstance(node.left, ast.Name) and isinstance(node.comparators[0], ast.Constant):
                key, const = node.left.id, node.comparators[0].value
                return lambda env: None if (v := env.get(key)) is None else op(v, const)

            def compare_two(env: Env) -> Any:
                a, b = first(env), second(env)
                return None if a is None or b is None else op(a, b)

            return compare_two
        return lambda env: _compare(first(env), ops, [r(env) for r in rest])
    if isinstance(node, ast.Call):
        if isinstance(node.func, ast.Name) and node.func.id == "known" and len(node.args) == 1 and not node.keywords:
            inner = sub(node.args[0])
            return lambda env: inner(env) is not None
        if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS or node.keywords:
            raise ExpressionError(
                "only the functions " + ", ".join(sorted([*FUNCTIONS, "known"])) + " may be called", where=where
            )
        fn = FUNCTIONS[node.func.id]
        args = [sub(a) for a in node.args]
        return lambda env: _call(fn, [a(env) for a in args])
    raise ExpressionError(f"{type(node).__name__} is not allowed in an expression", where=where)


def _all_of(parts: tuple[Node, ...]) -> Node:
    """Kleene's `and` of `parts`, evaluated in order and stopping at the first false one (a loop, not a
    generator: rule conditions are evaluated for every candidate layout)."""

    def run(env: Env) -> Any:
        unknown = False
        for part in parts:
            v = part(env)
            if v is None:
                unknown = True
            elif not v:
                return False
        return None if unknown else True

    return run


def _any_of(parts: tuple[Node, ...]) -> Node:
    """Kleene's `or` of `parts`, stopping at the first true one."""

    def run(env: Env) -> Any:
        unknown = False
        for part in parts:
            v = part(env)
            if v is None:
                unknown = True
            elif v:
                return True
        return None if unknown else False

    return run


def _not(value: Any) -> Any:
    return None if value is None else not value


def _arith(op: Callable[[Any, Any], Any], a: Any, b: Any) -> Any:
    if a is None or b is None:
        return None
    return op(a, b)


def _compare(first: Any, ops: list[Callable[[Any, Any], bool]], rest: list[Any]) -> Any:
    left = first
    for op, right in zip(ops, rest, strict=False):
        if left is None or right is None:
            return None
        if not op(left, right):
            return False
        left = right
    return True


def _call(fn: Callable[..., Any], args: list[Any]) -> Any:
    if any(a is None for a in args):
        return None
    return fn(*args)
