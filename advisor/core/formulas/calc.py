"""Evaluating the formulas of knowledge/formulas.yaml over facts, and showing them with numbers.

Each formula's text is parsed once into the expression tree of `advisor.kb.expr`; the same tree is
evaluated here and turned into a sympy expression by `advisor.core.formulas.symbolic` (for `advisor formulas`,
the rule-base check and the tests), so the shown formula and the computed number cannot drift
apart. Nothing here imports sympy: the answer path stays fast.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from advisor.errors import KnowledgeError
from advisor.i18n import Message, Text
from advisor.kb.expr import Expression, Form, parse
from advisor.kb.knowledge import FormulaSpec, Knowledge
from advisor.kb.paths import knowledge_dir
from advisor.structs import Struct

if TYPE_CHECKING:
    import ast

_INFINITE = (float("inf"), float("-inf"))
# Candidate layouts from which a search runs the generated plan (one function of every layout formula)
# instead of walking the scenario's plan: importing it costs about 1 ms, and it saves about 19 µs per layout
# (measured on the 1,024-GPU search: 844 layouts walked in 50 ms, run in 34 ms)
WORTH_ONE_FUNCTION = 64


class Planned(NamedTuple):
    """One formula of a scenario's plan: its result, id, evaluator, and the per-layout condition."""

    result: str
    fid: str
    evaluate: Callable[[Mapping[str, Any]], Any]
    when: Expression | None
    fast_when: Callable[[Mapping[str, Any]], Any] | None = None


class Formula(Struct):
    """A formula ready to evaluate: its specification, parsed expression and condition."""

    spec: FormulaSpec
    expr: Expression
    when: Expression | None
    fast: Callable[[Mapping[str, Any]], Any] | None = None
    fast_when: Callable[[Mapping[str, Any]], Any] | None = None  # the condition as generated Python
    rendered: str | None = None  # the template, where the generated module holds it for this very text

    @property
    def inputs(self) -> frozenset[str]:
        """Every fact the formula reads, its condition included."""
        return self.expr.names | (self.when.names if self.when else frozenset())

    def applies(self, env: Mapping[str, Any]) -> bool:
        """Whether the condition holds (an unknown condition does not): decided by the generated code
        where every fact it reads is known, else by the three-valued interpreter."""
        if self.when is None:
            return True
        if self.fast_when is not None:
            holds = self.fast_when(env)
            if holds is not None:
                return bool(holds)
        return self.when.evaluate(env) is True

    def compute(self, env: Mapping[str, Any]) -> Any:
        """The value, or None when an input is unknown or the arithmetic is undefined."""
        value = self.fast(env) if self.fast is not None else self.expr.evaluate(env)
        if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
            return None
        return value

    @cached_property
    def _template(self) -> str:
        return self.rendered if self.rendered is not None else render_tree(self.expr.tree, placeholders=True)

    @cached_property
    def _text(self) -> str:
        if "{" in self.expr.text or "}" in self.expr.text:
            return f"{self.spec.result} = {render_tree(self.expr.tree)}"
        # Without braces in the source, the only braces of the template are the placeholders': the
        # plain text is the template without them, one rendering of the tree instead of two.
        return f"{self.spec.result} = {self._template.replace('{', '').replace('}', '')}"

    def text(self) -> str:
        """The formula with symbol names: `kv_bytes_per_token = 2 × n_layers × ...`."""
        return self._text

    def numbers(self, env: Mapping[str, Any]) -> Message:
        """The same formula with the values from `env` in place of the names, for any language."""
        return Message(Text.same(self._template), {n: env.get(n) for n in sorted(self.expr.names)})

    def with_numbers(self, env: Mapping[str, Any], lang: str = "en") -> str:
        """The formula with the numbers, as `lang` writes them."""
        return self.numbers(env).render(lang)


def _placeholders(node: ast.expr) -> ast.expr:
    """A copy of the tree with every name but a called function's written as `{name}`; the parsed tree
    is shared by the formula and stays as it is. Rebuilt node by node: a deep copy costs about twice
    as much, and the JSON answer renders about a hundred formulas."""
    import ast

    if isinstance(node, ast.Name):
        return ast.Name(id="{" + node.id + "}", ctx=ast.Load())
    if isinstance(node, ast.Call):
        return ast.Call(func=node.func, args=[_placeholders(a) for a in node.args], keywords=node.keywords)
    fields: dict[str, Any] = {}
    for name, value in ast.iter_fields(node):
        if isinstance(value, ast.expr):
            value = _placeholders(value)
        elif isinstance(value, list):
            value = [_placeholders(v) if isinstance(v, ast.expr) else v for v in value]
        fields[name] = value
    return type(node)(**fields)


