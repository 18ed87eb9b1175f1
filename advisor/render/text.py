"""Plain text for the terminal, for every record: the decision or verdict first, numbers with units,
each finding laid out the same way, sources as numbered footnotes at the end."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

from advisor.core.records import AuditResult, Finding, FleetItem, Recommendation, Sizing
from advisor.i18n import fill, format_number, label, number
from advisor.kb.knowledge import Knowledge
from advisor.kb.rules import RuleBase
from advisor.render.common import (
    Footnotes,
    alternative_cell,
    alternative_column,
    assumed_note,
    assumption_line,
    branch_text,
    figure_rows,
    fleet_rows,
    fleet_totals,
    headline,
    lead_finding,
    pick,
    scenario_line,
    serves_word,
    severity_count,
    size_status,
    smallest_label,
    state,
)

WIDTH = 100


def _wrap(text: str, indent: str) -> str:
    return textwrap.fill(text, WIDTH, initial_indent=indent, subsequent_indent=indent)


def finding(f: Finding, kb: Knowledge, lang: str, notes: Footnotes) -> list[str]:
    """A finding's lines: state, title, rule and footnotes; explanation, fix, checks, conflicts, evidence."""
    refs = "".join(notes.ref(c) for c in f.sources)
    out = [f"  [{state(f, lang)}] {f.title} ({f.rule}) {refs}".rstrip(), _wrap(f.explanation, "      ")]
    if f.fix:
        out.append(_wrap(f"{label('fix', lang)}: {f.fix}", "      "))
    for cmd in f.verify:
        out.append(f"      {label('verify', lang)}: {cmd}")
    for cid in f.conflicts:
        c = kb.conflicts.get(cid)
        if c:
            out.append(_wrap(f"{label('conflict', lang)}: {c.title.get(lang)} → {c.resolution.get(lang)}", "      "))
    for e in f.evidence:
        where = f"{Path(e.file).name}:{e.line}: " if e.file else ""
        out.append(f"      {label('evidence', lang)}: {where}{e.text}")
    return out


def sources(notes: Footnotes, lang: str) -> list[str]:
    """The footnotes the report used, numbered, under a heading (nothing when none were used)."""
    if not notes.items:
        return []
    return ["", label("sources", lang), *(_wrap(f"[{i}] {notes.line(c)}", "  ") for i, c in enumerate(notes.items, 1))]


def recommendation(rec: Recommendation, kb: Knowledge) -> str:
    """A recommendation as plain text."""
    lang = rec.lang
    notes = Footnotes(kb, [])
    out = [scenario_line(rec), "", f"{label('recommendation', lang)}: {headline(rec)}"]
    lead = lead_finding(rec)
    if lead is not None:
        out.append(_wrap(lead.explanation, "  "))
    note = assumed_note(rec)
    if note:
        out.append(_wrap(note, "  "))
    rows = figure_rows(rec, notes)
    if rows:
        out += ["", label("figures", lang)]
        width = max(len(r[0]) for r in rows)
        vwidth = max(len(r[1]) for r in rows)
        for name, value, how in rows:
            out.append(
                textwrap.fill(
                    f"  {name:<{width}}  {value:>{vwidth}}  {how}",
                    WIDTH,
                    subsequent_indent=" " * (width + vwidth + 6),
                )
            )
    if rec.findings:
        out += ["", label("findings", lang)]
        for f in rec.findings:
            out += finding(f, kb, lang, notes)
    if rec.alternatives:
        out += ["", label("alternatives", lang)]
        width = max(len(a.layout.label()) for a in rec.alternatives)
        column = alternative_column(rec)
        for a in rec.alternatives:
            conv_text = alternative_cell(a.figures, column, lang) or ""
            why = "; ".join(a.why_not)
            out.append(
                textwrap.fill(
                    f"  {a.layout.label():<{width}}  {conv_text:>18}  — {why}",
                    WIDTH,
                    subsequent_indent=" " * (width + 25),
                )
            )
    if rec.assumptions:
        out += ["", label("assumptions_head", lang)]
        for assumed in rec.assumptions:
            out.append(_wrap(assumption_line(assumed), "  "))
            out.append(_wrap(assumed.why, "      "))
            out += [_wrap(f"{label('otherwise', lang)}: {branch_text(b, lang)}", "      ") for b in assumed.otherwise]
    if rec.unknowns:
        out += ["", label("unknowns", lang)]
        for u in rec.unknowns:
            needed = f"{label('needed_by', lang)}: {u.why} ({', '.join(u.rules)})" if u.rules else u.why
            out.append(_wrap(f"{u.fact}: {u.question} — {needed}", "  "))
    if rec.launch:
        out += ["", label("launch", lang)]
        for engine, cmd in rec.launch.items():
            out.append(f"  {engine}:")
            out += [f"    {line}" for line in cmd.splitlines()]
    out += sources(notes, lang)
    return "\n".join(out) + "\n"


