"""`advisor size`: one model and workload over every platform of the catalogue.

Each platform is a scenario run through the same engine as `recommend`. The rows say whether the
model fits one card, needs a split (which) or does not fit, and how many conversations it holds;
the smallest configuration that serves the users is picked; the purchase rules (scope: sizing)
turn the rows into the sizing guide's advice.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from advisor.i18n import format_number
from advisor.core.engine import Engine
from advisor.errors import InputError
from advisor.kb.knowledge import Knowledge
from advisor.i18n import label
from advisor.core.records import SIZING_SCHEMA as SCHEMA
from advisor.core.records import SizeRow, Sizing
from advisor.inputs.scenario import build



def size(
    engine: Engine,
    raw: Mapping[str, Any],
    lang: str = "en",
    where: str = "scenario",
    base_dir: Path | None = None,
    platforms: list[str] | None = None,
) -> Sizing:
    """Evaluate the scenario's model and workload on each catalogue platform."""
    kb = engine.kb
    hardware = dict(raw.get("hardware") or {})
    only_gpu = kb.find_gpu(str(hardware["gpu"])).id if hardware.get("gpu") else None
    chosen = list(kb.platforms.values())
    if platforms:
        unknown = [p for p in platforms if p not in kb.platforms]
        if unknown:
            from advisor.fuzzy import closest

            raise InputError(f"unknown platform {unknown[0]!r}", hint=closest(unknown[0], kb.platforms) or "see `advisor platforms`")
        chosen = [kb.platforms[p] for p in platforms]
    if only_gpu:
        chosen = [p for p in chosen if p.gpu == only_gpu]
        if not chosen:
            raise InputError(f"no platform in the catalogue uses {only_gpu}", hint="see `advisor platforms`")
    rows: list[SizeRow] = []
    for p in chosen:
        hw: dict[str, Any] = {"gpu": p.gpu, "gpus_per_node": p.gpus_per_node, "nodes": p.nodes}
        if p.nvlink:
            hw["nvlink"] = p.nvlink
        if p.node_link_gbps:
            hw["node_link_gbps"] = p.node_link_gbps
        scenario = build({**raw, "hardware": hw}, kb, where=where, base_dir=base_dir)
        rec = engine.evaluate(scenario, lang)
        env = rec.env
        status = "no-fit" if rec.layout is None else ("one-card" if env.get("fits_one_gpu") else "split")
        rows.append(SizeRow(p, p.gpus_per_node * p.nodes, status, rec))
    if not rows:
        raise InputError("no platform to size")
    users = rows[0].rec.input["workload"].get("concurrent_conversations")
    serving = [r for r in rows if r.serves(users)]
    smallest = min(serving, key=lambda r: (r.gpus, _warned(r), r.platform.nodes, kb.gpus[r.platform.gpu].memory_gib), default=None)
    facts = _sizing_facts(rows, kb, users)
    purchase = engine.evaluate_scope("sizing", facts, lang=lang)
    return Sizing(rows[0].rec.input, rows, smallest, purchase.findings, facts, lang, purchase.firings)


def _warned(row: SizeRow) -> bool:
    """Whether the platform's answer carries a warning or an error (FP8 without FP8 cores, ...)."""
    return any(f.severity in ("warning", "error") for f in row.rec.findings)


def _sizing_facts(rows: list[SizeRow], kb: Knowledge, users: int | None) -> dict[str, Any]:
    first = rows[0].rec.env
    single = [r for r in rows if r.rec.env.get("fits_one_gpu")]
    smallest_card = min(single, key=lambda r: kb.gpus[r.platform.gpu].memory_gib, default=None)
    needed = [int(r.rec.env["min_gpus_for_weights"]) for r in rows if r.rec.env.get("min_gpus_for_weights")]
    threshold = int(kb.settings.get("low_concurrency_users", 4))
    return {
        **{k: first.get(k) for k in ("users", "workload_kind", "independent_models", "model", "precision")},
        "fits_some_card": bool(single),
        "smallest_fitting_card": kb.gpus[smallest_card.platform.gpu].name if smallest_card else None,
        "cards_needed": min(needed) if needed else None,
        "low_concurrency": None if users is None else users <= threshold,
    }




