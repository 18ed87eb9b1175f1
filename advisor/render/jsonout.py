"""JSON for tools: every record as one document with a `schema` id, each id described by a JSON Schema
in advisor/schemas/ (docs/schemas.md lists them).

A finding, a figure's trace, a citation and an unknown have one shape in every document (see
advisor.render.common); fields are only ever added, never renamed or dropped, within a schema id.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

from advisor import __version__
from advisor.core.records import (
    AUDIT_SCHEMA,
    SIZING_SCHEMA,
    AuditResult,
    DeployAdvice,
    DeployOption,
    FleetItem,
    Recommendation,
    Sizing,
)
from advisor.kb.knowledge import Knowledge
from advisor.kb.rules import RuleBase
from advisor.render.common import assumption_dict, finding_dict, pick, trace, trace_dict, unknown_dict

SCHEMA = "advisor.recommendation/1"
FLEET_SCHEMA = "advisor.audit-fleet/1"


def recommendation(rec: Recommendation) -> dict[str, Any]:
    """The recommendation as the contract's JSON object: schema advisor.recommendation/1."""
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
        "figure_traces": {k: trace_dict(t) for k, t in rec.traces.items()},
        "alternatives": [
            {
                "layout": a.layout.as_dict(),
                "label": a.layout.label(),
                "figures": a.figures,
                "why_not": list(a.why_not),
                "rules": list(a.rules),
                "rejected": a.rejected,
            }
            for a in rec.alternatives
        ],
        "findings": [finding_dict(f) for f in rec.findings],
        "unknowns": [unknown_dict(u) for u in rec.unknowns],
        "input_states": rec.input_states,
        "assumptions": [assumption_dict(a) for a in rec.assumptions],
        "trace": trace(rec.firings),
    }


def audit(result: AuditResult) -> dict[str, Any]:
    """The audit as the contract's JSON object: schema advisor.audit/1."""
    return {
        "schema": AUDIT_SCHEMA,
        "advisor_version": __version__,
        "lang": result.lang,
        "input": [{"file": i.path, "kinds": i.kinds, "notes": i.notes} for i in result.inputs],
        "problems": result.problems,
        "facts": result.facts,
        "findings": [finding_dict(f, audit=True) for f in result.findings],
        "unknowns": [unknown_dict(u) for u in result.unknowns],
        "summary": result.summary(),
        "deploy": deploy(result.deploy) if result.deploy else None,
        "p2p": result.p2p,
        "trace": trace(result.firings),
    }


def deploy(advice: DeployAdvice) -> dict[str, Any]:
    """What the advisor would deploy on the audited host against what is deployed, with both estimates."""
    return {
        "differs": advice.differs,
        "deployed": _option(advice.deployed),
        "recommended": _option(advice.recommended),
        "against_deployed": list(advice.against),
    }


def _option(option: DeployOption) -> dict[str, Any]:
    return {
        "layout": option.layout.as_dict(),
        "label": option.layout.label(),
        "gpus": option.groups.text(),
        "groups": option.groups.as_json(),
        "tp_path": option.tp_path,
        "figures": dict(option.figures),
    }


def fleet(items: list[FleetItem]) -> dict[str, Any]:
    """All bundles' audits as one object: schema advisor.audit-fleet/1."""
    return {
        "schema": FLEET_SCHEMA,
        "advisor_version": __version__,
        "bundles": [{"path": i.path, "error": i.error, "audit": audit(i.result) if i.result else None} for i in items],
    }


def sizing(result: Sizing) -> dict[str, Any]:
    """The sizing as the contract's JSON object: schema advisor.sizing/1."""
    users = result.input["workload"].get("concurrent_conversations")
    return {
        "schema": SIZING_SCHEMA,
        "advisor_version": __version__,
        "lang": result.lang,
        "input": {k: v for k, v in result.input.items() if k != "hardware"},
        "platforms": [
            {
                "id": r.platform.id,
                "name": r.platform.name,
                "gpus": r.gpus,
                "status": r.status,
                "layout": r.rec.layout.as_dict() if r.rec.layout else None,
                "conversations": r.conversations,
                "serves_users": r.serves(users) if users else None,
                "figures": r.rec.figures,
            }
            for r in result.rows
        ],
        "smallest": result.smallest.platform.id if result.smallest else None,
        "purchase": [finding_dict(f) for f in result.purchase],
        "facts": result.facts,
        "trace": trace(result.firings),
    }


def as_dict(record: Any) -> dict[str, Any]:
    """Any record (Recommendation, AuditResult, Sizing, or a fleet's list of FleetItem) as its JSON object."""
    return pick(BY_TYPE, record, "JSON")(record)


BY_TYPE: dict[type, Callable[[Any], dict[str, Any]]] = {
    Recommendation: recommendation,
    AuditResult: audit,
    Sizing: sizing,
    FleetItem: fleet,
}


def finite(value: Any) -> Any:
    """The value with every NaN or infinity replaced by null: JSON has no such numbers, and a tool
    that reads `Infinity` fails (json.dumps writes it unless told not to)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


def render(record: Any, kb: Knowledge | None = None, rules: RuleBase | None = None) -> str:
    """The JSON text of any record: stable key order, UTF-8 characters kept, non-JSON values as text,
    never NaN or Infinity (allow_nan=False would fail the run, not the number)."""
    return json.dumps(finite(as_dict(record)), indent=2, ensure_ascii=False, default=str, allow_nan=False) + "\n"
