"""Listings of the rule base and the knowledge base for people: rules, a rule's page, sources,
GPUs, models, conflicts, platforms and formulas. They read the rule base and the knowledge base
they are given, never the engine."""

from __future__ import annotations

import textwrap

from advisor.i18n import format_number, label, outline
from advisor.kb.knowledge import Knowledge
from advisor.kb.rules import RuleBase
from advisor.render.common import citation_text, severity_text


def _table(rows: list[list[str]], header: list[str]) -> str:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(header, widths, strict=True)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    return "\n".join(lines) + "\n"


def list_rules(rules: RuleBase, lang: str, topic: str | None = None) -> str:
    """One line per rule: id, severity, scope/effect, topics, title."""
    rows = [
        [
            r.id,
            severity_text(r.severity, lang),
            label(f"effect_{r.effect}", lang) if r.effect != "none" else label(f"scope_{r.scope}", lang),
            ",".join(r.topics),
            outline(r.title.get(lang)),
        ]
        for r in sorted(rules.rules.values(), key=lambda r: r.id)
        if topic is None or topic in r.topics
    ]
    heads = ("id", "severity", "acts_on", "topics", "title")
    return _table(rows, [label(f"rules_head_{h}", lang) for h in heads])


def explain_rule(rules: RuleBase, kb: Knowledge, rule_id: str, lang: str) -> str:
    """A rule's page, as `ruff rule` prints one: what it does, why it matters, example, sources."""
    r = rules.get(rule_id)
    wrap = lambda text: textwrap.fill(text, 100)  # noqa: E731
    out = [
        f"{r.id}: {outline(r.title.get(lang))}",
        "",
        f"{label('severity', lang)}: {severity_text(r.severity, lang)}    "
        f"{label('topics', lang)}: {', '.join(r.topics)}    "
        f"{label('effect', lang)}: {label(f'effect_{r.effect}', lang)} ({label(f'scope_{r.scope}', lang)})",
        "",
        f"## {label('what', lang)}",
        wrap(r.what.get(lang)),
        "",
        f"## {label('why', lang)}",
        wrap(r.why.get(lang)),
        "",
        f"## {label('example', lang)}",
        wrap(r.example.get(lang)),
        "",
        f"## {label('condition', lang)}",
        f"    {r.when.text}",
        "",
    ]
    if r.fix:
        out += [f"## {label('fix', lang)}", wrap(r.fix.get(lang)), ""]
    if r.verify:
        out += [f"## {label('verify', lang)}", *[f"    {v}" for v in r.verify], ""]
    out += [f"## {label('sources', lang)}"]
    out += [wrap(f"- {citation_text(kb, c, url=False)}") for c in r.cite]
    for cid in r.conflicts:
        conflict = kb.conflicts.get(cid)
        if conflict:
            out += ["", f"## {label('conflict', lang)}: {conflict.title.get(lang)}"]
            out += [wrap(f"- {cl.source}: {cl.says}") for cl in conflict.claims]
            out.append(wrap(conflict.resolution.get(lang)))
    out += ["", f"{label('cases', lang)}: {len(r.cases_fire)} fire, {len(r.cases_quiet)} quiet ({r.where})"]
    return "\n".join(out) + "\n"


def list_sources(kb: Knowledge, lang: str) -> str:
    """Every source: id, kind, date, title, publisher, and how far to trust it."""
    out = []
    for s in sorted(kb.sources.values(), key=lambda s: (s.kind, s.id)):
        out.append(f"{s.id}  [{s.kind}, {s.language}, {s.date}] {s.title} — {s.publisher}")
        if s.url:
            out.append(f"    {s.url}")
        if s.trust:
            out.append(textwrap.fill(s.trust, 100, initial_indent="    ", subsequent_indent="    "))
    return "\n".join(out) + "\n"


