"""The expression language as plain Python: where every fact an expression reads is known, Kleene's
logic is Boole's and the tree computes the same as Python. The generated formula modules
(advisor.core.formulas.codegen) and the rule conditions of the load cache run it as Python, and go to
the interpreter of advisor.kb.expr only where that gives None. Imported only where such code is written.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Mapping

from advisor.kb.expr import PY_FUNCTIONS, power


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
        if node.func.id == "known":  # every name is known here; what it wraps is still computed, as the
            return ast.Compare(  # interpreter computes it (arithmetic that fails makes the whole None)
                left=self.visit(node.args[0]), ops=[ast.IsNot()], comparators=[ast.Constant(value=None)]
            )
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
