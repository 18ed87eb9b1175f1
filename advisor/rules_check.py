"""`advisor rules check`: the well-formedness check of the rule base and the knowledge base.

It names every failing id: citations that do not resolve or quote words the source does not
contain, facts or formulas that are unknown, missing translations, duplicate ids, conflicts that
point nowhere, catalogue figures without a source, GPU memory that is neither a quoted driver total
nor a stated estimate, figures marked exact that rest on an estimate (checked on a small scenario
for every catalogue GPU), and rules that none of their own cases fire (or that fire where a case
says they must stay quiet).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from advisor.core.engine import Engine
from advisor.core.records import FigureTrace, Recommendation
from advisor.errors import AdvisorError
from advisor.kb.knowledge import Citation, FormulaSpec, Gpu, Knowledge, Measurement
from advisor.kb.rules import Rule
from advisor.redact.vocabulary import vocabulary
from advisor.regex_safety import problems

SOURCE_KINDS = ("seed", "primary", "vendor", "measurement", "config", "derivation")
GPU_FIGURES = (
    "memory_gb",
    "memory_gib_reported",
    "memory_gib_estimate",
    "memory_bandwidth_gbs",
    "pcie_gen",
    "nvlink_gbs_per_direction",
    "tensor_tflops_bf16",
    "tensor_tflops_fp8",
    "tensor_tflops_fp4",
)
# The small scenario each catalogue GPU is evaluated on to walk its figure traces: a model that fits every card.
EXACTNESS_CASE: dict[str, Any] = {
    "model": "Llama 3.1 8B",
    "precision": "bf16",
    "hardware": {"gpus_per_node": 1},
    "workload": {"concurrent_conversations": 1, "context_tokens": 4096},
}


@dataclass
class Report:
    """Problems found, each prefixed with the id it concerns; empty when all is well."""

    problems: list[str] = field(default_factory=list)
    checked: dict[str, int] = field(default_factory=dict)

    def add(self, where: str, message: str) -> None:
        """Record one problem."""
        self.problems.append(f"{where}: {message}")


def _norm(text: str) -> str:
    return " ".join(text.replace("’", "'").replace("“", '"').replace("”", '"').split()).lower()


def check_citation(kb: Knowledge, c: Citation, where: str, report: Report) -> None:
    """A citation must name a known source; its quote must stand in one of that source's quotes."""
    source = kb.sources.get(c.source)
    if source is None:
        report.add(where, f"cites unknown source {c.source!r}")
        return
    if c.quote and source.quotes:
        wanted = _norm(c.quote)
        if not any(wanted in _norm(q.text) for q in source.quotes):
            report.add(where, f"quote not found in source {c.source!r}: {c.quote[:60]!r}")
    elif c.quote:
        report.add(where, f"quotes {c.quote[:40]!r} but source {c.source!r} records no quotes")


def check_secrets_vocabulary(kb: Knowledge, report: Report) -> None:
    """knowledge/secrets.yaml: it loads, its citations resolve, its words are lower case, each prefix is a
    literal long enough to start no ordinary word."""
    try:
        vocab = vocabulary(kb.root)
    except AdvisorError as exc:
        report.add("secrets.yaml", exc.one_line())
        return
    for c in vocab.cite:
        check_citation(kb, c, "secrets.yaml", report)
    names = vocab.names
    for what, words in (("strong", names.strong), ("medium", names.medium), ("weak", names.weak)):
        for word in words:
            if word != word.lower() or word in names.neutral:
                report.add("secrets.yaml", f"names.{what}: {word!r} must be lower case and not also neutral")
    for p in vocab.prefixes:
        if len(p.prefix) < 2 or p.min < 8:
            report.add("secrets.yaml", f"prefix {p.prefix!r}: at least two characters and min 8 after it")


