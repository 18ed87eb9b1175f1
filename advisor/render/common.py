"""Pieces every format shares, each written once: a finding's state and JSON shape, citations,
figure rows and their footnotes, the decision in one line.

Every JSON document serialises a finding, a figure's trace, a citation and an unknown through the
functions here, so the recommendation, the audit and the sizing agree on one shape.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from advisor.core.records import (
    Assumption,
    Branch,
    FigureTrace,
    Finding,
    Firing,
    FleetItem,
    Recommendation,
    SizeRow,
    Sizing,
    Unknown,
)
from advisor.i18n import fill, format_number, has_label, label, number, yes_no
from advisor.kb.knowledge import Citation, Knowledge
from advisor.kb.rules import SEVERITIES
from advisor.structs import Struct

R = TypeVar("R")

FIGURE_ORDER = (
    "weights_gib",
    "usable_gib_per_gpu",
    "train_state_gib_per_gpu",
    "grad_sync_s_per_step",
    "train_step_s",
    "kv_gib_per_conversation",
    "conversations",
    "allreduce_count_per_token",
    "allreduce_mib_per_token",
    "prefill_allreduce_ms",
    "bubble_fraction",
    "decode_tokens_per_s_upper_bound",
    "one_user_tokens_per_s",
    "tokens_per_s_per_user_at_load",
    "throughput_tokens_per_s",
    "ttft_ms",
)


class Footnotes(Struct, frozen=False):
    """Citations numbered in order of first use."""

    kb: Knowledge
    items: list[Citation]

    def ref(self, c: Citation | None) -> str:
        """The footnote number of a citation, as '[n]'."""
        if c is None:
            return ""
        for i, item in enumerate(self.items, 1):
            if item == c:
                return f"[{i}]"
        self.items.append(c)
        return f"[{len(self.items)}]"

    def line(self, c: Citation) -> str:
        """One footnote: source title, publisher, date, locator, the quoted words and the address."""
        return citation_text(self.kb, c)


def citation_text(kb: Knowledge, c: Citation, url: bool = True) -> str:
    """A citation for people: source title (publisher, date) — locator: “quote”, and the address."""
    s = kb.sources.get(c.source)
    title = f"{s.title} ({', '.join(x for x in (s.publisher, s.date) if x and x != 'None')})" if s else c.source
    where = f" — {c.locator}" if c.locator else ""
    quote = f": “{c.quote}”" if c.quote else ""
    address = f" {s.url}" if url and s and s.url else ""
    return f"{title}{where}{quote}{address}"


def cell(text: Any) -> str:
    """Text safe inside a Markdown table cell."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def lead_finding(rec: Recommendation) -> Finding | None:
    """The finding that explains the decision: an error that rules the rest out, else the first info."""
    return next((f for f in rec.findings if f.severity == "error"), None) or next(
        (f for f in rec.findings if f.severity == "info"), None
    )


def figure_cite(tr: FigureTrace) -> Citation | None:
    """The citation the reports show for a figure: a unit conversion shows its input's."""
    if tr.shows_input:
        named = [i for i in tr.inputs if i.formula or i.detail or i.cite]
        if len(named) == 1:
            return figure_cite(named[0]) or tr.cite
    return tr.cite


def kind_label(t: FigureTrace, lang: str) -> str:
    """What kind of number a figure is: exact, estimate, upper bound, catalogue value, ..."""
    key = {"layout": "layout_fact"}.get(t.kind, t.kind)
    try:
        return label(key, lang)
    except KeyError:
        return t.kind


def figure_rows(rec: Recommendation, notes: Footnotes) -> list[tuple[str, str, str]]:
    """(label, value with unit, how it was obtained) for each contract figure that applies."""
    rows = []
    for key in FIGURE_ORDER:
        t = rec.traces.get(key)
        if t is None:
            continue
        how, cite = _describe(t, rec.lang)
        shown = {"conversations": "conversations_figure"}
        if key == "weights_gib" and alternative_column(rec) == "train_state_gib_per_gpu":
            shown["weights_gib"] = "train_state_total"  # in training the "weights" are the whole state
        rows.append(
            (
                label(shown.get(key, key), rec.lang),
                number(t.value, t.unit, rec.lang),
                f"{how} {notes.ref(cite)}".strip(),
            )
        )
    return rows


