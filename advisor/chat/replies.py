"""What the advisor says in the chat, as Markdown: the recommendation in brief, why, how, why not,
what if, a pasted topology, an audit. Each function reads result records and renders them; none
decides anything. No Textual here: the transcript records these same texts.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from advisor.chat.consult import FACT_OF_PATH, RESULT_FIGURES, Question
from advisor.chat.strings import choice_label, fact_label, format_value, t
from advisor.core.layouts import Layout
from advisor.core.records import Branch, FigureTrace, Finding, Recommendation
from advisor.i18n import label, number, outline
from advisor.kb.knowledge import Citation, Knowledge
from advisor.render.common import (
    Footnotes,
    cell,
    citation_text,
    figure_cite,
    figure_rows,
    headline,
    kind_label,
    lead_finding,
    severity_text,
)

KEY_FIGURES = (
    "conversations",
    "weights_gib_per_gpu",
    "cache_gib_per_gpu",
    "decode_tokens_per_s_upper_bound",
    "prefill_allreduce_ms",
    "bubble_fraction",
)
FIGURE_UNITS = {
    "weights_gib_per_gpu": "GiB",
    "cache_gib_per_gpu": "GiB",
    "decode_tokens_per_s_upper_bound": "tokens/s",
    "prefill_allreduce_ms": "ms",
    "bubble_fraction": "1",
    "conversations": "conversations",
}
OWN_FIGURES = ("weights_gib_per_gpu", "cache_gib_per_gpu")  # labelled in strings.yaml, not in the reports' labels


def choice_text(choice: Any) -> str:
    """A fact's choice as the user types it (YAML reads `off` as False)."""
    return {False: "off", True: "on"}.get(choice, str(choice)) if isinstance(choice, bool) else str(choice)


def footnotes(rec: Recommendation, kb: Knowledge) -> Footnotes:
    """The recommendation's citations, numbered as the text and Markdown reports number them, then the
    remaining figure traces' citations."""
    notes = Footnotes(kb, [])
    figure_rows(rec, notes)
    for f in rec.findings:
        for c in f.sources:
            notes.ref(c)
    for tr in rec.traces.values():
        notes.ref(tr.cite)
        for inner in tr.inputs:
            if inner.formula or (inner.cite and inner.cite.quote):
                notes.ref(inner.cite)
    return notes


def cited(text: str, notes: list[Citation], kb: Knowledge) -> str:
    """The footnotes a text refers to, as lines to append where the marks must resolve (transcripts)."""
    used = sorted({int(n) for n in re.findall(r"\[(\d+)\]", text) if 0 < int(n) <= len(notes)})
    if not used:
        return ""
    lines = Footnotes(kb, list(notes))
    return "\n".join(f"[{n}] {lines.line(notes[n - 1])}" for n in used)


def figure_value(rec: Recommendation | None, key: str, lang: str) -> str:
    """One figure of a recommendation with its unit, or '–'."""
    if rec is None:
        return "–"
    value = rec.figures[key] if key in rec.figures else getattr(rec.machine, key, None)
    if value is None:
        return "–"
    tr = rec.traces.get(key)
    unit = tr.unit if tr else FIGURE_UNITS.get(key)
    if key == "bubble_fraction":
        unit = "1"
    if unit == "GiB" and isinstance(value, (int, float)) and value < 0:  # memory a layout lacks, not a size
        return t("memory_short", lang, short=number(-value, unit, lang))
    return number(value, unit, lang)


def figure_label(key: str, lang: str) -> str:
    """The label of a figure, as the reports name it."""
    if key in OWN_FIGURES:
        return t(f"fig_{key}", lang)
    return label("conversations_figure" if key == "conversations" else key, lang)


def serious(rec: Recommendation) -> list[Finding]:
    """The findings that warn or rule something out."""
    return [f for f in rec.findings if f.severity in ("error", "warning")]