def list_gpus(kb: Knowledge, lang: str) -> str:
    """The GPU catalogue as a table."""
    rows = []
    for g in kb.gpus.values():
        reported = f"{g.memory_gib_reported:g}" if g.memory_gib_reported else "?"
        nv = g.nvlink if g.nvlink == "none" else f"{g.nvlink} {format_number(g.nvlink_gbs_per_direction)}"
        p2p = {True: "yes", False: "no", None: "?"}[g.pcie_p2p]
        fmt = "/".join(x for x, ok in (("fp8", g.fp8), ("fp4", g.fp4)) if ok) or "-"
        rows.append(
            [
                g.id,
                g.name,
                f"{g.memory_gb:g}",
                reported,
                format_number(g.memory_bandwidth_gbs),
                f"Gen{g.pcie_gen}" if g.pcie_gen else "-",
                nv,
                p2p,
                fmt,
            ]
        )
    return _table(
        rows, ["id", "name", "GB", "GiB reported", "mem GB/s", "PCIe", "NVLink (GB/s each way)", "PCIe P2P", "formats"]
    )


def list_models(kb: Knowledge, lang: str) -> str:
    """The model catalogue as a table."""
    rows = []
    for m in kb.models.values():
        c = m.config
        experts = f"{c.get('num_experts')}/{c.get('num_experts_per_tok')}" if c.get("num_experts") else "-"
        params = f"{m.params_b:g}B" if m.params_b else "?"
        active = f"{m.active_params_b:g}B" if m.active_params_b else "?"
        ckpts = ", ".join(f"{k.precision} {k.stated_as}" for k in m.checkpoints) or "-"
        rows.append(
            [
                m.id,
                m.kind,
                m.attention,
                str(c.get("num_hidden_layers")),
                f"{c.get('num_attention_heads')}/{c.get('num_key_value_heads')}",
                experts,
                params,
                active,
                ckpts,
            ]
        )
    return _table(
        rows, ["id", "kind", "attn", "layers", "heads/kv", "experts/tok", "params", "active", "published checkpoints"]
    )


def list_conflicts(kb: Knowledge, lang: str) -> str:
    """Each disagreement: the claims side by side, the resolution and why."""
    out = []
    for c in kb.conflicts.values():
        out.append(f"{c.id}: {c.title.get(lang)}")
        out += [
            textwrap.fill(f"- {cl.source} ({cl.locator}): {cl.says}", 100, subsequent_indent="  ") for cl in c.claims
        ]
        out.append(textwrap.fill(f"→ {c.resolution.get(lang)}", 100, subsequent_indent="  "))
        out.append(textwrap.fill(f"  {c.why.get(lang)}", 100, subsequent_indent="  "))
        out.append("")
    return "\n".join(out)


def list_platforms(kb: Knowledge, lang: str) -> str:
    """The platforms `advisor size` compares."""
    rows = [
        [p.id, p.name, p.gpu, str(p.gpus_per_node), str(p.nodes), p.nvlink or kb.gpus[p.gpu].nvlink_fitted]
        for p in kb.platforms.values()
        if p.gpu in kb.gpus
    ]
    return _table(rows, ["id", "name", "gpu", "GPUs/node", "nodes", "nvlink"])


def list_formulas(kb: Knowledge, lang: str, sympy_form: bool = True) -> str:
    """Every formula: its result, expression, kind, unit, assumptions and source."""
    from advisor.core.formulas.calc import Calculator

    calc = Calculator(kb)
    out = []
    for fid in calc.order:
        f = calc.formulas[fid]
        out.append(f"{fid}: {f.spec.title.get(lang)}  [{label(f.spec.kind, lang)}, {f.spec.unit}]")
        out.append(f"    {f.text()}")
        if sympy_form:
            import sympy

            from advisor.core.formulas.symbolic import to_sympy

            out.append(f"    sympy: {sympy.sstr(to_sympy(f.expr))}")
        if f.spec.when:
            out.append(f"    when: {f.spec.when}")
        out.append(
            textwrap.fill(
                f"{label('assumptions', lang)}: {f.spec.assumptions.get(lang)}",
                100,
                initial_indent="    ",
                subsequent_indent="    ",
            )
        )
        quote = f": “{f.spec.cite.quote}”" if f.spec.cite.quote else ""
        out.append(
            textwrap.fill(
                f"source: {f.spec.cite.source} — {f.spec.cite.locator}{quote}",
                100,
                initial_indent="    ",
                subsequent_indent="    ",
            )
        )
    return "\n".join(out) + "\n"