def alternative_column(rec: Recommendation) -> str:
    """The figure the alternatives are listed with: conversations in serving, the training state per GPU
    for a training job (which holds no conversations)."""
    return "train_state_gib_per_gpu" if rec.input.get("workload", {}).get("kind") == "training" else "conversations"


def alternative_cell(figures: Mapping[str, Any], column: str, lang: str) -> str | None:
    """An alternative's value in that column, with its unit; None where it has none."""
    value = figures.get(column)
    if value is None:
        return None
    if column == "conversations":
        return f"{format_number(value, lang)} {label('conversations', lang)}"
    return f"{number(value, 'GiB', lang)} {label('state_per_gpu', lang)}"


def _describe(t: FigureTrace, lang: str) -> tuple[str, Citation | None]:
    """How a figure was obtained, in one phrase; a unit conversion is described by what it converts."""
    if t.shows_input:
        named = [i for i in t.inputs if i.formula or i.detail or i.cite]
        if len(named) == 1:
            inner, cite = _describe(named[0], lang)
            return inner, cite or t.cite
    if not t.formula:
        return (f"{kind_label(t, lang)}: {t.detail}" if t.detail else kind_label(t, lang)), t.cite
    how = f"{kind_label(t, lang)}: {t.with_numbers}"
    if t.assumptions:
        how += f" ({t.assumptions})"
    return how, t.cite


def headline(rec: Recommendation) -> str:
    """The decision in one line: the layout and what it means."""
    lang = rec.lang
    if rec.layout is None:
        return label("no_layout", lang)
    x = rec.layout
    if x.ep > 1:  # data-parallel ranks that share experts: one instance per expert-parallel group
        ranks = x.ep // x.tp
        instances = x.replicas // ranks
        what = f"{ranks} {label('ep_ranks', lang)}"
        if instances > 1:
            what = fill(label("ep_instances", lang), {"instances": instances, "ranks": ranks}, lang)
        return f"{x.label()} — {what}"
    if x.gpus_per_replica == 1:
        return f"{x.replicas} × {label('one_copy_per_gpu', lang)}" if x.replicas > 1 else "1 GPU"
    copies = f"{x.replicas} {label('copies', lang)}, " if x.replicas > 1 else ""
    return f"{x.label()} — {copies}{x.gpus_per_replica} {label('gpus_per_copy', lang)}"


def scenario_line(rec: Recommendation) -> str:
    """The scenario in one line."""
    d = rec.input
    hw, wl = d["hardware"], d["workload"]
    users = wl.get("concurrent_conversations")
    lang = rec.lang
    nodes = f" × {hw['nodes']} {label('nodes', lang)}" if hw["nodes"] > 1 else ""
    noun = label("conversation" if users == 1 else "conversations", lang)
    who = f"{format_number(users, lang)} {noun} × " if users else ""
    kind, goal = (label(f"name_{v}", lang) if has_label(f"name_{v}") else v for v in (wl["kind"], wl["goal"]))
    models = wl.get("independent_models") or 1
    share = (
        f" · {fill(label('model_share', lang), {'models': models, 'gpus': hw['gpus_per_node'] * hw['nodes']}, lang)}"
        if models > 1
        else ""
    )
    return (
        f"{d['model']} · {d['precision'].upper()} (KV {d['kv_cache_dtype'].upper()}) · "
        f"{hw['gpus_per_node']} × {hw['gpu']}{nodes} · {who}{number(wl['context_tokens'], 'tokens', lang)} · "
        f"{kind}, {goal}{share}"
    )


def severity_text(severity: str, lang: str) -> str:
    """A severity in the words of `lang` ('warning', 'Warnung')."""
    return label(f"severity_{severity}", lang)


def severity_count(severity: str, n: int, lang: str) -> str:
    """How many findings of a severity, the noun in its number ('1 warning', '2 Warnungen')."""
    return f"{n} {label(f'severity_{severity}' if n == 1 else f'severity_{severity}_many', lang)}"


