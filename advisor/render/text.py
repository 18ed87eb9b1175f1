"""The terminal report: the decision first, numbers with units, sources as footnotes."""

from __future__ import annotations

import textwrap

from advisor.i18n import format_number
from advisor.kb.knowledge import Knowledge
from advisor.i18n import label
from advisor.render.common import Footnotes, figure_rows, headline, lead_finding, scenario_line
from advisor.core.records import Recommendation

WIDTH = 100


def _wrap(text: str, indent: str) -> str:
    return textwrap.fill(text, WIDTH, initial_indent=indent, subsequent_indent=indent)


def recommendation(rec: Recommendation, kb: Knowledge) -> str:
    """A recommendation as plain text."""
    lang = rec.lang
    notes = Footnotes(kb, [])
    out = [scenario_line(rec), "", f"{label('recommendation', lang)}: {headline(rec)}"]
    lead = lead_finding(rec)
    if lead is not None:
        out.append(_wrap(lead.explanation, "  "))
    rows = figure_rows(rec, notes)
    if rows:
        out += ["", label("figures", lang)]
        width = max(len(r[0]) for r in rows)
        vwidth = max(len(r[1]) for r in rows)
        for name, value, how in rows:
            out.append(textwrap.fill(
                f"  {name:<{width}}  {value:>{vwidth}}  {how}", WIDTH,
                subsequent_indent=" " * (width + vwidth + 6),
            ))
    if rec.findings:
        out += ["", label("findings", lang)]
        for f in rec.findings:
            refs = "".join(notes.ref(c) for c in f.sources)
            out.append(f"  [{f.severity}] {f.title} ({f.rule}) {refs}")
            out.append(_wrap(f.explanation, "      "))
            if f.fix:
                out.append(_wrap(f"{label('fix', lang)}: {f.fix}", "      "))
            for cmd in f.verify:
                out.append(f"      {label('verify', lang)}: {cmd}")
            for cid in f.conflicts:
                c = kb.conflicts.get(cid)
                if c:
                    out.append(_wrap(f"{label('conflict', lang)}: {c.title.get(lang)} → {c.resolution.get(lang)}", "      "))
    if rec.alternatives:
        out += ["", label("alternatives", lang)]
        width = max(len(a.layout.label()) for a in rec.alternatives)
        for a in rec.alternatives:
            conv = a.figures.get("conversations")
            conv_text = f"{format_number(conv)} {label('conversations', lang)}" if conv is not None else ""
            why = "; ".join(a.why_not)
            out.append(textwrap.fill(
                f"  {a.layout.label():<{width}}  {conv_text:>18}  — {why}", WIDTH, subsequent_indent=" " * (width + 25)
            ))
    if rec.unknowns:
        out += ["", label("unknowns", lang)]
        for u in rec.unknowns:
            out.append(_wrap(f"{u.fact}: {u.question} — {label('needed_by', lang)}: {u.why} ({', '.join(u.rules)})", "  "))
    if rec.launch:
        out += ["", label("launch", lang)]
        for engine, cmd in rec.launch.items():
            out.append(f"  {engine}:")
            out += [f"    {line}" for line in cmd.splitlines()]
    if notes.items:
        out += ["", label("sources", lang)]
        out += [_wrap(f"[{i}] {notes.line(c)}", "  ") for i, c in enumerate(notes.items, 1)]
    return "\n".join(out) + "\n"


