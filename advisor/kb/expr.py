"""The small expression language of rule conditions and formulas.

Text is parsed with `ast` into a whitelisted tree and interpreted; it is never passed to `eval`.
Names must come from a declared table, so an unknown fact is a load error, not a silent False.
Evaluation uses three-valued logic: a missing fact (None) makes a comparison unknown, and
`unknown and False` is False, `unknown or True` is True, as in Kleene's logic; `known(x)` asks
whether a fact has a value at all.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from advisor.errors import ExpressionError

if TYPE_CHECKING:
    import ast

MAX_LENGTH = 600
MAX_DEPTH = 40

Env = Mapping[str, Any]
Node = Callable[[Env], Any]

# A checked tree as plain data (its "form"): what the interpreter runs. The load cache and the generated
# formulas module keep it, so that a start evaluates without `ast`, whose import alone is about a twentieth
# of a cold answer. ("const", value) | ("name", id) | ("tuple", items) | ("not", x) | ("neg", x)
# | ("and", parts) | ("or", parts) | ("bin", operator, left, right) | ("cmp", left, operators, rights)
# | ("known", x) | ("call", function, args); operators by their `ast` class name.
Form = tuple[Any, ...]

_BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "Add": lambda a, b: _numbers(operator.add, a, b),
    "Sub": operator.sub,
    "Mult": lambda a, b: _numbers(operator.mul, a, b),
    "Div": operator.truediv,
    "Pow": lambda a, b: power(a, b),
    "Mod": operator.mod,
    "FloorDiv": operator.floordiv,
}
_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "Eq": operator.eq,
    "NotEq": operator.ne,
    "Lt": operator.lt,
    "LtE": operator.le,
    "Gt": operator.gt,
    "GtE": operator.ge,
    "In": lambda a, b: a in b,
    "NotIn": lambda a, b: a not in b,
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


def _numbers(op: Callable[[Any, Any], Any], a: Any, b: Any) -> Any:
    """`op` on two numbers; a text or a list is refused (TypeError: the expression's None), so that no
    rule repeats a text a billion times ('a' * 10 ** 9 is a gigabyte)."""
    if isinstance(a, (str, bytes, tuple, list)) or isinstance(b, (str, bytes, tuple, list)):
        raise TypeError("arithmetic needs numbers, not text or a list")
    return op(a, b)


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

    __slots__ = ("text", "names", "_tree", "_runner", "_code", "_fast", "form")
    text: str
    names: frozenset[str]
    _tree: ast.expr | None
    _runner: Node | None
    _code: bytes | None
    _fast: Node | None
    form: Form | None  # the checked tree as data; None only for a deferred expression given without it

    def __init__(
        self,
        text: str,
        names: frozenset[str],
        tree: ast.expr | None = None,
        run: Node | None = None,
        code: bytes | None = None,
        form: Form | None = None,
    ) -> None:
        put = object.__setattr__  # frozen: set once here (a few hundred per start, so no loop)
        put(self, "text", text)
        put(self, "names", names)
        put(self, "_tree", tree)
        put(self, "_runner", run)
        put(self, "_code", code)
        put(self, "_fast", None)
        put(self, "form", form)

    @classmethod
    def deferred(
        cls, text: str, names: Iterable[str], code: bytes | None = None, form: Form | None = None
    ) -> Expression:
        """An expression checked earlier: with its `form` it is interpreted without parsing; with `code`
        (`advisor.kb.pyexpr.compiled`, from the load cache) it runs as Python wherever every fact it
        reads is known; without a form its text is parsed on first use."""
        return cls(text.strip(), frozenset(names), None, None, code, form)

    @property
    def tree(self) -> ast.expr:
        """The whitelisted syntax tree."""
        if self._tree is None:
            done = parse(self.text, self.names)
            object.__setattr__(self, "_tree", done._tree)
            if self.form is None:
                object.__setattr__(self, "form", done.form)
        assert self._tree is not None
        return self._tree

    def _build(self) -> None:
        if self.form is not None and self._tree is None:  # interpreted from its form: no parser needed
            object.__setattr__(self, "_runner", _run(self.form))
            return
        done = parse(self.text, self.names)
        object.__setattr__(self, "_tree", done._tree)
        object.__setattr__(self, "_runner", done._runner)
        object.__setattr__(self, "form", done.form)

    def evaluate(self, env: Env) -> Any:
        """The value over `env`; None when a fact it needs is unknown. Arithmetic errors give None."""
        if self._code is not None:
            fast = self._fast
            if fast is None:
                import marshal

                namespace = {**PY_GLOBALS, "Mapping": Mapping, "Any": Any}
                exec(marshal.loads(self._code), namespace)  # noqa: S102 - code compiled from the checked tree
                fast = namespace["run"]
                object.__setattr__(self, "_fast", fast)
            value = fast(env)
            if value is not None:
                return value
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


# The functions as the Python of advisor.kb.pyexpr names them; PY_GLOBALS holds them for that code.
PY_FUNCTIONS = {name: f"_fn_{name}" for name in FUNCTIONS}
PY_GLOBALS: dict[str, Any] = {"_power": power, **{PY_FUNCTIONS[k]: f for k, f in FUNCTIONS.items()}}


def parse(text: str, known: Iterable[str], *, where: str = "") -> Expression:
    """Parse `text`, allowing only the names in `known` and the functions in FUNCTIONS."""
    import ast

    if not isinstance(text, str) or not text.strip():
        raise ExpressionError("empty expression", where=where)
    if len(text) > MAX_LENGTH:
        raise ExpressionError(f"expression longer than {MAX_LENGTH} characters", where=where)
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as exc:
        raise ExpressionError(f"cannot parse {text!r}: {exc.msg}", where=where) from None
    names: set[str] = set()
    form = _form(tree, frozenset(known), names, where, 0)
    return Expression(text.strip(), frozenset(names), tree, _run(form), None, form)


def _form(node: ast.expr, known: frozenset[str], names: set[str], where: str, depth: int) -> Form:
    """The checked form of a syntax tree: every node, name, function and constant on the whitelist."""
    import ast

    if depth > MAX_DEPTH:
        raise ExpressionError(f"expression nested deeper than {MAX_DEPTH}", where=where)

    def sub(child: ast.expr) -> Form:
        return _form(child, known, names, where, depth + 1)

    if isinstance(node, ast.Constant):
        if not isinstance(node.value, (int, float, str, bool)) or node.value is None:
            raise ExpressionError(f"constant {node.value!r} is not allowed", where=where)
        return ("const", node.value)
    if isinstance(node, ast.Name):
        if node.id in ("true", "false"):
            return ("const", node.id == "true")
        if node.id not in known:
            from advisor.fuzzy import closest

            raise ExpressionError(f"unknown name {node.id!r}", where=where, hint=closest(node.id, known))
        names.add(node.id)
        return ("name", node.id)
    if isinstance(node, (ast.List, ast.Tuple)):
        return ("tuple", tuple(sub(e) for e in node.elts))
    if isinstance(node, ast.UnaryOp):
        if isinstance(node.op, ast.Not):
            return ("not", sub(node.operand))
        if isinstance(node.op, ast.USub):
            return ("neg", sub(node.operand))
        raise ExpressionError("only 'not' and '-' are allowed as unary operators", where=where)
    if isinstance(node, ast.BoolOp):
        return ("and" if isinstance(node.op, ast.And) else "or", tuple(sub(v) for v in node.values))
    if isinstance(node, ast.BinOp):
        op = type(node.op).__name__
        if op not in _BINARY:
            raise ExpressionError(f"operator {op} is not allowed", where=where)
        right_node = node.right
        for side in (node.left, right_node):
            if (isinstance(side, ast.Constant) and isinstance(side.value, str)) or isinstance(
                side, (ast.List, ast.Tuple)
            ):
                raise ExpressionError(
                    f"'{ast.unparse(node)}': arithmetic takes numbers, not text or a list", where=where
                )
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
        return ("bin", op, sub(node.left), sub(right_node))
    if isinstance(node, ast.Compare):
        ops = tuple(type(o).__name__ for o in node.ops)
        for op in ops:
            if op not in _COMPARE:
                raise ExpressionError(f"comparison {op} is not allowed", where=where)
        return ("cmp", sub(node.left), ops, tuple(sub(c) for c in node.comparators))
    if isinstance(node, ast.Call):
        if isinstance(node.func, ast.Name) and node.func.id == "known" and len(node.args) == 1 and not node.keywords:
            return ("known", sub(node.args[0]))
        if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS or node.keywords:
            raise ExpressionError(
                "only the functions " + ", ".join(sorted([*FUNCTIONS, "known"])) + " may be called", where=where
            )
        return ("call", node.func.id, tuple(sub(a) for a in node.args))
    raise ExpressionError(f"{type(node).__name__} is not allowed in an expression", where=where)


def _run(form: Form) -> Node:
    """The interpreter of a checked form: a tree of closures over the facts."""
    kind = form[0]
    if kind == "const":
        value = form[1]
        return lambda env: value
    if kind == "name":
        key = form[1]
        return lambda env: env.get(key)
    if kind == "tuple":
        items = [_run(e) for e in form[1]]
        return lambda env: tuple(i(env) for i in items)
    if kind == "not":
        operand = _run(form[1])
        return lambda env: _not(operand(env))
    if kind == "neg":
        negated = _run(form[1])
        return lambda env: None if (v := negated(env)) is None else -v
    if kind in ("and", "or"):
        parts = tuple(_run(v) for v in form[1])
        return _all_of(parts) if kind == "and" else _any_of(parts)
    if kind == "bin":
        arith, left, right = _BINARY[form[1]], _run(form[2]), _run(form[3])
        return lambda env: _arith(arith, left(env), right(env))
    if kind == "cmp":
        ops = [_COMPARE[o] for o in form[2]]
        first = _run(form[1])
        rest = [_run(c) for c in form[3]]
        if len(ops) == 1:
            op, second = ops[0], rest[0]
            if form[1][0] == "name" and form[3][0][0] == "const":
                key, const = form[1][1], form[3][0][1]
                return lambda env: None if (v := env.get(key)) is None else op(v, const)

            def compare_two(env: Env) -> Any:
                a, b = first(env), second(env)
                return None if a is None or b is None else op(a, b)

            return compare_two
        return lambda env: _compare(first(env), ops, [r(env) for r in rest])
    if kind == "known":
        inner = _run(form[1])
        return lambda env: inner(env) is not None
    if kind == "call":
        fn = FUNCTIONS[form[1]]
        args = [_run(a) for a in form[2]]
        return lambda env: _call(fn, [a(env) for a in args])
    raise ValueError(f"not an expression form: {kind!r}")


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