def state(f: Finding, lang: str) -> str:
    """A finding's severity, and for an accepted one who accepted it, until when and why."""
    if not f.suppressed:
        return severity_text(f.severity, lang)
    until = f" {label('until', lang)} {f.suppressed['expires']}" if f.suppressed.get("expires") else ""
    return f"{severity_text(f.severity, lang)}, {label('accepted', lang)}{until}: {f.suppressed['reason']}"


def cite_dict(c: Citation | None) -> dict[str, Any] | None:
    """The contract's citation object (null for none)."""
    return None if c is None else c.as_dict()


def trace_dict(t: FigureTrace) -> dict[str, Any]:
    """The contract's figure trace: value, unit, kind, the formula with and without numbers, its source."""
    return {
        "fact": t.fact,
        "value": t.value,
        "unit": t.unit,
        "kind": t.kind,
        "formula_id": t.formula_id,
        "formula": t.formula,
        "with_numbers": t.with_numbers,
        "assumptions": t.assumptions or None,
        "source": cite_dict(t.cite),
        "detail": t.detail or None,
    }


def finding_dict(f: Finding, audit: bool = False) -> dict[str, Any]:
    """The contract's finding object, one shape everywhere; an audit's adds `evidence` and `suppressed`."""
    out: dict[str, Any] = {
        "rule": f.rule,
        "severity": f.severity,
        "topics": list(f.topics),
        "title": f.title,
        "explanation": f.explanation,
        "fix": f.fix,
        "verify": list(f.verify),
        "layout": f.layout,
        "conflicts": list(f.conflicts),
        "facts": f.facts,
        "sources": [cite_dict(c) for c in f.sources],
        "figures": [trace_dict(t) for t in f.figures],
    }
    if audit:
        out["evidence"] = [e.as_dict() for e in f.evidence]
        out["suppressed"] = f.suppressed
    return out


def unknown_dict(u: Unknown) -> dict[str, Any]:
    """The contract's unknown: the fact, the question that settles it, why and for which rules."""
    return {"fact": u.fact, "question": u.question, "why": u.why, "rules": list(u.rules), "settle": u.settle}


def value_text(value: Any, lang: str) -> str:
    """An input's value as the reports write it: yes/no, numbers with the language's separators; in
    another language than English, a choice with a name in that language by its name (English keeps the
    word the flag takes: goal = throughput, Ziel = Durchsatz)."""
    if isinstance(value, bool):
        return yes_no(value, lang)
    if lang != "en" and isinstance(value, str) and has_label(f"name_{value}"):
        return label(f"name_{value}", lang)
    return format_number(value, lang)


def figure_label(key: str, lang: str) -> str:
    """A contract figure's name as the figure table shows it."""
    return label(key if key != "conversations" else "conversations_figure", lang)


def branch_text(b: Branch, lang: str) -> str:
    """One other answer in a line: the value, its layout, the key figure beside the assumed one, the
    findings that come and go."""
    parts = [f"{value_text(b.value, lang)}: {b.layout.label() if b.layout else label('no_layout_short', lang)}"]
    if b.figure:
        parts.append(
            f"{figure_label(b.figure, lang)} {number(b.figure_value, b.unit, lang)} "
            f"{label('instead_of', lang)} {number(b.assumed_value, b.unit, lang)}"
        )
    if b.gained:
        parts.append(f"{label('adds', lang)} {', '.join(b.gained)}")
    if b.lost:
        parts.append(f"{label('drops', lang)} {', '.join(b.lost)}")
    return "; ".join(parts)


def assumption_line(a: Assumption) -> str:
    """An assumption's head: the fact, the value taken, and why it was taken."""
    return f"{a.fact} = {value_text(a.value, a.lang)} — {a.reason}"


def assumed_note(rec: Recommendation) -> str | None:
    """One line under the decision naming the unstated values it rests on (None when none changes it)."""
    if not rec.assumptions:
        return None
    values = ", ".join(f"{a.fact} = {value_text(a.value, rec.lang)}" for a in rec.assumptions)
    return f"{label('assumed_short', rec.lang)}: {values} ({label('see_below', rec.lang)})"