def render_tree(tree: ast.expr, placeholders: bool = False) -> str:
    """A formula's tree as the trace writes it (`^`, `×`); with `placeholders`, names as `{name}`."""
    import ast

    text = ast.unparse(_placeholders(tree) if placeholders else tree)
    return text.replace(" ** ", "^").replace(" * ", " × ")


class Calculator:
    """All formulas in dependency order, split into scenario-wide and per-layout ones."""

    def __init__(self, kb: Knowledge, formulas_hash: str | None = None) -> None:
        """`formulas_hash`: the hash of the knowledge's formulas.yaml where the caller has it (the load
        cache keeps it), else it is worked out here."""
        known = set(kb.facts)
        self.layout_facts = {n for n, spec in kb.facts.items() if spec.kind == "layout"}
        fast, self._conditions, checked, templates, when_forms = _generated(kb, formulas_hash)
        self._generated = bool(fast)  # the generated modules were made from these very formulas
        self.formulas: dict[str, Formula] = {}
        for spec in kb.formulas.values():
            where = f"{spec.where} formula {spec.id}"
            if spec.result not in known:
                raise KnowledgeError(f"result {spec.result!r} is not in the fact table", where=where)
            names = checked.get(spec.id)
            if names is not None and known.issuperset(names[0]) and known.issuperset(names[1]):
                # checked when the module was generated from this very file: parsed on first use
                expr = Expression.deferred(spec.expr, names[0])
                when = Expression.deferred(spec.when, names[1], form=when_forms.get(spec.id)) if spec.when else None
            else:
                expr = parse(spec.expr, known, where=where)
                when = parse(spec.when, known, where=where) if spec.when else None
            self.formulas[spec.id] = Formula(
                spec=spec,
                expr=expr,
                when=when,
                fast=fast.get(spec.id),
                fast_when=self._conditions.get(spec.id),
                rendered=templates.get(spec.id),
            )
        self.order = _topological(self.formulas)
        layout = set(self.layout_facts)
        self.layout_ids: list[str] = []
        for fid in self.order:
            f = self.formulas[fid]
            if f.inputs & layout:
                self.layout_ids.append(fid)
                layout.add(f.spec.result)
        per_layout = set(self.layout_ids)
        self.scenario_ids = [fid for fid in self.order if fid not in per_layout]
        self._planned: dict[str, tuple[Planned, Formula | None]] = {}
        self.layout_varying = frozenset(layout)  # the link facts and every result computed from them

    def needed(self, facts: Iterable[str], ids: list[str]) -> list[str]:
        """The formulas among `ids` that `facts` depend on (every formula that can produce one of them, and
        what its expression and condition read, recursively), in the order of `ids`."""
        producers: dict[str, list[str]] = {}
        for fid in ids:
            producers.setdefault(self.formulas[fid].spec.result, []).append(fid)
        todo, seen, found = list(facts), set(), set()
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            for fid in producers.get(name, ()):
                found.add(fid)
                todo += self.formulas[fid].inputs
        return [fid for fid in ids if fid in found]

    def plan(self, env: Mapping[str, Any], ids: Iterable[str]) -> list[Planned]:
        """The formulas `ids` for one scenario's candidate layouts: a condition that reads only scenario
        facts is decided here, once (the formula dropped where it does not hold); `when` stays only on
        the formulas whose condition must be checked per layout."""
        out = []
        for fid in ids:
            planned, decide = self._planned.get(fid) or self._plan_entry(fid)
            if decide is None or decide.applies(env):
                out.append(planned)
        return out

    def _plan_entry(self, fid: str) -> tuple[Planned, Formula | None]:
        """The formula as a plan holds it, and the formula whose scenario-wide condition `plan` decides
        (None: it has none, or its condition is checked per layout); kept for the next plan."""
        f = self.formulas[fid]
        per_layout = f.when is not None and bool(f.when.names & self.layout_varying)
        evaluate = f.fast if f.fast is not None else f.expr.evaluate
        when = f.when if per_layout else None
        planned = Planned(f.spec.result, fid, evaluate, when, self._conditions.get(fid) if when else None)
        entry = self._planned[fid] = (planned, f if f.when is not None and not per_layout else None)
        return entry

    def run_plan(self, env: dict[str, Any], plan: Iterable[Planned], trace: dict[str, str]) -> None:
        """Compute a plan (see `plan`) into `env`, as `run` does."""
        for result, fid, evaluate, when, fast_when in plan:
            if result in trace:
                continue
            if when is not None:
                holds = fast_when(env) if fast_when is not None else None
                if holds is None:  # a fact it reads is unknown: the three-valued interpreter decides
                    holds = when.evaluate(env) is True
                if not holds:
                    continue
            value = evaluate(env)
            if value.__class__ is float and (value != value or value in _INFINITE):
                value = None
            env[result] = value
            trace[result] = fid

    def runner(self, plan: list[Planned], layouts: int) -> Callable[[dict[str, Any], dict[str, str]], None]:
        """What computes `plan` for one layout's facts and trace: for a search over at least
        WORTH_ONE_FUNCTION layouts the generated module's one function of every layout formula, where it
        was generated from these formulas; else `run_plan`."""
        if layouts >= WORTH_ONE_FUNCTION:
            from advisor.core.formulas import generated, generated_plan

            fresh = self._generated and generated_plan.SOURCE_HASH == generated.SOURCE_HASH
            if fresh and generated_plan.LAYOUT_IDS == tuple(self.layout_ids):
                run, whens = generated_plan.run_layout, self._whens
                return lambda env, trace: run(env, trace, whens)
        return lambda env, trace: self.run_plan(env, plan, trace)

    @cached_property
    def _whens(self) -> dict[str, Expression]:
        """Each formula's condition by formula id, for the generated plan's interpreted fallback."""
        return {fid: f.when for fid, f in self.formulas.items() if f.when is not None}

    def run(self, env: dict[str, Any], ids: Iterable[str], trace: dict[str, str]) -> None:
        """Compute the formulas `ids` in order into `env`; `trace` maps each result to its formula."""
        for fid in ids:
            f = self.formulas[fid]
            result = f.spec.result
            if result in trace or not f.applies(env):
                continue
            env[result] = f.compute(env)
            trace[result] = fid

    def producer(self, fact: str, trace: Mapping[str, str]) -> Formula | None:
        """The formula that computed `fact` in a run, if any."""
        fid = trace.get(fact)
        return self.formulas.get(fid) if fid else None