def recommendation_brief(rec: Recommendation, notes: Footnotes) -> str:
    """The decision, its main reason, the key figures with footnotes, and any warnings."""
    lang = rec.lang
    out = [f"**{label('recommendation', lang)}: {headline(rec)}**", ""]
    lead = lead_finding(rec)
    if lead is not None:
        out += [f"{lead.explanation} {''.join(notes.ref(c) for c in lead.sources)}".rstrip(), ""]
    if rec.traces:
        out += [f"| {label('figures', lang)} | |", "|---|---:|"]
        for key in (
            "weights_gib",
            "usable_gib_per_gpu",
            "kv_gib_per_conversation",
            "conversations",
            "prefill_allreduce_ms",
            "bubble_fraction",
            "decode_tokens_per_s_upper_bound",
        ):
            tr = rec.traces.get(key)
            if tr is None or tr.value is None:
                continue
            out.append(
                f"| {cell(figure_label(key, lang))} {notes.ref(figure_cite(tr))} | {number(tr.value, tr.unit, lang)} |"
            )
        out.append("")
    warn = serious(rec)
    if warn:
        out.append(f"**{t('warnings', lang)}:**")
        out += [
            f"- **{f.title}** (`{f.rule}`): {f.explanation} {''.join(notes.ref(c) for c in f.sources)}".rstrip()
            for f in warn
        ]
        out.append("")
    return "\n".join(out).rstrip()


def result_change(before: Recommendation | None, after: Recommendation, lang: str) -> str:
    """One line after a changed fact: the layout and the result figures now, each with what it was."""
    layout = after.layout.label() if after.layout else label("no_layout", lang)
    was = (before.layout.label() if before.layout else label("no_layout", lang)) if before is not None else None
    items = [f"{layout} ({t('unchanged', lang)})" if was == layout else (f"{was} → {layout}" if was else layout)]
    for key in RESULT_FIGURES:
        now = after.figures.get(key)
        if now is None:
            continue
        tr = after.traces.get(key)
        unit = None if key == "conversations" else (tr.unit if tr else "tokens/s")
        then = before.figures.get(key) if before is not None else None
        shown = number(now, unit, lang)
        if then is not None and number(then, unit, lang) != shown:
            shown = f"{number(then, None, lang)} → {shown}"
        items.append(f"{t('fig_' + key, lang)} {shown}")
    return f"**{t('result_now', lang)}:** " + " · ".join(items)


def host_text(found: list[Finding], notes: Footnotes, lang: str) -> str:
    """The audit's findings on the layout as the pasted topology places it, with their fixes."""
    out = [f"**{t('host_findings', lang)}:**"]
    for f in found:
        line = f"- **{f.title}** (`{f.rule}`): {f.explanation} {''.join(notes.ref(c) for c in f.sources)}".rstrip()
        out.append(line + (f" {f.fix}" if f.fix else ""))
    return "\n".join(out)


def question_text(q: Question, lang: str) -> str:
    """The question as the conversation shows it, with its choices and what can be typed."""
    extra = f" — {t('choices', lang)}: " + choices_text(q.fact, q.choices, lang) if q.choices else ""
    return f"**{q.text}**{extra}  \n*({t('question_hint', lang)})*"


def choices_text(fact: str, choices: Iterable[Any], lang: str) -> str:
    """A fact's choices in the words of `lang`, as the user may type them."""
    return ", ".join(f"`{choice_label(fact, c, lang)}`" for c in choices)


def value_text(fact: str, value: Any, lang: str) -> str:
    """A fact's value as a reply shows it: a choice in the words of `lang`, other values formatted."""
    return choice_label(fact, value, lang) if isinstance(value, str) else format_value(value, lang)


def still_open_text(items: list[tuple[str, Any, tuple[Branch, ...]]], lang: str) -> str:
    """Once settled: each assumed value that could still change the answer and how, in words; or that
    none could."""
    if not items:
        return t("settled_none", lang)
    out = [f"**{t('settled_open', lang)}:**"]
    for fact, value, branches in items:
        name = fact_label(fact, lang)
        others = "; ".join(
            t("otherwise_item", lang, value=value_text(fact, b.value, lang), answer=branch_answer(b, lang))
            for b in branches
        )
        out.append(f"- {t('assumed_item', lang, fact=name, value=value_text(fact, value, lang))}; {others}")
    return "\n".join(out)


