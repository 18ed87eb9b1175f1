"""Audit reports: text for the terminal, Markdown for the ticket (with a drawing of the machine),
JSON (schema advisor.audit/1) and SARIF 2.1.0 for code-scanning tools."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from advisor import __version__
from advisor.core.records import AUDIT_SCHEMA as SCHEMA
from advisor.core.records import AuditResult
from advisor.render.jsonout import trace
from advisor.core.engine import Engine
from advisor.inputs.evidence.topo import path as pair_path
from advisor.i18n import label
from advisor.core.records import Finding

SARIF_LEVEL = {"error": "error", "warning": "warning", "advice": "note", "info": "note"}


def _finding_dict(f: Finding) -> dict[str, Any]:
    return {
        "rule": f.rule, "severity": f.severity, "topics": list(f.topics), "title": f.title,
        "explanation": f.explanation, "fix": f.fix, "verify": list(f.verify),
        "evidence": [e.as_dict() for e in f.evidence],
        "sources": [c.as_dict() for c in f.sources],
        "suppressed": f.suppressed,
    }


def as_dict(result: AuditResult) -> dict[str, Any]:
    """The audit as the contract's JSON object."""
    return {
        "schema": SCHEMA,
        "advisor_version": __version__,
        "lang": result.lang,
        "input": [{"file": i.path, "kinds": i.kinds, "notes": i.notes} for i in result.inputs],
        "problems": result.problems,
        "facts": result.facts,
        "findings": [_finding_dict(f) for f in result.findings],
        "unknowns": [{"fact": u.fact, "question": u.question, "why": u.why, "settle": u.settle, "rules": list(u.rules)}
                     for u in result.unknowns],
        "summary": result.summary(),
        "trace": trace(result.firings),
    }


def to_json(result: AuditResult, engine: Engine) -> str:
    """JSON text of the audit."""
    return json.dumps(as_dict(result), indent=2, ensure_ascii=False, default=str) + "\n"


def to_sarif(result: AuditResult, engine: Engine) -> str:
    """SARIF 2.1.0 with every rule's metadata and one result per finding."""
    lang = result.lang
    rules = sorted(engine.rules.rules.values(), key=lambda r: r.id)
    index = {r.id: i for i, r in enumerate(rules)}
    driver = {
        "name": "advisor",
        "version": __version__,
        "informationUri": "https://github.com/",
        "rules": [
            {
                "id": r.id,
                "name": "".join(part.title() for part in r.id.split("-")),
                "shortDescription": {"text": r.title.get(lang).replace("{", "").replace("}", "")},
                "fullDescription": {"text": r.what.get(lang)},
                "help": {"text": f"{r.why.get(lang)} Example: {r.example.get(lang)}"},
                "defaultConfiguration": {"level": SARIF_LEVEL[r.severity]},
                "properties": {"tags": list(r.topics), "severity": r.severity},
            }
            for r in rules
        ],
    }
    results = []
    for f in result.findings:
        item: dict[str, Any] = {
            "ruleId": f.rule,
            "ruleIndex": index[f.rule],
            "level": SARIF_LEVEL[f.severity],
            "message": {"text": f"{f.title}: {f.explanation}"},
        }
        if f.evidence:
            item["locations"] = [
                {"physicalLocation": {"artifactLocation": {"uri": Path(e.file).as_posix()},
                                      "region": {"startLine": max(e.line, 1), "snippet": {"text": e.text}}}}
                for e in f.evidence
            ]
        if f.suppressed:
            item["suppressions"] = [{"kind": "external", "justification": f.suppressed["reason"]}]
        results.append(item)
    doc = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{"tool": {"driver": driver}, "results": results,
                  "invocations": [{"executionSuccessful": True, "toolExecutionNotifications": [
                      {"level": "warning", "message": {"text": p}} for p in result.problems]}],
                  "artifacts": [{"location": {"uri": Path(i.path).as_posix()}} for i in result.inputs]}],
    }
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def _state(f: Finding, lang: str) -> str:
    if not f.suppressed:
        return f.severity
    until = f" {label('until', lang)} {f.suppressed['expires']}" if f.suppressed.get("expires") else ""
    return f"{f.severity}, {label('accepted', lang)}{until}: {f.suppressed['reason']}"


