"""Findings a deployment accepts (deployment.yaml `accept:`): each with a rule the rule base knows, a reason,
and an expiry date not yet past; a rule about hangs or data loss cannot be accepted. Accepted findings stay
in the report, marked; every entry that is not taken says why in the file's notes.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

from advisor.audit.read import of_kind
from advisor.core.engine import Engine
from advisor.core.records import Finding
from advisor.inputs.evidence import InputFile, Parsed
from advisor.structs import replace


def suppress(
    findings: list[Finding], engine: Engine, parsed: list[Parsed], today: dt.date, inputs: list[InputFile]
) -> list[Finding]:
    """The findings with those the deployment accepts marked as accepted (with the reason and expiry)."""
    accepted: dict[str, dict[str, Any]] = {}
    for p in of_kind(parsed, "deployment"):
        notes = next(i for i in inputs if i.path == p.file).notes
        items = p.data.get("accept") or []
        if not isinstance(items, list):
            notes.append("accept: not a list of findings; ignored")
            items = []
        for item in items:
            if isinstance(item, Mapping) and item.get("rule"):
                taken = _accepted(item, engine, today, notes)
                if taken is not None:
                    accepted[str(item["rule"])] = taken
    return [replace(x, suppressed=accepted[x.rule]) if x.rule in accepted else x for x in findings]


def _accepted(item: Mapping[str, Any], engine: Engine, today: dt.date, notes: list[str]) -> dict[str, Any] | None:
    """One accept entry as taken ({reason, expires}), or None with the note that says why not."""
    rule_id = str(item["rule"])
    if rule_id not in engine.rules.rules:
        notes.append(f"accept: unknown rule {rule_id!r}")
        return None
    if not str(item.get("reason") or "").strip():
        notes.append(f"accept: {rule_id} has no reason; not accepted")
        return None
    if engine.rules.rules[rule_id].unsuppressible:
        notes.append(f"accept: {rule_id} cannot be accepted (data loss or hangs)")
        return None
    expires = item.get("expires")
    if expires is not None:
        try:
            day = expires if isinstance(expires, dt.date) else dt.date.fromisoformat(str(expires))
        except ValueError:
            notes.append(f"accept: {rule_id} has an unreadable expiry {expires!r}; not accepted")
            return None
        if day < today:
            notes.append(f"accept: {rule_id} expired on {day.isoformat()}")
            return None
        expires = day.isoformat()
    return {"reason": str(item["reason"]).strip(), "expires": expires}