def branch_answer(b: Branch, lang: str) -> str:
    """The answer under another value: its layout (or that none fits) and the key figure beside the
    assumed one; where no figure differs, the findings that come or go (rule ids as code)."""
    text = f"**{b.layout.label() if b.layout else label('no_layout_short', lang)}**"
    extra = []
    if b.figure and b.figure_value is not None and b.assumed_value is not None:
        extra.append(
            f"{figure_label(b.figure, lang)} {number(b.figure_value, b.unit, lang)} "
            f"{label('instead_of', lang)} {number(b.assumed_value, b.unit, lang)}"
        )
    if not extra and b.gained:  # the same figures: the findings that come are the difference
        extra.append(f"{label('adds', lang)} " + ", ".join(f"`{r}`" for r in b.gained))
    if not extra and b.lost:
        extra.append(f"{label('drops', lang)} " + ", ".join(f"`{r}`" for r in b.lost))
    return text + (f" ({'; '.join(extra)})" if extra else "")


def fields_text(fields: dict[str, Any], lang: str, bold: bool = True) -> str:
    """Scenario fields as `fact = value`, comma-separated."""
    mark = "**" if bold else ""
    order = {path: i for i, path in enumerate(FACT_OF_PATH)}  # the field table's order: model, precision, GPU, ...
    return ", ".join(
        f"{fact_label(FACT_OF_PATH.get(p, p), lang)} = {mark}{value_text(FACT_OF_PATH.get(p, p), v, lang)}{mark}"
        for p, v in sorted(fields.items(), key=lambda item: order.get(item[0], len(order)))
    )


def noted_text(fields: dict[str, Any], lang: str) -> str:
    """What was understood from an answer."""
    return f"{t('noted', lang)}: " + fields_text(fields, lang)


def why_text(fact: str, lines: list[tuple[str, str]], rule_ids: Iterable[str], rules: Any, lang: str) -> str:
    """Which rules need the fact and what each answer would give."""
    name = fact_label(fact, lang)
    out = [f"**{t('why_head', lang, fact=name)}**", ""]
    ids = set(rule_ids)
    rule_lines = [(a, b) for a, b in lines if a in ids]
    answers = [(a, b) for a, b in lines if a not in ids]
    if rule_lines:
        out += [f"{t('why_rules', lang)}:", ""]
        for rid, text in rule_lines:
            title = outline(rules[rid].title.get(lang), braces=False) if rid in rules else rid
            out.append(f"- `{rid}` — {title}: {text}")
        out.append("")
    if answers:
        out += [f"{t('why_answers', lang)}:", "", f"| {t('answer', lang)} | {t('result', lang)} |", "|---|---|"]
        for a, b in answers:
            value = a.split(" = ", 1)[-1]
            out.append(f"| {cell(name)} = {cell(choice_text(value))} | {cell(b)} |")
    return "\n".join(out).rstrip()


def why_recommendation(rec: Recommendation, notes: Footnotes) -> str:
    """After the last question, 'why' explains the decision: its findings and the rejected alternatives."""
    lang = rec.lang
    title = rec.layout.label() if rec.layout else label("no_layout", lang)
    out = [f"**{t('why_rec_head', lang, layout=title)}**", ""]
    for f in rec.findings:
        out.append(
            f"- *{severity_text(f.severity, lang)}* **{f.title}** (`{f.rule}`): {f.explanation} "
            f"{''.join(notes.ref(c) for c in f.sources)}".rstrip()
        )
    if rec.alternatives:
        out += [
            "",
            f"| {label('alternatives', lang)} | {label('conversations', lang)} | {label('why_not', lang)} |",
            "|---|---:|---|",
        ]
        for a in rec.alternatives:
            conv = a.figures.get("conversations")
            out.append(
                f"| {a.layout.label()} | {number(conv, None, lang) if conv is not None else '–'} | "
                f"{cell('; '.join(a.why_not))} |"
            )
    return "\n".join(out).rstrip()


def how_text(traces: list[FigureTrace], notes: Footnotes, lang: str) -> str:
    """The chain behind the figures: each formula symbolically, with the numbers, its kind and its source."""
    out = [f"**{t('how_head', lang)}**", ""]
    for tr in traces:
        out.append(_trace(tr, notes, lang))
        for inner in tr.inputs:
            if inner.formula:
                out.append("  " + _trace(inner, notes, lang).replace("\n", "\n  "))
    return "\n".join(out).rstrip()


