"""The machine-readable recommendation: schema advisor.recommendation/1."""

from __future__ import annotations

import json
from dataclasses import asdict
from collections.abc import Iterable
from typing import Any

from advisor import __version__
from advisor.kb.knowledge import Citation
from advisor.core.records import FigureTrace, Firing, Recommendation

SCHEMA = "advisor.recommendation/1"


def _cite(c: Citation | None) -> dict[str, Any] | None:
    return None if c is None else c.as_dict()


def _trace(t: FigureTrace) -> dict[str, Any]:
    return {
        "fact": t.fact, "value": t.value, "unit": t.unit, "kind": t.kind, "formula_id": t.formula_id,
        "formula": t.formula, "with_numbers": t.with_numbers, "assumptions": t.assumptions or None,
        "source": _cite(t.cite), "detail": t.detail or None,
    }


def trace(firings: Iterable[Firing]) -> list[dict[str, Any]]:
    """Each rule's outcome (true, false, or null where a fact was unknown) with the facts it read."""
    return [f.as_dict() for f in firings]


def as_dict(rec: Recommendation) -> dict[str, Any]:
    """The recommendation as the contract's JSON object."""
    return {
        "schema": SCHEMA,
        "advisor_version": __version__,
        "rule_base": rec.rule_base_hash,
        "knowledge_base": rec.knowledge_hash,
        "lang": rec.lang,
        "input": rec.input,
        "layout": rec.layout.as_dict() if rec.layout else None,
        "layout_label": rec.layout.label() if rec.layout else None,
        "launch": rec.launch,
        "figures": rec.figures,
        "figure_traces": {k: _trace(t) for k, t in rec.traces.items()},
        "alternatives": [
            {"layout": a.layout.as_dict(), "label": a.layout.label(), "figures": a.figures,
             "why_not": list(a.why_not), "rules": list(a.rules), "rejected": a.rejected}
            for a in rec.alternatives
        ],
        "findings": [
            {"rule": f.rule, "severity": f.severity, "topics": list(f.topics), "title": f.title,
             "explanation": f.explanation, "fix": f.fix, "verify": list(f.verify), "layout": f.layout,
             "conflicts": list(f.conflicts), "facts": f.facts,
             "sources": [_cite(c) for c in f.sources], "figures": [_trace(t) for t in f.figures]}
            for f in rec.findings
        ],
        "unknowns": [asdict(u) | {"rules": list(u.rules)} for u in rec.unknowns],
        "trace": trace(rec.firings),
    }


def dumps(rec: Recommendation) -> str:
    """The JSON text, stable key order, UTF-8 characters kept."""
    return json.dumps(as_dict(rec), indent=2, ensure_ascii=False) + "\n"