def to_text(result: AuditResult, engine: Engine) -> str:
    """The audit for a terminal: summary, findings worst first with evidence, unknowns, input notes."""
    lang = result.lang
    s = result.summary()
    facts = result.facts
    out = [f"{label('audit', lang)}: {facts.get('gpus_per_node') or '?'} × {facts.get('gpu') or '?'} · "
           f"{label('model', lang)} {facts.get('model') or '?'} · "
           f"{', '.join(f'{n} {k}' for k, n in s.items())}", ""]
    if result.problems:
        out += [*(f"⚠ {p}" for p in result.problems), ""]
    if result.recommendation and result.recommendation.layout:
        line = f"{label('deployed_layout', lang)}: {result.recommendation.layout.label()}"
        if result.groups:
            line += f"  ({label('tp_groups', lang)}: " + "; ".join(",".join(map(str, g)) for g in result.groups) + ")"
        out.append(line)
        out.append("")
    if result.findings:
        out.append(label("findings", lang))
    for f in result.findings:
        out.append(f"  [{_state(f, lang)}] {f.title} ({f.rule})")
        out.append(f"      {f.explanation}")
        if f.fix:
            out.append(f"      {label('fix', lang)}: {f.fix}")
        for cmd in f.verify:
            out.append(f"      {label('verify', lang)}: {cmd}")
        for e in f.evidence:
            out.append(f"      {label('evidence', lang)}: {Path(e.file).name}:{e.line}: {e.text}")
        if f.sources:
            out.append(f"      {label('sources', lang)}: " + "; ".join(
                f"{c.source} ({c.locator})" for c in f.sources))
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
    return "\n".join(out) + "\n"


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
    for i, grp in enumerate(result.groups):
        paths = topology.get("paths") or {}
        hops = [pair_path(paths, a, b) or "?" for a, b in zip(grp, grp[1:])]
        lines.append(f"{label('tp_group', result.lang)} {chr(ord('A') + i)}: " + " — ".join(f"GPU{x}" for x in grp) + (f"  ({', '.join(hops)})" if hops else ""))
    return "\n".join(lines)


def to_markdown(result: AuditResult, engine: Engine) -> str:
    """A ticket-ready audit report with a drawing of the machine and the path matrix."""
    lang = result.lang
    s = result.summary()
    facts = result.facts
    out = [f"# {label('audit', lang)}: {facts.get('gpus_per_node') or '?'} × {facts.get('gpu') or '?'}",
           "", f"{label('model_head', lang)}: **{facts.get('model') or '?'}** · {label('engine', lang)}: {facts.get('engine') or '?'} · "
           + ", ".join(f"**{n}** {k}" for k, n in s.items()), ""]
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
                out.append(f"| **GPU{a}** | " + " | ".join("X" if a == b else (pair_path(paths, a, b) or "?") for b in gpus) + " |")
            out.append("")
    out += [f"## {label('findings', lang)}", ""]
    if not result.findings:
        out.append(label("no_findings", lang))
    for f in result.findings:
        out.append(f"### {_state(f, lang)}: {f.title} (`{f.rule}`)")
        out.append("")
        out.append(f.explanation)
        if f.fix:
            out.append(f"\n*{label('fix', lang)}:* {f.fix}")
        for cmd in f.verify:
            out.append(f"\n*{label('verify', lang)}:* `{cmd}`")
        if f.evidence:
            out.append(f"\n{label('evidence_head', lang)}:\n")
            out += [f"- `{Path(e.file).name}:{e.line}`: `{e.text}`" for e in f.evidence]
        if f.sources:
            out.append(f"\n{label('sources', lang)}: " + "; ".join(
                f"{engine.kb.sources[c.source].title if c.source in engine.kb.sources else c.source} ({c.locator})"
                + (f" — “{c.quote}”" if c.quote else "") for c in f.sources))
        out.append("")
    if result.unknowns:
        out += [f"## {label('unknowns', lang)}", ""]
        out += [f"- **{u.fact}**: {u.question}" + (f" — {label('settled_by', lang)}: {u.settle}" if u.settle else "") for u in result.unknowns]
        out.append("")
    out += [f"## {label('inputs', lang)}", ""]
    for i in result.inputs:
        notes = "; ".join(i.notes)
        out.append(f"- `{Path(i.path).name}`: {', '.join(i.kinds) or label('not_used', lang)}" + (f" — {notes}" if notes else ""))
    return "\n".join(out) + "\n"


def fleet_text(items: list[Any], engine: Engine) -> str:
    """One line per bundle, worst first, then the totals."""
    from advisor.kb.rules import SEVERITIES

    def rank(item: Any) -> int:
        worst = item.result.worst() if item.result else None
        return -1 if item.result is None else (SEVERITIES.index(worst) if worst else -2)

    out = []
    totals = {s: 0 for s in reversed(SEVERITIES)}
    for item in sorted(items, key=rank, reverse=True):
        if item.result is None:
            out.append(f"unusable  {item.path}: {item.error}")
            continue
        s = item.result.summary()
        for k, n in s.items():
            totals[k] += n
        layout = item.result.recommendation.layout.label() if item.result.recommendation and item.result.recommendation.layout else "-"
        worst = item.result.worst() or "clean"
        rules = ", ".join(sorted({f.rule for f in item.result.findings if f.severity in ("error", "warning") and not f.suppressed}))
        out.append(f"{worst:<8}  {item.path}  [{layout}]  " + " ".join(f"{n}{k[0]}" for k, n in s.items()) + (f"  {rules}" if rules else ""))
    unusable = sum(1 for i in items if i.result is None)
    out.append(f"{len(items)} bundles: " + ", ".join(f"{n} {k}" for k, n in totals.items()) + f", {unusable} unusable")
    return "\n".join(out) + "\n"


def fleet_json(items: list[Any], engine: Engine) -> str:
    """All bundles' audits as one JSON document: schema advisor.audit-fleet/1."""
    doc = {
        "schema": "advisor.audit-fleet/1",
        "bundles": [{"path": i.path, "error": i.error, "audit": as_dict(i.result) if i.result else None} for i in items],
    }
    return json.dumps(doc, indent=2, ensure_ascii=False, default=str) + "\n"

