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

    __slots__ = ("text", "names", "_tree", "_runner", "_code", "_fast")
    text: str
    names: frozenset[str]
    _tree: ast.expr | None
    _runner: Node | None
    _code: bytes | None
    _fast: Node | None

    def __init__(
        self,
        text: str,
        names: frozenset[str],
        tree: ast.expr | None = None,
        run: Node | None = None,
        code: bytes | None = None,
    ) -> None:
        put = object.__setattr__  # frozen: set once here (a few hundred per start, so no loop)
        put(self, "text", text)
        put(self, "names", names)
        put(self, "_tree", tree)
        put(self, "_runner", run)
        put(self, "_code", code)
        put(self, "_fast", None)

    @classmethod
    def deferred(cls, text: str, names: Iterable[str], code: bytes | None = None) -> Expression:
        """An expression checked earlier, parsed on first use; with `code` (`compiled`, from the load
        cache), evaluated as Python wherever every fact it reads is known, and parsed only where not."""
        return cls(text.strip(), frozenset(names), None, None, code)

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


# --- the same tree as plain Python ------------------------------------------------------------------
# Where every fact an expression reads is known, Kleene's logic is Boole's, and the tree computes the
# same as Python: the generated formula modules (advisor.core.formulas.codegen) and the rule conditions
# of the load cache run it as Python, and go to the interpreter above only where that gives None.

# the functions as the Python of `python_source` names them; PY_GLOBALS holds them
PY_FUNCTIONS = {name: f"_fn_{name}" for name in FUNCTIONS}
PY_GLOBALS: dict[str, Any] = {"_power": power, **{PY_FUNCTIONS[k]: f for k, f in FUNCTIONS.items()}}


class _Python(ast.NodeTransformer):
    def __init__(self, functions: Mapping[str, str]) -> None:
        self.names: list[str] = []
        self.functions = functions

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in ("true", "false"):
            return ast.Constant(value=node.id == "true")
        if node.id not in self.names:
            self.names.append(node.id)
        return ast.Name(id=f"v_{node.id}", ctx=ast.Load())

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.AST:  # True or False, as the interpreter's `and`/`or`
        return ast.BoolOp(op=node.op, values=[_as_bool(self.visit(v)) for v in node.values])

    def visit_List(self, node: ast.List) -> ast.AST:
        return ast.Tuple(elts=[self.visit(e) for e in node.elts], ctx=ast.Load())

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        if isinstance(node.op, ast.Pow):  # the interpreter's bounded power, not Python's unbounded one
            args = [self.visit(node.left), self.visit(node.right)]
            if all(isinstance(a, ast.Constant) for a in args):  # 2 ** 30: folded here, not on every call
                return ast.Constant(value=power(args[0].value, args[1].value))
            return ast.Call(func=ast.Name(id="_power", ctx=ast.Load()), args=args, keywords=[])
        return self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> ast.AST:
        assert isinstance(node.func, ast.Name)
        if node.func.id == "known":  # reached only where every name is known: it holds
            self.visit(node.args[0])
            return ast.Constant(value=True)
        args = [self.visit(a) for a in node.args]
        return ast.Call(func=ast.Name(id=self.functions[node.func.id], ctx=ast.Load()), args=args, keywords=[])


def _as_bool(node: ast.AST) -> ast.expr:
    """`node`, made True or False where it may be another value (a fact, a number)."""
    assert isinstance(node, ast.expr)
    boolean = isinstance(node, (ast.Compare, ast.BoolOp)) or (
        isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not)
    )
    if boolean or (isinstance(node, ast.Constant) and isinstance(node.value, bool)):
        return node
    return ast.Call(func=ast.Name(id="bool", ctx=ast.Load()), args=[node], keywords=[])


def python_source(tree: ast.expr, functions: Mapping[str, str] | None = None) -> tuple[str, list[str]]:
    """A whitelisted tree as one Python expression over locals `v_<name>`, computing what the interpreter
    computes where every name it reads is known; and those names, in order. `functions`: the Python
    name of each function (default PY_FUNCTIONS, which PY_GLOBALS defines)."""
    import copy

    tr = _Python(functions if functions is not None else PY_FUNCTIONS)
    body = tr.visit(ast.fix_missing_locations(ast.Expression(body=copy.deepcopy(tree))))
    return ast.unparse(body.body), tr.names


def function_source(name: str, tree: ast.expr, functions: Mapping[str, str] | None = None, wrap: str = "{}") -> str:
    """A function `name(env)` computing `tree` (`wrap` around it) as Python, None where a fact it reads is
    unknown or the arithmetic fails; its caller goes to the interpreter where it gives None."""
    source, names = python_source(tree, functions)
    lines = [f"def {name}(env: Mapping[str, Any]) -> Any:"]
    lines += [f'    v_{n} = env.get("{n}")' for n in names]
    if names:
        lines += ["    if " + " or ".join(f"v_{n} is None" for n in names) + ":", "        return None"]
    lines += [
        "    try:",
        f"        return {wrap.format(source)}",
        "    except (ZeroDivisionError, OverflowError, TypeError, ValueError):",
        "        return None",
    ]
    return "\n".join(lines) + "\n"


def compiled(tree: ast.expr) -> bytes:
    """The tree's Python function as marshalled code, for the load cache (`Expression.deferred`)."""
    import marshal

    return marshal.dumps(compile(function_source("run", tree), "<expression>", "exec"))


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