def _status(row: SizeRow, lang: str) -> str:
    return label({"one-card": "fits_one", "split": "split", "no-fit": "no_fit"}[row.status], lang)


def _smallest_label(result: Sizing) -> str:
    """'serves the users' where users were given; without them the smallest only holds the model."""
    users = result.input["workload"].get("concurrent_conversations")
    return label("smallest" if users else "smallest_fit", result.lang)


def render_text(result: Sizing, kb: Knowledge) -> str:
    """The sizing table and advice as plain text."""
    lang = result.lang
    users = result.input["workload"].get("concurrent_conversations")
    out = [f"{label('size_title', lang)}: {result.input['model']} · {result.input['precision'].upper()} · "
           f"{format_number(result.input['workload']['context_tokens'])} tokens"
           + (f" · {users} {label('conversations', lang)}" if users else ""), ""]
    rows = [[r.platform.name, _status(r, lang), r.rec.layout.label() if r.rec.layout else "–",
             format_number(r.conversations) if r.conversations is not None else "–",
             (label("answer_yes", lang) if r.serves(users) else label("answer_no", lang)) if users else ""] for r in result.rows]
    header = [label("platform", lang), label("status", lang), label("layout", lang), label("conversations", lang),
              label("serves", lang) if users else ""]
    widths = [max(len(str(x[i])) for x in [header, *rows]) for i in range(len(header))]
    out.append("  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip())
    out += ["  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    out.append("")
    if result.smallest:
        s = result.smallest
        out.append(f"{_smallest_label(result)}: {s.platform.name} ({s.rec.layout.label() if s.rec.layout else ''})")
    else:
        out.append(f"{_smallest_label(result)}: –")
    if result.purchase:
        out += ["", label("purchase", lang)]
        for f in result.purchase:
            out.append(f"  [{f.severity}] {f.title} ({f.rule})")
            out.append(f"      {f.explanation}")
            out += [f"      {c.source}: “{c.quote}”" for c in f.sources if c.quote]
    return "\n".join(out) + "\n"


def render_markdown(result: Sizing, kb: Knowledge) -> str:
    """The sizing table and advice as Markdown."""
    lang = result.lang
    users = result.input["workload"].get("concurrent_conversations")
    out = [f"# {label('size_title', lang)}: {result.input['model']} ({result.input['precision'].upper()})", "",
           f"| {label('platform', lang)} | {label('status', lang)} | {label('layout', lang)} | {label('conversations', lang)} | {label('serves', lang)} |",
           "|---|---|---|---:|---|"]
    for r in result.rows:
        serves = (label("answer_yes", lang) if r.serves(users) else label("answer_no", lang)) if users else ""
        conv = format_number(r.conversations) if r.conversations is not None else "–"
        out.append(f"| {r.platform.name} | {_status(r, lang)} | {r.rec.layout.label() if r.rec.layout else '–'} | {conv} | {serves} |")
    out.append("")
    if result.smallest:
        out.append(f"**{_smallest_label(result)}:** {result.smallest.platform.name}")
    if result.purchase:
        out += ["", f"## {label('purchase', lang)}", ""]
        out += [f"- **{f.title}** (`{f.rule}`): {f.explanation}" for f in result.purchase]
    return "\n".join(out) + "\n"


def render_json(result: Sizing, kb: Knowledge) -> str:
    """The sizing as JSON: schema advisor.sizing/1."""
    users = result.input["workload"].get("concurrent_conversations")
    data = {
        "schema": SCHEMA,
        "input": {k: v for k, v in result.input.items() if k != "hardware"},
        "platforms": [
            {"id": r.platform.id, "name": r.platform.name, "gpus": r.gpus, "status": r.status,
             "layout": r.rec.layout.as_dict() if r.rec.layout else None, "conversations": r.conversations,
             "serves_users": r.serves(users) if users else None, "figures": r.rec.figures}
            for r in result.rows
        ],
        "smallest": result.smallest.platform.id if result.smallest else None,
        "purchase": [{"rule": f.rule, "severity": f.severity, "title": f.title, "explanation": f.explanation,
                      "sources": [c.as_dict() for c in f.sources]}
                     for f in result.purchase],
        "facts": result.facts,
        "trace": [f.as_dict() for f in result.firings],
    }
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"