def assumption_dict(a: Assumption) -> dict[str, Any]:
    """The contract's assumption: the fact, the value assumed, why it was assumed and what reads it,
    the question that settles it, and the answer under each other value that changes it."""
    return {
        "fact": a.fact,
        "value": a.value,
        "state": a.state,
        "assumed_because": a.reason,
        "why": a.why,
        "rules": list(a.rules),
        "formulas": list(a.formulas),
        "question": a.question,
        "settle": a.settle,
        "otherwise": [
            {
                "value": b.value,
                "layout": b.layout.as_dict() if b.layout else None,
                "layout_label": b.layout.label() if b.layout else None,
                "figure": {"fact": b.figure, "value": b.figure_value, "assumed": b.assumed_value, "unit": b.unit}
                if b.figure
                else None,
                "findings_added": list(b.gained),
                "findings_removed": list(b.lost),
                "text": branch_text(b, a.lang),
            }
            for b in a.otherwise
        ],
    }


def trace(firings: Iterable[Firing]) -> list[dict[str, Any]]:
    """Each rule's outcome (true, false, or null where a fact was unknown) with the facts it read."""
    return [f.as_dict() for f in firings]


def pick(table: Mapping[type, Callable[..., R]], record: Any, fmt: str) -> Callable[..., R]:
    """The renderer of a record's type in a format's table; a list of FleetItem is a fleet audit."""
    kind = FleetItem if isinstance(record, list) and all(isinstance(i, FleetItem) for i in record) else type(record)
    if kind not in table:
        raise TypeError(f"no {fmt} rendering for a {type(record).__name__}")
    return table[kind]


def size_status(row: SizeRow, lang: str) -> str:
    """A platform's answer in words: fits one card, split, does not fit."""
    return label({"one-card": "fits_one", "split": "split", "no-fit": "no_fit"}[row.status], lang)


def smallest_label(result: Sizing) -> str:
    """'serves the users' where users were given; without them the smallest only holds the model."""
    users = result.input["workload"].get("concurrent_conversations")
    return label("smallest" if users else "smallest_fit", result.lang)


def serves_word(row: SizeRow, users: int | None, lang: str) -> str:
    """Whether the platform serves the users, as yes/no; empty when no user count was given."""
    if not users:
        return ""
    return label("answer_yes", lang) if row.serves(users) else label("answer_no", lang)


def _rank(item: FleetItem) -> int:
    """By the worst unsuppressed finding; an unusable bundle after every finding, a clean one last."""
    if item.result is None:
        return -1
    worst = item.result.worst()
    return SEVERITIES.index(worst) if worst else -2


class FleetRow(Struct):
    """One bundle of a fleet audit in a line: its worst finding, layout, counts and the rules at fault."""

    path: str
    worst: str
    layout: str
    counts: dict[str, int]
    rules: tuple[str, ...]
    error: str | None = None


def fleet_rows(items: list[FleetItem]) -> list[FleetRow]:
    """The bundles worst first; an unusable one carries its error instead of counts."""
    rows = []
    for item in sorted(items, key=_rank, reverse=True):
        if item.result is None:
            rows.append(FleetRow(item.path, "unusable", "-", {}, (), item.error or ""))
            continue
        rec = item.result.recommendation
        rows.append(
            FleetRow(
                item.path,
                item.result.worst() or "clean",
                rec.layout.label() if rec and rec.layout else "-",
                item.result.summary(),
                tuple(
                    sorted(
                        {
                            f.rule
                            for f in item.result.findings
                            if f.severity in ("error", "warning") and not f.suppressed
                        }
                    )
                ),
            )
        )
    return rows


def fleet_totals(items: list[FleetItem]) -> str:
    """The fleet in one line: bundles, unsuppressed findings per severity, unusable bundles."""
    totals = {s: 0 for s in reversed(SEVERITIES)}
    for item in items:
        for k, n in (item.result.summary() if item.result else {}).items():
            totals[k] += n
    unusable = sum(1 for i in items if i.result is None)
    return f"{len(items)} bundles: " + ", ".join(f"{n} {k}" for k, n in totals.items()) + f", {unusable} unusable"
