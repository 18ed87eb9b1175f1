"""The engine: one evaluation of the rules over the facts of a scenario and its candidate layouts.

Steps: scenario facts -> scenario formulas -> every candidate layout with its link facts and
layout formulas -> scenario facts that depend on layouts (does it fit one GPU?) -> layout rules on
every candidate (reject / discourage) -> the selection order of rules/selection.yaml picks one ->
findings of the scenario rules and of the chosen layout's rules, alternatives with why-not,
unknowns with the questions that settle them. Every step leaves a trace.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cache, cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from advisor.core.facts import Origin, scenario_facts
from advisor.core.formulas.calc import Calculator, Planned
from advisor.core.layouts import LAYOUT_NUMBERS, Layout, Machine, candidates, layout_numbers, link_facts, machine_of
from advisor.core.records import (
    NO_TEXT,
    Alternative,
    Assumption,
    Branch,
    FigureTrace,
    Finding,
    Firing,
    Recommendation,
    Unknown,
)
from advisor.errors import KnowledgeError
from advisor.i18n import Message, Text, label_text
from advisor.inputs.scenario import Scenario
from advisor.kb.knowledge import Knowledge
from advisor.kb.rules import SEVERITIES, Rule, RuleBase, SortKey
from advisor.structs import Struct, field, replace

if TYPE_CHECKING:
    from advisor.kb.cache import Hashes

CONTRACT_FIGURES = {
    "weights_gib": "weights_gib",
    "usable_gib_per_gpu": "usable_gib_per_gpu",
    "kv_gib_per_conversation": "kv_gib_per_conversation",
    "conversations": "conversations",
    "allreduce_count_per_token": "allreduce_count_per_token",
    "allreduce_mib_per_token": "allreduce_mib_per_token",
    "prefill_allreduce_ms": "prefill_allreduce_ms",
    "bubble_fraction": "bubble_fraction",
    "decode_tokens_per_s_upper_bound": "decode_tps_upper",
    "one_user_tokens_per_s": "one_user_tps",
    "tokens_per_s_per_user_at_load": "user_tps_at_load",
    "throughput_tokens_per_s": "throughput_tps",
    "ttft_ms": "ttft_ms",
    "train_state_gib_per_gpu": "train_state_gib_per_gpu",
    "grad_sync_s_per_step": "grad_allreduce_s",
    "train_step_s": "train_step_s",
}
ALTERNATIVE_FIGURES = (
    "conversations",
    "weights_gib_per_gpu",
    "prefill_allreduce_ms",
    "bubble_fraction",
    "decode_tps_upper",
    "one_user_tps",
    "user_tps_at_load",
    "throughput_tps",
    "ttft_ms",
    "train_state_gib_per_gpu",
    "grad_allreduce_s",
    "train_step_s",
)
MAX_ALTERNATIVES = 8
FROM_LAYOUTS = ("fits_one_gpu", "conversations_one_gpu", "replicas_conversations", "any_layout_fits", "min_gpus_to_fit")
# What the search reads of every candidate before it chooses (FROM_LAYOUTS are made of them): computed for
# every layout with what decides whether a rule rejects it; the other formulas only for the layouts that
# stay in the race or are shown (Engine.complete)
SCREENED = ("fits", "conversations_per_replica", "conversations")
# Facts the search sets on a candidate after its formulas ran: no layout formula may read them
AFTER_FORMULAS = (*FROM_LAYOUTS, "sharding_rank")
TRACE_DEPTH = 6  # how far "how did you get that" follows a figure's inputs
FINDING_DEPTH = TRACE_DEPTH  # a finding's figures show their formula with numbers; `how` follows the inputs


class ScopeResult(Struct, frozen=False):
    """What one scope's rules made of one set of facts."""

    findings: list[Finding] = field(default_factory=list)
    firings: list[Firing] = field(default_factory=list)
    undecided: list[Rule] = field(default_factory=list)


class Search(NamedTuple):
    """What a layout search shares across its candidates (`Engine._search`)."""

    run: Callable[[dict[str, Any], dict[str, str]], None]  # computes every layout formula into facts and trace
    machine: Machine
    screen: list[Planned]  # the formulas that decide rejection and the SCREENED facts


