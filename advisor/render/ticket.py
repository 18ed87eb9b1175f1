"""What a support ticket needs from a result, in the result's language, for a transcript to carry.

Guarantees: every value is a plain string (or a list or mapping of them) already written in the
result's language, so a transcript shows it as it was said without the knowledge base; a
recommendation gives the question, the answer, the key figures with their units, the launch
commands, the alternatives with why not, the assumptions with the answer otherwise and the open
questions; an audit gives the findings with their evidence lines, the layout it found deployed and,
from the audit's own `deploy` record (advisor/audit/deploy.py, never recomputed here), the layout the
advisor would deploy instead on the host's GPU ids with the estimated difference, or that the deployed
one is what it would deploy.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from advisor.core.records import AuditResult, DeployAdvice, Recommendation
from advisor.i18n import format_number, label, localize_digits
from advisor.kb.knowledge import Knowledge
from advisor.render.common import Footnotes, assumption_line, branch_text, figure_rows, headline, scenario_line


def brief(result: Any, kb: Knowledge) -> dict[str, Any] | None:
    """The ticket block of a recommendation or an audit (None for anything else)."""
    if isinstance(result, Recommendation):
        return recommendation(result, kb)
    if isinstance(result, AuditResult):
        return audit(result, kb)
    return None


def recommendation(rec: Recommendation, kb: Knowledge) -> dict[str, Any]:
    """Question, answer, key figures, launch commands, alternatives, assumptions and open questions."""
    return {
        "question": scenario_line(rec),
        "answer": headline(rec),
        "layout": rec.layout.label() if rec.layout else "",
        "figures": [[name, value] for name, value, _how in figure_rows(rec, Footnotes(kb, []))],
        "launch": dict(rec.launch),
        "alternatives": [{"layout": a.layout.label(), "why_not": "; ".join(a.why_not)} for a in rec.alternatives],
        "assumptions": [
            {
                "assumed": f"{assumption_line(a)}. {a.why}".strip(),
                "otherwise": [branch_text(b, a.lang) for b in a.otherwise],
            }
            for a in rec.assumptions
        ],
        "open_questions": [u.question for u in rec.unknowns],
    }


def audit(result: AuditResult, kb: Knowledge) -> dict[str, Any]:
    """The files audited, the findings with their evidence lines, and the layout the host runs."""
    deployed = result.recommendation
    return {
        "question": ", ".join(Path(i.path).name for i in result.inputs),
        "answer": ", ".join(
            f"{n} {label('severity_' + severity, result.lang)}" for severity, n in result.summary().items() if n
        ),
        "findings": [
            {
                "rule": f.rule,
                "severity": f.severity,
                "title": f.title,
                "fix": f.fix or "",
                "evidence": [
                    (f"{Path(e.file).name}:{e.line}: " if getattr(e, "file", None) else "") + str(e.text)
                    for e in f.evidence
                ],
            }
            for f in result.findings
        ],
        "deployed": deployed.layout.label() if deployed is not None and deployed.layout else "",
        **({"deploy": deploy(result.deploy, result.lang)} if result.deploy is not None else {}),
    }


_FIGURE_UNITS = {
    "one_user_tokens_per_s": "tokens/s",
    "tokens_per_s_per_user_at_load": "tokens/s",
    "throughput_tokens_per_s": "tokens/s",
    "ttft_ms": "ms",
}


def deploy(advice: DeployAdvice, lang: str) -> dict[str, Any]:
    """What the advisor would deploy on the audited host (layout, GPU ids, each estimate against the
    deployed one's with the change in per cent), or the deployed layout confirmed with its figures."""
    new, old = advice.recommended, advice.deployed
    difference = []
    for name, unit in _FIGURE_UNITS.items():
        mine, theirs = new.figures.get(name), old.figures.get(name)
        if mine is None:
            continue
        named = label("unit_" + unit, lang) if unit != "ms" else unit
        shown = f"{_shown(mine, lang)} {named}"
        if advice.differs and theirs:
            change = localize_digits(f"{(mine - theirs) / theirs * 100:+.0f} %", lang)
            shown += f" {label('against', lang)} {_shown(theirs, lang)} {named} ({change})"
        difference.append([label(name, lang), shown])
    return {
        "differs": advice.differs,
        "layout": new.layout.label(),
        "gpus": new.groups.text(),
        "deployed_layout": old.layout.label(),
        "deployed_gpus": old.groups.text(),
        "difference": difference,
        "against": list(advice.against),
    }


def _shown(value: float, lang: str) -> str:
    """An estimate as the audit's findings print it: three significant digits."""
    return format_number(float(f"{value:.3g}"), lang)
