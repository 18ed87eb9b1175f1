"""Pieces shared by the text and Markdown reports: numbers with units, figure rows, footnotes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from advisor.i18n import number
from advisor.kb.knowledge import Citation, Knowledge
from advisor.i18n import label
from advisor.core.records import FigureTrace, Finding, Recommendation

FIGURE_ORDER = (
    "weights_gib", "usable_gib_per_gpu", "kv_gib_per_conversation", "conversations", "allreduce_count_per_token",
    "allreduce_mib_per_token", "prefill_allreduce_ms", "bubble_fraction", "decode_tokens_per_s_upper_bound",
)


@dataclass
class Footnotes:
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
        (f for f in rec.findings if f.severity == "info"), None)


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
        rows.append((label(key if key != "conversations" else "conversations_figure", rec.lang),
                     number(t.value, t.unit, rec.lang), f"{how} {notes.ref(cite)}".strip()))
    return rows


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
    if x.gpus_per_replica == 1:
        what = f"{x.replicas} × {label('one_copy_per_gpu', lang)}" if x.replicas > 1 else "1 GPU"
        return f"{x.label()} — {what}" if x.ep > 1 else what
    copies = f"{x.replicas} {label('copies', lang)}, " if x.replicas > 1 else ""
    return f"{x.label()} — {copies}{x.gpus_per_replica} {label('gpus_per_copy', lang)}"


def scenario_line(rec: Recommendation) -> str:
    """The scenario in one line."""
    d = rec.input
    hw, wl = d["hardware"], d["workload"]
    users = wl.get("concurrent_conversations")
    nodes = f" × {hw['nodes']} nodes" if hw["nodes"] > 1 else ""
    who = f"{users} {label('conversations', rec.lang)} × " if users else ""
    return (
        f"{d['model']} · {d['precision'].upper()} (KV {d['kv_cache_dtype'].upper()}) · "
        f"{hw['gpus_per_node']} × {hw['gpu']}{nodes} · {who}{number(wl['context_tokens'], 'tokens', rec.lang)} · "
        f"{wl['kind']}, {wl['goal']}"
    )