def check_measurement(kb: Knowledge, m: Measurement, report: Report) -> None:
    """A measurement cites its source word for word, names a known model, precision, GPU and link, its
    layouts occupy exactly its GPUs, and it gives a value or a ratio against another layout, never both."""
    where = f"measurement {m.id}"
    check_citation(kb, m.cite, where, report)
    for what, name, table in (
        ("model", m.model, kb.models),
        ("precision", m.precision, kb.precisions),
        ("GPU", m.gpu, kb.gpus),
    ):
        if name not in table:
            report.add(where, f"names unknown {what} {name!r}")
    if m.node_link is not None and m.node_link not in kb.links:
        report.add(where, f"names unknown link {m.node_link!r}")
    if m.nodes > 1 and m.node_link is None:
        report.add(where, f"spans {m.nodes} nodes but names no node_link")
    for what, count in (("gpus", m.gpus), ("nodes", m.nodes)):
        if count < 1:
            report.add(where, f"{what} must be at least 1, not {count}")
    for what, figure in (("value", m.value), ("ratio", m.ratio)):
        if figure is not None and figure <= 0:
            report.add(where, f"{what} must be above 0, not {figure}")  # no deployment measures 0 tokens/s
    for layout in (m.layout, m.versus):
        if layout is None:
            continue
        degrees = {"replicas": layout.replicas, "tp": layout.tp, "pp": layout.pp, "dp": layout.dp, "ep": layout.ep}
        low = [f"{name} {value}" for name, value in degrees.items() if value < 1]
        if low:
            report.add(where, f"layout degrees must be at least 1, not {', '.join(low)}")
            continue
        if layout.gpus != m.gpus:
            report.add(where, f"layout {layout.label} occupies {layout.gpus} GPUs, not the {m.gpus} measured")
        if (layout.tp * layout.dp) % layout.ep:
            report.add(where, f"EP {layout.ep} does not divide TP x DP ({layout.tp * layout.dp})")
    relative = m.versus is not None or m.ratio is not None
    if (m.value is None) == (not relative) or (relative and (m.versus is None or m.ratio is None)):
        report.add(where, "needs exactly one of a value or a versus layout with its ratio")


def check_gpu_memory(g: Gpu, report: Report) -> None:
    """A driver total must quote the capture it comes from (its MiB / 1024, or its GiB, match the value);
    without one, a stated estimate with its basis must stand in its place, never the bare nominal figure."""
    if g.memory_gib_reported is not None:
        cite = g.cite.get("memory_gib_reported")
        quote = cite.quote if cite else None
        if not quote:
            report.add(f"gpu {g.id}", "memory_gib_reported does not quote the capture it comes from")
            return
        mib = [int(n) for n in re.findall(r"(?<![\d.])(\d{1,9})[ \t]{0,4}MiB", quote)]
        gib = [float(n) for n in re.findall(r"(?<![\d.])(\d{1,9}(?:\.\d{1,9})?)[ \t]{0,4}GiB", quote)]
        if not (
            (mib and abs(max(mib) / 1024 - g.memory_gib_reported) < 0.006)
            or (gib and abs(gib[0] - g.memory_gib_reported) < 0.05)
        ):
            report.add(
                f"gpu {g.id}",
                f"memory_gib_reported {g.memory_gib_reported:g} is not the total its quote shows: {quote!r}",
            )
    elif g.memory_gib_estimate is None or not g.memory_estimate_basis:
        report.add(
            f"gpu {g.id}", "no driver-reported memory and no stated estimate with its basis (memory_estimate_basis)"
        )


def _rests_on_estimate(t: FigureTrace) -> Iterator[FigureTrace]:
    for i in t.inputs:
        if i.kind == "estimate":
            yield i
        yield from _rests_on_estimate(i)


def check_exact_figures(engine: Engine, report: Report) -> None:
    """For every catalogue GPU, no figure marked exact may rest on an estimated input (such as a nominal
    memory figure standing in for the total the driver reports)."""
    from advisor.inputs.scenario import build

    for g in engine.kb.gpus.values():
        case = {**EXACTNESS_CASE, "hardware": {**EXACTNESS_CASE["hardware"], "gpu": g.id}}
        try:
            rec = engine.evaluate(build(case, engine.kb, where=f"gpu {g.id}"))
        except AdvisorError as exc:
            report.add(f"gpu {g.id}", f"the exactness scenario does not evaluate: {exc.one_line()}")
            continue
        for name, t in rec.traces.items():
            if t.kind != "exact" or t.shows_input:  # a unit conversion is shown, and judged, by its input
                continue
            for bad in _rests_on_estimate(t):
                report.add(
                    f"gpu {g.id}",
                    f"figure {name} is marked exact but rests on the estimate {bad.fact} "
                    f"({bad.detail or bad.formula_id or 'no detail'})",
                )
                break