def audit(result: AuditResult, kb: Knowledge) -> str:
    """The audit for a terminal: summary, findings worst first with evidence, unknowns, input notes, sources."""
    lang = result.lang
    notes = Footnotes(kb, [])
    s = result.summary()
    facts = result.facts
    out = [
        f"{label('audit', lang)}: {facts.get('gpus_per_node') or '?'} × {facts.get('gpu') or '?'} · "
        f"{label('model', lang)} {facts.get('model') or '?'} · "
        f"{', '.join(severity_count(k, n, lang) for k, n in s.items())}",
        "",
    ]
    if result.problems:
        out += [*(f"⚠ {p}" for p in result.problems), ""]
    if result.recommendation and result.recommendation.layout:
        line = f"{label('deployed_layout', lang)}: {result.recommendation.layout.label()}"
        if result.groups:
            line += f"  ({label('tp_groups', lang)}: " + "; ".join(",".join(map(str, g)) for g in result.groups) + ")"
        out += [line, ""]
    if result.findings:
        out.append(label("findings", lang))
    for f in result.findings:
        out += finding(f, kb, lang, notes)
    if result.unknowns:
        out += ["", label("unknowns", lang)] if result.findings else [label("unknowns", lang)]
        for u in result.unknowns:
            settle = f" → {u.settle}" if u.settle else ""
            out.append(f"  {u.fact}: {u.question}{settle}")
    out += ["", label("inputs", lang)]
    for i in result.inputs:
        kinds = ", ".join(i.kinds) or "—"
        out.append(f"  {Path(i.path).name}: {kinds}")
        out += [f"      {label('note', lang)}: {n}" for n in i.notes]
    out += sources(notes, lang)
    return "\n".join(out) + "\n"


def fleet(items: list[FleetItem], kb: Knowledge) -> str:
    """One line per bundle, worst first, then the totals."""
    out = []
    for row in fleet_rows(items):
        if row.error is not None:
            out.append(f"unusable  {row.path}: {row.error}")
            continue
        counts = " ".join(f"{n}{k[0]}" for k, n in row.counts.items())
        out.append(
            f"{row.worst:<8}  {row.path}  [{row.layout}]  {counts}" + (f"  {', '.join(row.rules)}" if row.rules else "")
        )
    out.append(fleet_totals(items))
    return "\n".join(out) + "\n"


def sizing(result: Sizing, kb: Knowledge) -> str:
    """The sizing table and the purchase advice as plain text."""
    lang = result.lang
    notes = Footnotes(kb, [])
    users = result.input["workload"].get("concurrent_conversations")
    out = [
        f"{label('size_title', lang)}: {result.input['model']} · {result.input['precision'].upper()} · "
        f"{number(result.input['workload']['context_tokens'], 'tokens', lang)}"
        + (f" · {fill(label('conversations_count', lang), {'n': users}, lang)}" if users else "")
        + (
            f" · {models} {label('models_each', lang)}"
            if (models := result.facts.get("independent_models") or 1) > 1
            else ""
        ),
        "",
    ]
    rows = [
        [
            r.platform.name,
            size_status(r, lang),
            r.rec.layout.label() if r.rec.layout else "–",
            format_number(r.conversations, lang) if r.conversations is not None else "–",
            serves_word(r, users, lang),
        ]
        for r in result.rows
    ]
    header = [
        label("platform", lang),
        label("status", lang),
        label("layout", lang),
        label("conversations", lang),
        label("serves", lang) if users else "",
    ]
    widths = [max(len(str(x[i])) for x in [header, *rows]) for i in range(len(header))]
    out.append("  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)).rstrip())
    out += ["  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    out.append("")
    if result.smallest:
        s = result.smallest
        out.append(f"{smallest_label(result)}: {s.platform.name} ({s.rec.layout.label() if s.rec.layout else ''})")
    else:
        out.append(f"{smallest_label(result)}: –")
    if result.purchase:
        out += ["", label("purchase", lang)]
        for f in result.purchase:
            out += finding(f, kb, lang, notes)
    out += sources(notes, lang)
    return "\n".join(out) + "\n"


BY_TYPE: dict[type, Callable[[Any, Knowledge], str]] = {
    Recommendation: recommendation,
    AuditResult: audit,
    Sizing: sizing,
    FleetItem: fleet,
}


def render(record: Any, kb: Knowledge, rules: RuleBase | None = None) -> str:
    """Any record (Recommendation, AuditResult, Sizing, or a fleet's list of FleetItem) as plain text."""
    return pick(BY_TYPE, record, "text")(record, kb)
