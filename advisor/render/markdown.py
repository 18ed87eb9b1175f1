"""Markdown that pastes into a ticket, for every record: each finding laid out the same way, a drawing
of the audited machine, sources as numbered footnotes at the end."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from advisor.core.records import AuditResult, Finding, FleetItem, Recommendation, Sizing
from advisor.i18n import format_number, label
from advisor.inputs.evidence.topo import path as pair_path
from advisor.kb.knowledge import Knowledge
from advisor.kb.rules import RuleBase
from advisor.render.common import (
    Footnotes,
    alternative_cell,
    alternative_column,
    assumed_note,
    branch_text,
    cell,
    figure_rows,
    fleet_rows,
    fleet_totals,
    headline,
    pick,
    scenario_line,
    serves_word,
    severity_count,
    size_status,
    smallest_label,
    state,
    value_text,
)


def finding(f: Finding, kb: Knowledge, lang: str, notes: Footnotes) -> list[str]:
    """A finding as a list item: state, title, rule and footnotes; explanation, fix, checks, conflicts, evidence."""
    refs = "".join(notes.ref(c) for c in f.sources)
    out = [f"- **{state(f, lang)}** — **{f.title}** (`{f.rule}`) {refs}  ", f"  {f.explanation}"]
    if f.fix:
        out.append(f"  *{label('fix', lang)}:* {f.fix}")
    for cmd in f.verify:
        out.append(f"  *{label('verify', lang)}:* `{cmd}`")
    for cid in f.conflicts:
        c = kb.conflicts.get(cid)
        if c:
            out.append(f"  *{label('conflict', lang)}:* {c.title.get(lang)} → {c.resolution.get(lang)}")
    for e in f.evidence:
        where = f"`{Path(e.file).name}:{e.line}`: " if e.file else ""
        out.append(f"  *{label('evidence', lang)}:* {where}`{e.text}`")
    return out


def sources(notes: Footnotes, lang: str) -> list[str]:
    """The footnotes the report used, as a numbered list under a heading (nothing when none were used)."""
    if not notes.items:
        return []
    return [f"## {label('sources', lang)}", "", *(f"{i}. {notes.line(c)}" for i, c in enumerate(notes.items, 1))]


def recommendation(rec: Recommendation, kb: Knowledge) -> str:
    """A recommendation as Markdown."""
    lang = rec.lang
    notes = Footnotes(kb, [])
    out = [f"# {label('recommendation', lang)}: {headline(rec)}", "", f"*{scenario_line(rec)}*", ""]
    note = assumed_note(rec)
    if note:
        out += [note, ""]
    rows = figure_rows(rec, notes)
    if rows:
        out += [f"## {label('figures', lang)}", "", "| | | |", "|---|---:|---|"]
        out += [f"| {cell(a)} | {cell(b)} | {cell(c)} |" for a, b, c in rows]
        out.append("")
    if rec.findings:
        out += [f"## {label('findings', lang)}", ""]
        for f in rec.findings:
            out += finding(f, kb, lang, notes)
        out.append("")
    if rec.alternatives:
        column = alternative_column(rec)
        head = "conversations" if column == "conversations" else "state_per_gpu_head"
        out += [
            f"## {label('alternatives', lang)}",
            "",
            f"| {label('layout', lang)} | {label(head, lang)} | {label('why_not', lang)} |",
            "|---|---:|---|",
        ]
        for a in rec.alternatives:
            shown = (
                format_number(a.figures.get(column), lang)
                if column == "conversations" and a.figures.get(column) is not None
                else (alternative_cell(a.figures, column, lang) or "–")
            )
            out.append(f"| {a.layout.label()} | {shown} | {cell('; '.join(a.why_not))} |")
        out.append("")
    if rec.assumptions:
        out += [f"## {label('assumptions_head', lang)}", ""]
        for assumed in rec.assumptions:
            out.append(f"- **{assumed.fact}** = {value_text(assumed.value, lang)} — {assumed.reason}. {assumed.why}")
            out += [f"  - {label('otherwise', lang)}: {branch_text(b, lang)}" for b in assumed.otherwise]
        out.append("")
    if rec.unknowns:
        out += [f"## {label('unknowns', lang)}", ""]
        out += [
            f"- **{u.fact}**: {u.question} — "
            + (f"{label('needed_by', lang)}: {u.why} (`{'`, `'.join(u.rules)}`)" if u.rules else u.why)
            for u in rec.unknowns
        ]
        out.append("")
    if rec.launch:
        out += [f"## {label('launch', lang)}", ""]
        for engine, cmd in rec.launch.items():
            out += [f"{engine}:", "```sh", cmd, "```"]
        out.append("")
    out += sources(notes, lang)
    return "\n".join(out).rstrip() + "\n"


def drawing(result: AuditResult) -> str:
    """The GPUs as people picture them: NUMA nodes, NVLink domains, and which TP group uses which GPU."""
    topology = result.topology
    gpus: list[int] = topology.get("gpus") or []
    if not gpus:
        return ""
    numa = topology.get("numa_affinity") or {}
    cpu = topology.get("cpu_affinity") or {}
    domains = [d for d in topology.get("nvlink_domains") or [] if len(d) > 1]
    in_domain = {g: i for i, d in enumerate(domains) for g in d}
    group_of = {g: chr(ord("A") + i) for i, grp in enumerate(result.groups) for g in grp}
    by_node: dict[str, list[int]] = {}
    for g in gpus:
        key = str(numa.get(g) if numa.get(g) not in (None, "N/A") else cpu.get(g, "?"))
        by_node.setdefault(key, []).append(g)
    lines = []
    for node, members in by_node.items():
        lines.append(f"NUMA/CPU {node}:")
        seen: set[int] = set()
        for g in members:
            if g in seen:
                continue
            if g in in_domain:
                dom = [x for x in domains[in_domain[g]] if x in members]
                seen |= set(dom)
                cells = "══".join(f"[GPU{x}{'·' + group_of[x] if x in group_of else ''}]" for x in dom)
                links = pair_path(topology.get("paths") or {}, dom[0], dom[1]) if len(dom) > 1 else ""
                lines.append(f"  NVLink domain ({links}): {cells}")
            else:
                seen.add(g)
                lines.append(f"  PCIe: [GPU{g}{'·' + group_of[g] if g in group_of else ''}]")
    paths = topology.get("paths") or {}
    for i, grp in enumerate(result.groups):
        hops = [pair_path(paths, a, b) or "?" for a, b in zip(grp, grp[1:], strict=False)]
        lines.append(
            f"{label('tp_group', result.lang)} {chr(ord('A') + i)}: "
            + " — ".join(f"GPU{x}" for x in grp)
            + (f"  ({', '.join(hops)})" if hops else "")
        )
    return "\n".join(lines)


def audit(result: AuditResult, kb: Knowledge) -> str:
    """A ticket-ready audit report with a drawing of the machine and the path matrix."""
    lang = result.lang
    notes = Footnotes(kb, [])
    s = result.summary()
    facts = result.facts
    out = [
        f"# {label('audit', lang)}: {facts.get('gpus_per_node') or '?'} × {facts.get('gpu') or '?'}",
        "",
        f"{label('model_head', lang)}: **{facts.get('model') or '?'}** · "
        f"{label('engine', lang)}: {facts.get('engine') or '?'} · "
        + ", ".join(f"**{severity_count(k, n, lang).replace(' ', '** ', 1)}" for k, n in s.items()),
        "",
    ]
    out += [*(f"> ⚠ {p}" for p in result.problems), *([""] if result.problems else [])]
    if result.recommendation and result.recommendation.layout:
        out += [f"{label('deployed_layout', lang)}: **{result.recommendation.layout.label()}**", ""]
    picture = drawing(result)
    if picture:
        out += [f"## {label('machine', lang)}", "", "```text", picture, "```", ""]
        gpus = result.topology.get("gpus") or []
        paths = result.topology.get("paths") or {}
        if gpus and len(gpus) <= 16:
            out += ["| | " + " | ".join(f"GPU{g}" for g in gpus) + " |", "|---" * (len(gpus) + 1) + "|"]
            for a in gpus:
                out.append(
                    f"| **GPU{a}** | "
                    + " | ".join("X" if a == b else (pair_path(paths, a, b) or "?") for b in gpus)
                    + " |"
                )
            out.append("")
    out += [f"## {label('findings', lang)}", ""]
    if not result.findings:
        out.append(label("no_findings", lang))
    for f in result.findings:
        out += finding(f, kb, lang, notes)
    out.append("")
    if result.unknowns:
        out += [f"## {label('unknowns', lang)}", ""]
        out += [
            f"- **{u.fact}**: {u.question}" + (f" — {label('settled_by', lang)}: {u.settle}" if u.settle else "")
            for u in result.unknowns
        ]
        out.append("")
    out += [f"## {label('inputs', lang)}", ""]
    for i in result.inputs:
        kinds = ", ".join(i.kinds) or label("not_used", lang)
        out.append(f"- `{Path(i.path).name}`: {kinds}" + (f" — {'; '.join(i.notes)}" if i.notes else ""))
    out += ["", *sources(notes, lang)]
    return "\n".join(out).rstrip() + "\n"


def fleet(items: list[FleetItem], kb: Knowledge) -> str:
    """The fleet as a table, worst bundle first, then the totals."""
    lang = next((i.result.lang for i in items if i.result), "en")
    out = [
        f"# {label('audit', lang)}: {len(items)} bundles",
        "",
        "| | bundle | layout | " + " | ".join(s for s in ("error", "warning", "advice", "info")) + " | rules |",
        "|---|---|---|---:|---:|---:|---:|---|",
    ]
    for row in fleet_rows(items):
        counts = " | ".join(str(row.counts.get(s, "")) for s in ("error", "warning", "advice", "info"))
        rules = ", ".join(f"`{r}`" for r in row.rules) if row.error is None else cell(row.error)
        out.append(f"| **{row.worst}** | `{row.path}` | {row.layout} | {counts} | {rules} |")
    return "\n".join([*out, "", fleet_totals(items)]) + "\n"


def sizing(result: Sizing, kb: Knowledge) -> str:
    """The sizing table and the purchase advice as Markdown."""
    lang = result.lang
    notes = Footnotes(kb, [])
    users = result.input["workload"].get("concurrent_conversations")
    models = result.facts.get("independent_models") or 1
    out = [
        f"# {label('size_title', lang)}: {result.input['model']} ({result.input['precision'].upper()})",
        "",
        *([f"{models} {label('models_each', lang)}", ""] if models > 1 else []),
        f"| {label('platform', lang)} | {label('status', lang)} | {label('layout', lang)} | "
        f"{label('conversations', lang)} | {label('serves', lang)} |",
        "|---|---|---|---:|---|",
    ]
    for r in result.rows:
        conv = format_number(r.conversations, lang) if r.conversations is not None else "–"
        out.append(
            f"| {r.platform.name} | {size_status(r, lang)} | {r.rec.layout.label() if r.rec.layout else '–'} | "
            f"{conv} | {serves_word(r, users, lang)} |"
        )
    out.append("")
    if result.smallest:
        out.append(f"**{smallest_label(result)}:** {result.smallest.platform.name}")
    if result.purchase:
        out += ["", f"## {label('purchase', lang)}", ""]
        for f in result.purchase:
            out += finding(f, kb, lang, notes)
    out += ["", *sources(notes, lang)]
    return "\n".join(out).rstrip() + "\n"


BY_TYPE: dict[type, Callable[[Any, Knowledge], str]] = {
    Recommendation: recommendation,
    AuditResult: audit,
    Sizing: sizing,
    FleetItem: fleet,
}


def render(record: Any, kb: Knowledge, rules: RuleBase | None = None) -> str:
    """Any record (Recommendation, AuditResult, Sizing, or a fleet's list of FleetItem) as Markdown."""
    return pick(BY_TYPE, record, "Markdown")(record, kb)
