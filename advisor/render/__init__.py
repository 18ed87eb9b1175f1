"""Renderers: turn result records into text, Markdown, JSON and SARIF. They decide nothing.

One module per format (text, markdown, jsonout, sarif), each with `render(record, kb, rules)` for
every record it can show: a Recommendation, an AuditResult, a Sizing, or a fleet audit's list of
FleetItem. Pieces all formats share live in common; the catalogue listings in listings. A new
format is one new module and one line in `render` below. No renderer imports the engine.
"""

from __future__ import annotations

from typing import Any

from advisor.kb.knowledge import Knowledge
from advisor.kb.rules import RuleBase


def render(fmt: str, record: Any, kb: Knowledge, rules: RuleBase | None = None) -> str:
    """A record in a format: text, md, json or sarif (each format's module is imported only when used)."""
    if fmt == "json":
        from advisor.render import jsonout as module
    elif fmt == "md":
        from advisor.render import markdown as module  # type: ignore[no-redef]
    elif fmt == "sarif":
        from advisor.render import sarif as module  # type: ignore[no-redef]
    elif fmt == "text":
        from advisor.render import text as module  # type: ignore[no-redef]
    else:
        raise ValueError(f"unknown format {fmt!r}")
    return module.render(record, kb, rules)
