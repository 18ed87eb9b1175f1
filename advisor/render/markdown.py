"""The Markdown report: pastes into a ticket, sources as numbered footnotes."""

from __future__ import annotations

from advisor.i18n import format_number
from advisor.kb.knowledge import Knowledge
from advisor.i18n import label
from advisor.render.common import Footnotes, cell, figure_rows, headline, scenario_line
from advisor.core.records import Recommendation


def recommendation(rec: Recommendation, kb: Knowledge) -> str:
    """A recommendation as Markdown."""
    lang = rec.lang
    notes = Footnotes(kb, [])
    out = [f"# {label('recommendation', lang)}: {headline(rec)}", "", f"*{scenario_line(rec)}*", ""]
    rows = figure_rows(rec, notes)
    if rows:
        out += [f"## {label('figures', lang)}", "", "| | | |", "|---|---:|---|"]
        out += [f"| {cell(a)} | {cell(b)} | {cell(c)} |" for a, b, c in rows]
        out.append("")
    if rec.findings:
        out += [f"## {label('findings', lang)}", ""]
        for f in rec.findings:
            refs = "".join(notes.ref(c) for c in f.sources)
            out.append(f"- **{f.severity}** — **{f.title}** (`{f.rule}`) {refs}  ")
            out.append(f"  {f.explanation}")
            if f.fix:
                out.append(f"  *{label('fix', lang)}:* {f.fix}")
            for cmd in f.verify:
                out.append(f"  *{label('verify', lang)}:* `{cmd}`")
            for cid in f.conflicts:
                c = kb.conflicts.get(cid)
                if c:
                    out.append(f"  *{label('conflict', lang)}:* {c.title.get(lang)} → {c.resolution.get(lang)}")
        out.append("")
    if rec.alternatives:
        out += [f"## {label('alternatives', lang)}", "", f"| {label('layout', lang)} | {label('conversations', lang)} | {label('why_not', lang)} |", "|---|---:|---|"]
        for a in rec.alternatives:
            conv = a.figures.get("conversations")
            out.append(f"| {a.layout.label()} | {format_number(conv) if conv is not None else '–'} | {cell('; '.join(a.why_not))} |")
        out.append("")
    if rec.unknowns:
        out += [f"## {label('unknowns', lang)}", ""]
        out += [f"- **{u.fact}**: {u.question} — {label('needed_by', lang)}: {u.why} (`{'`, `'.join(u.rules)}`)" for u in rec.unknowns]
        out.append("")
    if rec.launch:
        out += [f"## {label('launch', lang)}", ""]
        for engine, cmd in rec.launch.items():
            out += [f"{engine}:", "```sh", cmd, "```"]
        out.append("")
    if notes.items:
        out += [f"## {label('sources', lang)}", ""]
        out += [f"{i}. {notes.line(c)}" for i, c in enumerate(notes.items, 1)]
    return "\n".join(out).rstrip() + "\n"