def _trace(tr: FigureTrace, notes: Footnotes, lang: str) -> str:
    value = number(tr.value, tr.unit, lang)
    head = f"- **{tr.title or tr.fact}** = **{value}** ({kind_label(tr, lang)}) {notes.ref(tr.cite)}".rstrip()
    lines = [head]
    if tr.formula:
        lines.append(f"  `{tr.formula}`" + (f" → `{tr.with_numbers}`" if tr.with_numbers else ""))
    elif tr.detail:
        lines.append(f"  {tr.detail}")
    if tr.assumptions:
        lines.append(f"  *{label('assumptions', lang)}: {tr.assumptions}*")
    if tr.cite and tr.cite.quote:
        lines.append(f"  > “{tr.cite.quote}”")
    return "\n".join(lines)


def why_not_text(layout: Layout, current: Recommendation, trial: Recommendation, notes: Footnotes) -> str:
    """What rules a layout out: the alternative's reason, the rules that reject or discourage it, and
    the key figures side by side with the recommendation."""
    lang = current.lang
    out = [f"**{t('why_not_head', lang, layout=layout.label())}**", ""]
    if current.layout == layout:
        out.append(t("why_not_chosen", lang, layout=layout.label()))
        return "\n".join(out)
    alt = next((a for a in current.alternatives if a.layout == layout), None)
    if alt is not None and alt.why_not:
        out += [f"{t('why_not_alternative', lang)}: " + "; ".join(alt.why_not), ""]
    against = serious(trial)
    if against:
        out += [f"{t('why_not_rules', lang)}:", ""]
        for f in against:
            out.append(
                f"- *{severity_text(f.severity, lang)}* **{f.title}** (`{f.rule}`): {f.explanation} "
                f"{''.join(notes.ref(c) for c in f.sources)}".rstrip()
            )
        out.append("")
    elif alt is None or not alt.why_not:
        out += [t("why_not_nothing", lang), ""]
    out += side_by_side(current, trial, t("recommended", lang), layout.label(), lang)
    return "\n".join(out).rstrip()


def side_by_side(a: Recommendation | None, b: Recommendation | None, head_a: str, head_b: str, lang: str) -> list[str]:
    """Layout, conversations, key figures and warnings of two recommendations as a table."""

    def layout_of(r: Recommendation | None) -> str:
        return r.layout.label() if r is not None and r.layout else "–"

    def warns(r: Recommendation | None) -> str:
        return ", ".join(f.rule for f in serious(r)) if r is not None and serious(r) else t("none", lang)

    rows = [(label("layout", lang).capitalize(), layout_of(a), layout_of(b))]
    for key in KEY_FIGURES:
        va, vb = figure_value(a, key, lang), figure_value(b, key, lang)
        if va == "–" and vb == "–":
            continue
        rows.append((figure_label(key, lang), va, vb))
    rows.append((t("figure_warnings", lang).capitalize(), warns(a), warns(b)))
    out = [f"| | {cell(head_a)} | {cell(head_b)} |", "|---|---|---|"]
    out += [f"| {cell(x)} | {cell(y)} | {cell(z)} |" for x, y, z in rows]
    return out


def what_if_text(change: dict[str, Any], before: Recommendation | None, after: Recommendation | None, lang: str) -> str:
    """The recommendation now and with the change, side by side."""
    what = fields_text(change, lang, bold=False)
    out = [f"**{t('what_if_head', lang, change=what)}**", ""]
    out += side_by_side(before, after, t("now", lang), t("what_if", lang), lang)
    out += ["", f"*{t('kept', lang)}*"]
    return "\n".join(out)


def topo_text(data: dict[str, Any], notes: list[str], set_facts: dict[str, Any], lang: str) -> str:
    """A pasted `nvidia-smi topo -m`: the GPUs, the paths between them, the NVLink domains, and the facts taken."""
    gpus = data.get("gpus", [])
    out = [
        f"**{t('topo_head', lang)}**",
        "",
        f"- {t('topo_gpus', lang)}: {len(gpus)} ({', '.join(f'GPU{g}' for g in gpus)})",
    ]
    domains = [d for d in data.get("nvlink_domains", []) if len(d) > 1]
    if domains:
        out.append(
            f"- {t('topo_domains', lang)}: " + " ".join("[" + " ".join(f"GPU{g}" for g in d) + "]" for d in domains)
        )
    else:
        out.append(f"- {t('topo_domains', lang)}: {t('topo_no_nvlink', lang)}")
    paths = data.get("paths", {})
    if gpus and len(gpus) <= 8:
        out += [
            "",
            f"{t('topo_paths', lang)}:",
            "",
            "| | " + " | ".join(f"GPU{g}" for g in gpus) + " |",
            "|---|" + "---|" * len(gpus),
        ]
        for a in gpus:
            cells = ["X" if a == b else paths.get(f"{a}-{b}") or paths.get(f"{b}-{a}") or "?" for b in gpus]
            out.append(f"| GPU{a} | " + " | ".join(cells) + " |")
    elif paths:
        counts: dict[str, int] = {}
        for key, cell_ in paths.items():
            a, b = key.split("-")
            if int(a) < int(b):
                counts[cell_] = counts.get(cell_, 0) + 1
        out.append(f"- {t('topo_paths', lang)}: " + ", ".join(f"{k} × {n}" for k, n in sorted(counts.items())))
    out += [f"- {n}" for n in notes]
    if set_facts:
        out += ["", f"{t('topo_set', lang)}: " + fields_text(set_facts, lang)]
    return "\n".join(out)