def source_hash(root: Path | None = None) -> str:
    """The hash of knowledge/formulas.yaml the generated module must match."""
    from advisor.kb.cache import file_hash

    return file_hash((root or knowledge_dir()) / "formulas.yaml")


Generated = dict[str, Callable[..., Any]]


class _Generated(NamedTuple):
    functions: Generated
    conditions: Generated
    names: dict[str, tuple[tuple[str, ...], tuple[str, ...]]]
    templates: dict[str, str]
    when_forms: dict[str, Form]


def _generated(kb: Knowledge, formulas_hash: str | None = None) -> _Generated:
    """The generated plain-Python formulas and conditions, the names each formula and condition reads,
    each formula's template and each condition's checked form, if they were generated from this very
    formulas.yaml (whose hash is `formulas_hash` where the caller knows it)."""
    from advisor.core.formulas import generated as formulas_generated

    if formulas_hash is None:
        formulas_hash = source_hash(kb.root) if (kb.root / "formulas.yaml").is_file() else ""
    if formulas_hash != formulas_generated.SOURCE_HASH:
        return _Generated({}, {}, {}, {}, {})
    return _Generated(
        dict(formulas_generated.FUNCTIONS),
        dict(getattr(formulas_generated, "CONDITIONS", {})),
        dict(getattr(formulas_generated, "NAMES", {})),
        dict(getattr(formulas_generated, "TEMPLATES", {})),
        dict(getattr(formulas_generated, "WHEN_FORMS", {})),
    )


def _topological(formulas: Mapping[str, Formula]) -> list[str]:
    producers: dict[str, list[str]] = {}
    for fid, f in formulas.items():
        producers.setdefault(f.spec.result, []).append(fid)
    order: list[str] = []
    state: dict[str, int] = {}

    def visit(fid: str, path: tuple[str, ...]) -> None:
        if state.get(fid) == 2:
            return
        if state.get(fid) == 1:
            raise KnowledgeError("formulas depend on each other in a cycle: " + " -> ".join((*path, fid)))
        state[fid] = 1
        for name in sorted(formulas[fid].inputs):
            for dep in producers.get(name, []):
                if dep != fid:
                    visit(dep, (*path, fid))
        state[fid] = 2
        order.append(fid)

    for fid in formulas:
        visit(fid, ())
    return order