class Candidate(Struct, frozen=False):
    """One layout under evaluation: its facts, the formulas that made them, and the rules it triggered."""

    layout: Layout
    env: dict[str, Any]
    trace: dict[str, str]
    outcomes: dict[str, bool | None]
    rest: Callable[[Candidate], None] | None = None  # computes the formulas not yet run (Engine.complete)
    _fired: dict[tuple[str, int], list[Rule]] = field(default_factory=dict, repr=False)

    def fired(self, base: RuleBase, effect: str) -> list[Rule]:
        """The rules with `effect` that fired on this layout (kept while the outcomes are the same: the
        ranking asks for each candidate several times)."""
        key = (effect, len(self.outcomes))
        found = self._fired.get(key)
        if found is None:
            rules = base.rules
            found = [rules[r] for r, hit in self.outcomes.items() if hit and rules[r].effect == effect]
            self._fired[key] = found
        return found


class Engine:
    """The knowledge base, the rule base and the calculator, loaded once and used for any number of scenarios."""

    def __init__(self, kb: Knowledge, base: RuleBase, hashes: Hashes | None = None) -> None:
        """`hashes`: the hashes of the files the two were loaded from, where the load cache kept them."""
        self.kb = kb
        self.rules = base
        self._hashes = hashes
        self.calc = Calculator(kb, hashes.formulas if hashes is not None else None)
        self.layout_fact_names = self.calc.layout_facts
        self.layout_rules = base.in_scope("layout")
        self._scopes: dict[str, list[Rule]] = {}
        self.reads = {r.id: tuple(sorted(r.when.names)) for r in base.rules.values()}  # what a firing shows
        self.selecting_rules = [r for r in self.layout_rules if r.effect != "none"]
        self.rejecting_rules = [r for r in self.selecting_rules if r.effect == "reject"]
        screened = {n for r in self.rejecting_rules for n in r.when.names} | set(SCREENED)
        self.screen_ids = self.calc.needed(screened, self.calc.layout_ids)
        self.screen_set = frozenset(self.screen_ids)
        reads = screened.union(*(self.calc.formulas[fid].inputs for fid in self.screen_ids))
        results = {f.spec.result for f in self.calc.formulas.values()}
        placed = self.layout_fact_names - results - set(LAYOUT_NUMBERS) - set(AFTER_FORMULAS)  # `link_facts`'s own
        self.screen_reads_links = bool(reads & placed)
        late = sorted(fid for fid in self.calc.layout_ids if self.calc.formulas[fid].inputs & set(AFTER_FORMULAS))
        if late:
            raise KnowledgeError(
                f"layout formulas {', '.join(late)} read a fact the layout search sets after the formulas:"
                f" {', '.join(AFTER_FORMULAS)}"
            )

    from_cache = False  # set by `load`: whether the records came from the load cache

    @classmethod
    def load(cls, knowledge_root: Path | None = None, rules_root: Path | None = None, *, cached: bool = True) -> Engine:
        """Load knowledge and rules from their folders (default: the packaged ones), through the load cache
        of `advisor.kb.cache` unless `cached` is False; `from_cache` tells which it was."""
        from advisor.kb import cache

        kb, base, hashes, hit = cache.load(knowledge_root, rules_root, cached=cached)
        engine = cls(kb, base, hashes)
        engine.from_cache = hit
        return engine

    @property
    def rule_base_hash(self) -> str:
        """A short hash of the rule files, recorded in transcripts."""
        return self._file_hashes.rules

    @property
    def knowledge_hash(self) -> str:
        """A short hash of the knowledge files, recorded in transcripts."""
        return self._file_hashes.knowledge

    @cached_property
    def _file_hashes(self) -> Hashes:
        """The files' hashes: as the load cache kept them, else worked out from the files."""
        if self._hashes is not None:
            return self._hashes
        from advisor.kb.cache import hashes_of

        return hashes_of(self.kb, self.rules)

    # --- evaluation --------------------------------------------------------------------------

    def candidate(
        self,
        layout: Layout,
        env: Mapping[str, Any],
        trace: Mapping[str, str],
        known: Mapping[str, Any] | None = None,
        search: Search | None = None,
    ) -> Candidate:
        """Facts of one layout: the scenario's, its links' (or `known` ones read from the host), and the
        layout formulas' results; `search`: the scenario's `_search` over many layouts, made once for
        all of them. In a search only what decides rejection and the SCREENED facts are computed now,
        the rest by `complete`."""
        if search is None:
            search = self._search(env, 1)
        run, machine, screen = search
        lenv = dict(env)
        later_links = not self.screen_reads_links
        lenv.update(layout_numbers(layout, env) if later_links else link_facts(layout, env, machine=machine))
        if known:
            lenv.update(known)
        ltrace = dict(trace)
        self.calc.run_plan(lenv, screen, ltrace)

        def rest(c: Candidate) -> None:
            if later_links:
                c.env.update(link_facts(layout, env, machine=machine))
                if known:
                    c.env.update(known)
            run(c.env, c.trace)

        return Candidate(layout, lenv, ltrace, {}, rest)

    def _search(self, env: Mapping[str, Any], layouts: int) -> Search:
        """For a search over `layouts` layouts of the scenario `env`: what computes the layout formulas
        (`Calculator.runner`), the machine, and the screening part of the plan."""
        plan = self.calc.plan(env, self.calc.layout_ids)
        return Search(self.calc.runner(plan, layouts), machine_of(env), [p for p in plan if p.fid in self.screen_set])

    def _screen(self, cands: list[Candidate], sources: list[Mapping[str, Any]], racing: bool) -> None:
        """Each candidate with the scenario facts its layouts gave (`sources`, one per candidate) and its
        rejecting rules decided; where `racing` and none rejects it, every layout figure computed."""
        for c, source in zip(cands, sources, strict=True):
            for name in FROM_LAYOUTS:
                c.env[name] = source[name]
            c.outcomes = {r.id: r.when.evaluate(c.env) for r in self.rejecting_rules}
            if racing and not any(c.outcomes.values()):  # still in the race: every figure counts
                self.complete(c)

    def complete(self, c: Candidate) -> Candidate:
        """`c` with every layout formula computed and every selecting rule decided; only once the search
        has set FROM_LAYOUTS on it."""
        if c.rest is not None:
            rest, c.rest = c.rest, None
            rest(c)
        if len(c.outcomes) < len(self.selecting_rules):
            c.outcomes.update({r.id: r.when.evaluate(c.env) for r in self.selecting_rules if r.id not in c.outcomes})
        return c

    def evaluate(
        self,
        s: Scenario,
        lang: str = "en",
        only: Layout | None = None,
        known: Mapping[str, Any] | None = None,
        known_origin: Mapping[str, Origin] | None = None,
        search: bool = True,
        explained: bool = True,
    ) -> Recommendation:
        """The recommendation for a scenario; with `only`, the evaluation of that one layout; `known`
        facts (read from a host by the audit) replace what the advisor would otherwise assume. With
        `only` and `search=False`, only the layouts needed for the scenario facts are evaluated (the
        smallest fit is then found among pipelines, which never need more GPUs than TP) and no
        alternatives are listed (a fleet audit shows none). `explained=False`
        leaves out what only a reader needs (the findings' figure traces, the alternatives, the launch
        lines): the answer and its findings are the same, for comparing answers (the assumptions)."""
        env, origin = scenario_facts(s, self.kb)
        if known:
            env.update({k: v for k, v in known.items() if self.kb.facts.get(k) and self.kb.facts[k].kind != "layout"})
            origin.update(known_origin or {})
        shardings = self._shardings(env, origin) if only is None else ()
        base_env = dict(env)
        trace: dict[str, str] = {}
        self.calc.run(env, self.calc.scenario_ids, trace)
        moe = env["model_kind"] == "moe"
        if only is not None and not search:
            total = env["total_gpus"]
            pipelines = [Layout(1, 1, g) for g in range(1, min(total, env["n_layers"] or 1) + 1)]
            layouts = list(dict.fromkeys([only, Layout(total, 1, 1), *pipelines]))
        else:
            layouts = list(candidates(machine_of(env), env["n_layers"] or 1, moe))
        if only is not None:
            layouts = [only] + [x for x in layouts if x != only]
        layout_known = {k: v for k, v in (known or {}).items() if k in self.layout_fact_names}
        if shardings:
            groups, cands = self._sharded_candidates(base_env, env, trace, layouts, shardings)
        else:
            shared = self._search(env, len(layouts))
            cands = [self.candidate(x, env, trace, layout_known if x == only else None, shared) for x in layouts]
            rank = self._sharding_rank(env.get("sharding")) if env.get("workload_kind") == "training" else None
            for c in cands:
                c.env["sharding_rank"] = rank
        self._scenario_from_layouts(env, cands, origin)
        if shardings:  # does one GPU per copy hold it, and the smallest copy: under each sharding its own
            own = {sharding: self._from_group(cands, sharding, env) for sharding in groups}
        # one layout asked for and none listed: the others only gave the scenario facts, and race for nothing
        racing = search or only is None
        self._screen(cands, [own[c.layout.sharding] for c in cands] if shardings else [env] * len(cands), racing)
        order = self._order(env)
        chosen, dropped = self._rank(cands, order) if racing else (None, {})
        if only is not None:
            chosen = self.complete(cands[0])
        chosen_sharding: Assumption | None = None
        if shardings and chosen is not None:
            env, trace = groups[chosen.layout.sharding]
            env.update(own[chosen.layout.sharding])
            chosen_sharding = self._sharding_assumption(chosen, cands, order)
        if chosen is not None:
            chosen.outcomes.update({r.id: r.when.evaluate(chosen.env) for r in self.layout_rules if r.effect == "none"})
        rec = self._result(
            s, env, trace, chosen, cands, origin, explained, asked=only is not None, listed=search, dropped=dropped
        )
        if known is None:  # an audit's facts come from the host: nothing there is tried otherwise
            rec.assumption_builder = self._assumption_builder(s, rec, only, chosen_sharding)
        return rec.in_lang(lang)

    def _assumption_builder(
        self, s: Scenario, rec: Recommendation, only: Layout | None, chosen: Assumption | None = None
    ) -> Callable[[], list[Assumption]]:
        """The assumptions of `rec`, found on first use and kept (every language's copy shares them);
        `chosen`: the sharding the advisor chose where the user named none, listed first."""

        @cache
        def build() -> list[Assumption]:
            from advisor.core.assumptions import find_assumptions

            readers, units = self._readers_and_units
            found = find_assumptions(
                self.kb, s, rec, lambda other: self.evaluate(other, only=only, explained=False), readers, units
            )
            return [chosen, *found] if chosen is not None else found

        return build

    # --- the training sharding, where the user named none ----------------------------------------

    def _shardings(self, env: Mapping[str, Any], origin: Mapping[str, Origin]) -> tuple[str, ...]:
        """The shardings to try with every layout: all of the field's choices for a training job whose
        sharding the user did not state; none otherwise (the stated or scenario value stands)."""
        if env.get("workload_kind") != "training" or origin.get("sharding", Origin("input")).state != "default":
            return ()
        spec = self.kb.facts.get("sharding")
        return tuple(spec.choices) if spec is not None else ()

    def _from_group(self, cands: list[Candidate], sharding: str, env: Mapping[str, Any]) -> dict[str, Any]:
        """The layout-search facts (FROM_LAYOUTS) under one sharding; whether any layout fits is over all."""
        out: dict[str, Any] = {"total_gpus": env["total_gpus"]}
        self._scenario_from_layouts(out, [c for c in cands if c.layout.sharding == sharding], {})
        out["any_layout_fits"] = env["any_layout_fits"]
        return {name: out[name] for name in FROM_LAYOUTS}

    def _sharding_rank(self, sharding: Any) -> int | None:
        """How much of the state a sharding divides: its place among the field's choices (simplest first)."""
        spec = self.kb.facts.get("sharding")
        return spec.choices.index(sharding) if spec is not None and sharding in spec.choices else None

    def _sharded_candidates(
        self,
        base_env: Mapping[str, Any],
        env: dict[str, Any],
        trace: dict[str, str],
        layouts: list[Layout],
        shardings: tuple[str, ...],
    ) -> tuple[dict[str, tuple[dict[str, Any], dict[str, str]]], list[Candidate]]:
        """Every layout under every sharding: the scenario facts of each sharding (the stated default's are
        `env`), and a candidate for each pair, its layout naming the sharding."""
        groups: dict[str, tuple[dict[str, Any], dict[str, str]]] = {}
        cands: list[Candidate] = []
        for sharding in shardings:
            if sharding == env.get("sharding"):
                senv, strace = env, trace
            else:
                senv, strace = {**base_env, "sharding": sharding}, {}
                self.calc.run(senv, self.calc.scenario_ids, strace)
            groups[sharding] = (senv, strace)
            shared = self._search(senv, len(layouts))
            rank = self._sharding_rank(sharding)
            for x in layouts:
                c = self.candidate(replace(x, sharding=sharding), senv, strace, None, shared)
                c.env["sharding_rank"] = rank
                cands.append(c)
        return groups, cands

    def _sharding_assumption(self, chosen: Candidate, cands: list[Candidate], order: str) -> Assumption:
        """The chosen sharding as an assumption of the result: the user did not say; beside it, the best
        layout under each other sharding with its estimated step time (none: nothing fits)."""
        from advisor.core.assumptions import chosen_assumption

        branches = []
        for sharding in dict.fromkeys(c.layout.sharding for c in cands):
            if sharding == chosen.layout.sharding:
                continue
            best, _ = self._rank([c for c in cands if c.layout.sharding == sharding], order)
            branches.append(
                Branch(
                    value=sharding,
                    layout=best.layout if best else None,
                    figure="train_step_s" if best else None,
                    figure_value=_round(best.env.get("train_step_s")) if best else None,
                    assumed_value=_round(chosen.env.get("train_step_s")) if best else None,
                    unit="s" if best else None,
                )
            )
        return chosen_assumption(self.kb, "sharding", chosen.layout.sharding, branches)

    @property
    def figure_units(self) -> dict[str, str | None]:
        """Each contract figure's unit, by figure name."""
        return self._readers_and_units[1]

    @cached_property
    def _readers_and_units(self) -> tuple[dict[str, frozenset[str]], dict[str, str | None]]:
        """Each formula's inputs by id, and each contract figure's unit."""
        readers = {fid: f.inputs for fid, f in self.calc.formulas.items()}
        units = {out: spec.unit for out, name in CONTRACT_FIGURES.items() if (spec := self.kb.facts.get(name))}
        return readers, units

    def _scenario_from_layouts(self, env: dict[str, Any], cands: list[Candidate], origin: dict[str, Origin]) -> None:
        one = next((c for c in cands if c.layout.bare() == Layout(env["total_gpus"], 1, 1)), None)
        fits = [c for c in cands if c.env.get("fits")]
        env["fits_one_gpu"] = bool(one and one.env.get("fits"))
        env["conversations_one_gpu"] = one.env.get("conversations_per_replica") if one else None
        env["replicas_conversations"] = one.env.get("conversations") if one else None
        env["any_layout_fits"] = bool(fits)
        env["min_gpus_to_fit"] = min((c.layout.gpus_per_instance for c in fits), default=None)
        for name in FROM_LAYOUTS:
            origin[name] = Origin("derived", "layout search")

    def _order(self, env: Mapping[str, Any]) -> str:
        return "training" if env.get("workload_kind") == "training" else str(env.get("goal") or "throughput")

    def _score(self, c: Candidate, k: SortKey) -> float:
        """The candidate's value on one key, signed so that higher is better (unknown: worst)."""
        value = len(c.fired(self.rules, "discourage")) if k.fact == "discouraged" else c.env.get(k.fact)
        if value is None:
            return float("-inf")
        return float(value) if k.better == "high" else -float(value)

    def _sort_key(self, c: Candidate, order: str) -> tuple[Any, ...]:
        key = [-self._score(c, k) for k in self.rules.selection.get(order, ())]
        return (*key, -c.layout.replicas, c.layout.pp, c.layout.ep)

    def _rank(self, cands: list[Candidate], order: str) -> tuple[Candidate | None, dict[int, int]]:
        """The chosen layout, and for every candidate the index of the key it lost on (the number of keys:
        it lost only the final tie-break). Each key keeps the layouts best on it, or within its tolerance
        of the best, and hands them to the next key; a tie goes to more copies, fewer stages, less EP."""
        keys = self.rules.selection.get(order, ())
        pool = [c for c in cands if not c.fired(self.rules, "reject")]
        dropped: dict[int, int] = {}
        for i, k in enumerate(keys):
            if len(pool) < 2:
                break
            scores = [self._score(c, k) for c in pool]
            best = max(scores)
            floor = best - k.tolerance * abs(best) if abs(best) != float("inf") else best
            kept = []
            for c, score in zip(pool, scores, strict=True):
                if score >= floor:
                    kept.append(c)
                else:
                    dropped[id(c)] = i
            pool = kept
        chosen = min(pool, key=lambda c: (-c.layout.replicas, c.layout.pp, c.layout.ep)) if pool else None
        for c in pool:
            dropped.setdefault(id(c), len(keys))
        return chosen, dropped

    # --- building the result -----------------------------------------------------------------

    def _result(
        self,
        s: Scenario,
        env: dict[str, Any],
        trace: dict[str, str],
        chosen: Candidate | None,
        cands: list[Candidate],
        origin: dict[str, Origin],
        explained: bool = True,
        asked: bool = False,
        listed: bool = True,
        dropped: dict[int, int] | None = None,
    ) -> Recommendation:
        from advisor.core.launch_lines import launch_commands

        final_env = chosen.env if chosen else env
        final_trace = chosen.trace if chosen else trace
        findings: list[Finding] = []
        firings: list[Firing] = []
        undecided: list[tuple[Rule, Mapping[str, Any]]] = []
        scope = self.evaluate_scope("scenario", env, trace, origin, traced=explained)
        findings += scope.findings
        firings += scope.firings
        undecided += [(rule, env) for rule in scope.undecided]
        if chosen is not None:
            for rule in self.layout_rules:
                outcome = chosen.outcomes.get(rule.id)
                firings.append(
                    Firing(rule.id, outcome, {n: chosen.env.get(n) for n in self.reads[rule.id]}, chosen.layout)
                )
                if outcome:
                    findings.append(self.finding(rule, chosen.env, chosen.trace, origin, chosen.layout, explained))
                elif outcome is None:
                    undecided.append((rule, chosen.env))
        findings.sort(key=lambda f: (-SEVERITIES.index(f.severity), f.rule))
        figures = {
            out: _round(final_env.get(name)) if name in final_env and (chosen or name in env) else None
            for out, name in CONTRACT_FIGURES.items()
        }

        def traces() -> dict[str, FigureTrace]:
            return {
                out: self.figure(name, final_env, final_trace, origin)
                for out, name in CONTRACT_FIGURES.items()
                if figures.get(out) is not None
            }

        return Recommendation(
            input=s.data,
            layout=chosen.layout if chosen else None,
            figures=figures,
            alternatives=self._alternatives(chosen, cands, env, asked=asked, dropped=dropped)
            if explained and listed
            else [],
            findings=findings,
            unknowns=self._assumed_unknowns(env, origin) + self._unknowns(undecided),
            launch=launch_commands(s, chosen.layout, chosen.env, self.kb) if chosen and explained else {},
            firings=firings,
            trace_builder=traces,
            env=final_env,
            trace=final_trace,
            rule_base_hash=self.rule_base_hash,
            knowledge_hash=self.knowledge_hash,
            input_states={n: o.state for n, o in origin.items() if (f := self.kb.facts.get(n)) and f.kind == "input"},
        )

    def evaluate_scope(
        self,
        scope: str,
        env: Mapping[str, Any],
        trace: Mapping[str, str] | None = None,
        origin: Mapping[str, Origin] | None = None,
        layout: Layout | None = None,
        traced: bool = True,
    ) -> ScopeResult:
        """Every rule of `scope` (scenario, audit, sizing) on one set of facts: a firing for each rule,
        the finding of each that fired, and the rules that could not be decided."""
        out = ScopeResult()
        rules = self._scopes.get(scope)
        if rules is None:
            rules = self._scopes[scope] = self.rules.in_scope(scope)
        reads, get = self.reads, env.get
        for rule in rules:
            outcome = rule.when.evaluate(env)
            out.firings.append(Firing(rule.id, outcome, {n: get(n) for n in reads[rule.id]}, layout))
            if outcome:
                out.findings.append(self.finding(rule, env, trace or {}, origin or {}, layout, traced))
            elif outcome is None:
                out.undecided.append(rule)
        return out

    def finding(
        self,
        rule: Rule,
        env: Mapping[str, Any],
        trace: Mapping[str, str],
        origin: Mapping[str, Origin],
        layout: Layout | None,
        traced: bool = True,
    ) -> Finding:
        """A fired rule for people: its texts as messages over the facts, figures traced to formulas
        (`traced=False`: without the figures, where only the finding itself is compared)."""
        return Finding(
            rule=rule.id,
            severity=rule.severity,
            topics=rule.topics,
            title_text=Message.of(rule.title, env),
            explanation_text=Message.of(rule.explain, env),
            fix_text=Message.of(rule.fix, env) if rule.fix else None,
            verify_text=tuple(Message.of(Text.same(v), env) for v in rule.verify),
            sources=rule.cite,
            figures=tuple(self.figure(name, env, trace, origin, depth=FINDING_DEPTH) for name in rule.figures)
            if traced
            else (),
            facts={n: env.get(n) for n in self.reads[rule.id]},
            layout=layout.label() if layout else None,
            conflicts=rule.conflicts,
        )

    def figure(
        self,
        name: str,
        env: Mapping[str, Any],
        trace: Mapping[str, str],
        origin: Mapping[str, Origin],
        depth: int = 0,
    ) -> FigureTrace:
        """How the fact `name` got its value: formula, numbers, inputs (recursively), assumptions, source."""
        spec = self.kb.facts.get(name)
        unit = spec.unit if spec else None
        formula = self.calc.producer(name, trace)
        if formula is None:
            o = origin.get(name) or Origin("layout" if name in self.layout_fact_names else "derived")
            return FigureTrace(
                fact=name,
                value=env.get(name),
                unit=unit,
                kind=o.kind,
                detail=o.detail,
                cite=o.cite,
                title_text=spec.doc if spec else NO_TEXT,
            )
        inputs: tuple[FigureTrace, ...] = ()
        if depth < TRACE_DEPTH:
            inputs = tuple(self.figure(n, env, trace, origin, depth + 1) for n in sorted(formula.expr.names))
        return FigureTrace(
            fact=name,
            value=env.get(name),
            unit=formula.spec.unit,
            kind=formula.spec.kind,
            formula_id=formula.spec.id,
            formula=formula.text(),
            numbers=formula.numbers(env),
            title_text=formula.spec.title,
            assumptions_text=formula.spec.assumptions,
            cite=formula.spec.cite,
            shows_input=formula.spec.display == "input",
            inputs=inputs,
        )

    def _alternatives(
        self,
        chosen: Candidate | None,
        cands: list[Candidate],
        env: Mapping[str, Any],
        asked: bool = False,
        dropped: dict[int, int] | None = None,
    ) -> list[Alternative]:
        total, per_node = env["total_gpus"], env["gpus_per_node"]
        wanted = [
            Layout(total, 1, 1),
            Layout(1, min(total, per_node), max(1, total // per_node)),
            Layout(1, 1, total),
            Layout(1, total, 1),
        ]
        order = self._order(env)
        if dropped is None:
            _, dropped = self._rank(cands, order)

        def rank(c: Candidate) -> tuple[Any, ...]:
            return (bool(c.fired(self.rules, "reject")), -dropped.get(id(c), -1), self._sort_key(c, order))

        # Rejected layouts rank after all others; they are completed (every figure computed) only where one
        # is shown, and ranked among themselves only where that order decides which.
        others = [c for c in cands if c is not chosen]
        rejected = [c for c in others if c.fired(self.rules, "reject")]
        ranked = sorted((c for c in others if not c.fired(self.rules, "reject")), key=rank)
        sorted_rejected: list[Candidate] = []

        def rejected_ranked() -> list[Candidate]:
            if not sorted_rejected and rejected:
                sorted_rejected.extend(sorted((self.complete(c) for c in rejected), key=rank))
            return sorted_rejected

        by_layout: dict[Layout, Candidate] = {}
        for c in ranked:  # under every sharding tried, the best-ranked one of each split
            by_layout.setdefault(c.layout.bare(), c)
        missing = {layout for layout in wanted if layout not in by_layout}
        hits: dict[Layout, list[Candidate]] = {}
        for c in rejected if missing else ():
            if (bare := c.layout.bare()) in missing:
                hits.setdefault(bare, []).append(c)
        for layout, found in hits.items():
            if len(found) > 1:  # the same split under several shardings: the best-ranked one
                found = [c for c in rejected_ranked() if c.layout.bare() == layout]
            by_layout[layout] = self.complete(found[0])
        picked: list[Candidate] = []
        for layout in wanted:
            best = by_layout.get(layout)
            if best is not None and best is not chosen and all(best is not p for p in picked):
                picked.append(best)

        def fill(group: list[Candidate]) -> None:
            for c in group:
                if len(picked) >= MAX_ALTERNATIVES:
                    return
                if all(c is not p for p in picked):
                    picked.append(c)

        fill(ranked)
        if len(picked) < MAX_ALTERNATIVES:
            fill(rejected_ranked())
        picked.sort(key=rank)
        return [self._why_not(c, chosen, order, None if asked else dropped.get(id(c))) for c in picked]

    def _context(self, c: Candidate, chosen: Candidate, k: SortKey) -> dict[str, Any]:
        return {
            **c.env,
            "other": chosen.layout.label(),
            "this": c.layout.label(),
            "other_conversations": chosen.env.get("conversations"),
            "other_value": chosen.env.get(k.fact) if k.fact != "discouraged" else None,
            "tolerance_pct": round(k.tolerance * 100),
            "other_value_link": chosen.env.get("collective_link"),
        }

    def _decisive(self, c: Candidate, chosen: Candidate, keys: tuple[SortKey, ...]) -> int:
        """The first key on which `c` and `chosen` differ by more than its tolerance (len(keys): none)."""
        for i, k in enumerate(keys):
            mine, theirs = self._score(c, k), self._score(chosen, k)
            if mine == theirs:
                continue
            if k.tolerance and float("inf") not in (abs(mine), abs(theirs)):
                if abs(mine - theirs) <= k.tolerance * max(abs(mine), abs(theirs)):
                    continue
            return i
        return len(keys)

    def _why_not(self, c: Candidate, chosen: Candidate | None, order: str, lost_at: int | None) -> Alternative:
        """Why `c` was not chosen (`lost_at`: the key it lost on in the selection), or, where the user named
        the layout (`lost_at` None), what `c` has over it or lacks: in numbers where the key is an estimate."""
        reasons: list[Message] = []
        rule_ids: list[str] = []
        rejected = c.fired(self.rules, "reject")
        for rule in rejected + c.fired(self.rules, "discourage") + c.fired(self.rules, "explain"):
            rule_ids.append(rule.id)
            reasons.append(Message.of(Text({k: f"{v} [{rule.id}]" for k, v in rule.title.texts.items()}), c.env))
        if not rejected and chosen is not None:
            keys = self.rules.selection.get(order, ())
            at = self._decisive(c, chosen, keys) if lost_at is None else lost_at
            if at < len(keys):
                k = keys[at]
                better = self._score(c, k) > self._score(chosen, k)
                text = k.why_better if better else k.why_not
                if k.tolerance and None in (c.env.get(k.fact), chosen.env.get(k.fact)):
                    reasons.append(Message.of(label_text("no_estimate"), c.env))
                elif k.fact != "discouraged" and text is not None:
                    reasons.append(Message.of(text, self._context(c, chosen, k)))
                elif k.fact == "discouraged":  # a rule decided: still say what the estimate says
                    goal = next((g for g in keys[at + 1 :] if g.tolerance), None)
                    known = goal is not None and None not in (c.env.get(goal.fact), chosen.env.get(goal.fact))
                    if goal is not None and known and self._score(c, goal) != self._score(chosen, goal):
                        text = goal.why_better if self._score(c, goal) > self._score(chosen, goal) else goal.why_not
                        if text is not None:
                            aside = label_text("estimate_aside")
                            said = Text({lang: f"{aside.get(lang)} {text.get(lang)}" for lang in text.texts})
                            reasons.append(Message.of(said, self._context(c, chosen, goal)))
            elif self.rules.tie is not None:
                reasons.append(Message.of(self.rules.tie, self._context(c, chosen, keys[0]) if keys else c.env))
            for k in keys[: min(at, len(keys))]:
                unknown = None in (c.env.get(k.fact), chosen.env.get(k.fact))
                if k.close is not None and not unknown and self._score(c, k) != self._score(chosen, k):
                    reasons.append(Message.of(k.close, self._context(c, chosen, k)))
        figures = {name: _round(c.env.get(name)) for name in ALTERNATIVE_FIGURES}
        unique = [m for i, m in enumerate(reasons) if m not in reasons[:i]]
        return Alternative(c.layout, figures, tuple(unique), tuple(rule_ids), bool(rejected))

    def _assumed_unknowns(self, env: Mapping[str, Any], origin: Mapping[str, Origin]) -> list[Unknown]:
        """Inputs not known that the engine still gave a working value (an optional bridge: none), with
        the question that settles them; what they change is listed among the assumptions."""
        out = []
        for name, o in origin.items():
            spec = self.kb.facts.get(name)
            if o.state != "unknown" or env.get(name) is None or spec is None or spec.question is None:
                continue
            why = Message.of(label_text("unknown_assumed"), {"value": env[name]})
            out.append(Unknown(name, spec.question, why, (), spec.settle))
        return out

    def _unknowns(self, undecided: list[tuple[Rule, Mapping[str, Any]]]) -> list[Unknown]:
        found: dict[str, Unknown] = {}
        for rule, env in undecided:
            for name in sorted(rule.when.names):
                spec = self.kb.facts.get(name)
                if env.get(name) is not None or spec is None or spec.kind != "input" or spec.question is None:
                    continue
                why = Message.of(rule.title, env)
                prior = found.get(name)
                rules = (*(prior.rules if prior else ()), rule.id)
                text = why if prior is None else prior.why_text
                found[name] = Unknown(name, spec.question, text, tuple(dict.fromkeys(rules)), spec.settle)
        return list(found.values())


def _round(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, 4)
    return value