def audit_text(result: Any, path: str, lang: str) -> str:
    """An audit's inputs and findings, in the audit's order (live findings first, most severe first)."""
    out = [f"**{t('audit_head', lang, path=path)}**", ""]
    out += [*(f"⚠ {p}" for p in result.problems), *([""] if result.problems else [])]
    read = [
        f"`{i.path}` ({', '.join(i.kinds) or '?'})" + (f": {'; '.join(i.notes)}" if i.notes else "")
        for i in result.inputs
    ]
    if read:
        out.append(f"{t('audit_inputs', lang)}: " + ", ".join(read[:12]) + (" …" if len(read) > 12 else ""))
        out.append("")
    findings = result.findings
    if not findings:
        out.append(t("audit_clean", lang))
        return "\n".join(out)
    counts = ", ".join(f"{n} {s}" for s, n in result.summary().items() if n)
    out += [f"{t('audit_summary', lang)}: {counts}", ""]
    for f in findings:
        mark = f" ({t('suppressed', lang)})" if f.suppressed else ""
        out.append(f"- *{severity_text(f.severity, lang)}* **{f.title}** (`{f.rule}`){mark}: {f.explanation}")
        if f.fix:
            out.append(f"  *{label('fix', lang)}:* {f.fix}")
    return "\n".join(out)


def sources_text(notes: Footnotes, lang: str) -> str:
    """The numbered footnotes of the recommendation."""
    out = [f"**{t('sources_head', lang)}**", ""]
    out += [f"{i}. {notes.line(c)}" for i, c in enumerate(notes.items, 1)]
    return "\n".join(out)


def all_sources_text(kb: Knowledge, lang: str) -> str:
    """Every source of the knowledge base, when there is no recommendation to cite from."""
    out = [f"**{t('sources_all', lang)}**", ""]
    out += [f"- `{s.id}` {s.title} ({s.publisher}, {s.date})" for s in kb.sources.values()]
    return "\n".join(out)


def rules_text(rules: Any, lang: str) -> str:
    """Every rule: id, severity, title."""
    items = sorted(rules.values(), key=lambda r: r.id)
    out = [f"**{t('rules_head', lang, n=len(items))}**", "", f"| id | {label('severity', lang)} | |", "|---|---|---|"]
    out += [
        f"| `{r.id}` | {severity_text(r.severity, lang)} | {cell(outline(r.title.get(lang), braces=False))} |"
        for r in items
    ]
    return "\n".join(out)


def knowledge_answer(said: str, kb: Knowledge, lang: str) -> str | None:
    """The knowledge base's answer to a question typed in one's own words (knowledge/questions.yaml), with
    its sources; None where no recorded question matches."""
    from advisor.inputs.letters import fold

    text = fold(said.strip())  # "erklaer" as "erklär": text and patterns folded alike
    for q in kb.questions.values():
        patterns = [fold(p) for p in q.asked.texts.values() if p]
        if not any(re.search(p, text, re.I) for p in patterns):
            continue
        if q.conflict and q.conflict in kb.conflicts:
            c = kb.conflicts[q.conflict]
            lines = [f"**{c.title.get(lang)}** {c.resolution.get(lang)} {c.why.get(lang)}"]
            lines += [f"- {citation_text(kb, Citation(cl.source, cl.locator, cl.quote))}: {cl.says}" for cl in c.claims]
            return "\n".join(lines)
        if q.answer is not None:
            return "\n".join([q.answer.get(lang), *(f"- {citation_text(kb, c)}" for c in q.cite)])
    return None