def fired_anywhere(rec: Recommendation, rule_id: str) -> bool:
    """Whether a rule fired on the chosen layout, the scenario, or any listed alternative."""
    return rec.finding(rule_id) is not None or any(rule_id in a.rules for a in rec.alternatives)


def run_case(engine: Engine, case: dict[str, Any], lang: str = "en") -> Recommendation:
    """Evaluate one rule case (a scenario mapping; `layout:` names the layout to evaluate, as
    `recommend --layout` does)."""
    from advisor.core.layouts import Layout
    from advisor.inputs.scenario import build

    case = dict(case)
    named = case.pop("layout", None)
    only = None
    if isinstance(named, dict):
        replicas, tp, pp, ep = (int(named.get(k, 1)) for k in ("replicas", "tp", "pp", "ep"))
        only = Layout(replicas, tp, pp, ep)
    return engine.evaluate(build(case, engine.kb, where="case"), lang, only=only)


def case_fires(engine: Engine, rule: Rule, case: dict[str, Any]) -> bool:
    """Whether `rule` fires for a case: through `size` for sizing rules, else through `recommend`."""
    if rule.scope == "audit":
        host = engine.evaluate_scope("audit", dict(case.get("facts") or {}))
        return any(f.rule == rule.id for f in host.findings)
    if rule.scope == "sizing":
        from advisor.size import size

        return any(f.rule == rule.id for f in size(engine, case, where="case").purchase)
    return fired_anywhere(run_case(engine, case), rule.id)


def check_rule_cases(engine: Engine, rules: Iterable[Rule], report: Report) -> None:
    """Every rule fires on each of its `fires` cases and stays quiet on each `quiet` case."""
    for rule in rules:
        if not rule.cases_fire:
            report.add(f"rule {rule.id}", "has no case that fires it (cases.fires)")
        if not rule.cases_quiet:
            report.add(f"rule {rule.id}", "has no case where it stays quiet (cases.quiet)")
        for kind, cases, expected in (("fires", rule.cases_fire, True), ("quiet", rule.cases_quiet, False)):
            for i, case in enumerate(cases):
                try:
                    fired = case_fires(engine, rule, dict(case))
                except AdvisorError as exc:
                    report.add(f"rule {rule.id} {kind}[{i}]", f"case is not a valid scenario: {exc.one_line()}")
                    continue
                if fired != expected:
                    report.add(
                        f"rule {rule.id} {kind}[{i}]",
                        "the case does not fire the rule"
                        if expected
                        else "the rule fires where the case says it stays quiet",
                    )


_NOT_KNOWN = re.compile(r"\bnot[ \t]{1,4}known\([ \t]{0,4}([A-Za-z_]\w{0,63})[ \t]{0,4}\)")


def check_unknown_as_zero(f: FormulaSpec, report: Report) -> None:
    """A formula that applies where a fact is unknown and answers 0 in its place reads the unknown as zero:
    the figure that needs the fact must be estimated from a cited proxy or left unknown."""
    if f.when is None or str(f.expr).strip() not in ("0", "0.0"):
        return
    for name in _NOT_KNOWN.findall(f.when):
        why = f"gives 0 where {name} is unknown: estimate it from a cited proxy or leave it unknown"
        report.add(f"formula {f.id}", why)


def check(engine: Engine, run_cases: bool = True) -> Report:
    """Walk every rule, formula, fact, source, GPU, model and conflict; return the problems found."""
    if engine.from_cache:  # the check reads and checks the files themselves, never the load cache
        engine = Engine.load(engine.kb.root, engine.rules.root, cached=False)
    kb, base = engine.kb, engine.rules
    report = Report()
    for sid, s in kb.sources.items():
        if s.kind not in SOURCE_KINDS:
            report.add(f"source {sid}", f"kind {s.kind!r} is not one of {', '.join(SOURCE_KINDS)}")
        if not s.trust:
            report.add(f"source {sid}", "has no trust note")
    for rule in base.rules.values():
        for c in rule.cite:
            check_citation(kb, c, f"rule {rule.id}", report)
        for cid in rule.conflicts:
            if cid not in kb.conflicts:
                report.add(f"rule {rule.id}", f"names unknown conflict {cid!r}")
    for f in kb.formulas.values():
        check_citation(kb, f.cite, f"formula {f.id}", report)
        check_unknown_as_zero(f, report)
    for q in kb.questions.values():
        where = f"question {q.id}"
        if (q.answer is None) == (q.conflict is None):
            report.add(where, "needs exactly one of an answer or a conflict")
        if q.conflict is not None and q.conflict not in kb.conflicts:
            report.add(where, f"names unknown conflict {q.conflict!r}")
        if q.answer is not None and not q.cite:
            report.add(where, "an answer needs a citation")
        for c in q.cite:
            check_citation(kb, c, where, report)
        for lang, pattern in q.asked.texts.items():
            try:
                slow = problems(pattern, re.I)
            except re.error as exc:
                report.add(where, f"its {lang} pattern does not compile: {exc}")
                continue
            if slow:
                report.add(where, f"its {lang} pattern could take more than linear time: {slow[0].why}")
    for name, spec in kb.facts.items():
        if spec.kind == "input" and spec.question is None:
            report.add(f"fact {name}", "an input fact needs a question in English and German")
    for g in kb.gpus.values():
        for key, c in g.cite.items():
            check_citation(kb, c, f"gpu {g.id} {key}", report)
        for key in GPU_FIGURES:
            if getattr(g, key) is not None and key not in g.cite:
                report.add(f"gpu {g.id}", f"figure {key} has no citation")
        check_gpu_memory(g, report)
    for link in kb.links.values():
        for key, c in link.cite.items():
            check_citation(kb, c, f"link {link.id} {key}", report)
        if "gbs_per_direction" not in link.cite:
            report.add(f"link {link.id}", "bandwidth has no citation")
    for m in kb.models.values():
        for key, c in m.cite.items():
            check_citation(kb, c, f"model {m.id} {key}", report)
        for ck in m.checkpoints:
            check_citation(kb, ck.cite, f"model {m.id} checkpoint {ck.precision}", report)
            if ck.repo_cite is not None:
                check_citation(kb, ck.repo_cite, f"model {m.id} checkpoint {ck.precision} repo", report)
            if ck.precision not in kb.precisions:
                report.add(f"model {m.id}", f"checkpoint precision {ck.precision!r} is unknown")
        for key in ("num_hidden_layers", "hidden_size", "num_attention_heads", "num_key_value_heads"):
            if not isinstance(m.config.get(key), int):
                report.add(f"model {m.id}", f"config.{key} must be a whole number")
        if "config" not in m.cite:
            report.add(f"model {m.id}", "config values have no citation")
    for p in kb.precisions.values():
        check_citation(kb, p.cite, f"precision {p.id}", report)
    for measured in kb.measurements.values():
        check_measurement(kb, measured, report)
    for serving in kb.engine_flags.values():
        check_citation(kb, serving.cite, f"engine {serving.id}", report)
        for ef in serving.flags:
            check_citation(kb, ef.cite, f"engine {serving.id} flag {ef.flag}", report)
            if (ef.value == "choice") != bool(ef.choices):
                report.add(f"engine {serving.id} flag {ef.flag}", "choices go with value: choice, and only with it")
    for platform in kb.platforms.values():
        if platform.gpu not in kb.gpus:
            report.add(f"platform {platform.id}", f"names unknown GPU {platform.gpu!r}")
    for conflict in kb.conflicts.values():
        if len(conflict.claims) < 2:
            report.add(f"conflict {conflict.id}", "needs at least two claims")
        for claim in conflict.claims:
            check_citation(kb, Citation(claim.source, claim.locator, claim.quote), f"conflict {conflict.id}", report)
    for order, keys in base.selection.items():
        if not keys:
            report.add(f"selection {order}", "has no keys")
    for needed in ("throughput", "latency", "capacity", "training"):
        if needed not in base.selection:
            report.add("selection", f"no order named {needed!r}")
    check_secrets_vocabulary(kb, report)
    check_exact_figures(engine, report)
    if run_cases:
        check_rule_cases(engine, base.rules.values(), report)
    report.checked = {
        "rules": len(base.rules),
        "formulas": len(kb.formulas),
        "facts": len(kb.facts),
        "sources": len(kb.sources),
        "gpus": len(kb.gpus),
        "models": len(kb.models),
        "links": len(kb.links),
        "conflicts": len(kb.conflicts),
        "platforms": len(kb.platforms),
        "measurements": len(kb.measurements),
    }
    return report
