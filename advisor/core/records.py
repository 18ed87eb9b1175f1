"""Result records: what the engine concluded, with the trace back to rules, formulas and sources.

Every way into the advisor (recommend, size, audit, chat) produces these records, and every
renderer (text, Markdown, JSON, chat) reads only them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from advisor.kb.knowledge import Citation, Platform
from advisor.core.layouts import Layout
from advisor.inputs.evidence import InputFile
from advisor.kb.rules import SEVERITIES


@dataclass(frozen=True)
class FigureTrace:
    """How one figure was obtained: the formula symbolically, with numbers, and its source."""

    fact: str
    value: Any
    unit: str | None
    kind: str  # exact | estimate | upper-bound | input | default | catalogue | derived | layout
    formula_id: str | None = None
    formula: str | None = None
    with_numbers: str | None = None
    title: str = ""
    assumptions: str = ""
    cite: Citation | None = None
    detail: str = ""
    shows_input: bool = False
    inputs: tuple[FigureTrace, ...] = ()


@dataclass(frozen=True)
class Firing:
    """A rule that fired (or could not be decided) on a set of facts."""

    rule: str
    outcome: bool | None
    facts: dict[str, Any]
    layout: Layout | None = None

    def as_dict(self) -> dict[str, Any]:
        """The contract's trace entry: the rule, its outcome (null: a fact was unknown), the facts it read."""
        return {"rule": self.rule, "outcome": self.outcome, "layout": self.layout.label() if self.layout else None,
                "facts": self.facts}


@dataclass(frozen=True)
class Finding:
    """A fired rule as the user sees it."""

    rule: str
    severity: str
    topics: tuple[str, ...]
    title: str
    explanation: str
    sources: tuple[Citation, ...]
    fix: str | None = None
    verify: tuple[str, ...] = ()
    figures: tuple[FigureTrace, ...] = ()
    facts: dict[str, Any] = field(default_factory=dict)
    layout: str | None = None
    conflicts: tuple[str, ...] = ()
    evidence: tuple[Any, ...] = ()
    suppressed: dict[str, Any] | None = None


@dataclass(frozen=True)
class Alternative:
    """A layout that was not chosen, its figures, and why not."""

    layout: Layout
    figures: dict[str, Any]
    why_not: tuple[str, ...]
    rules: tuple[str, ...] = ()
    rejected: bool = False


@dataclass(frozen=True)
class Unknown:
    """A fact the advisor did not have, the question that settles it, and which rule needs it."""

    fact: str
    question: str
    why: str
    rules: tuple[str, ...] = ()
    settle: str | None = None


@dataclass(frozen=True)
class Machine:
    """The hardware as the engine saw it, and one used GPU's memory in GiB under the chosen layout."""

    total_gpus: int
    gpus_per_node: int
    nvlink: str
    nvlink_domain_size: int
    gpu_mem_gib: float
    usable_gib_per_gpu: float
    weights_gib_per_gpu: float
    cache_gib_per_gpu: float

    @classmethod
    def from_facts(cls, env: Mapping[str, Any]) -> Machine:
        """The machine from the engine's facts; a missing figure reads as 0 (nothing to draw)."""

        def num(name: str, default: float = 0.0) -> float:
            value = env.get(name)
            return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else default

        per_node = int(num("gpus_per_node", 1)) or 1
        return cls(
            total_gpus=int(num("total_gpus", per_node)) or per_node,
            gpus_per_node=per_node,
            nvlink=str(env.get("nvlink") or "none"),
            nvlink_domain_size=int(num("nvlink_domain_size", 1)) or 1,
            gpu_mem_gib=num("gpu_mem_gib"),
            usable_gib_per_gpu=num("usable_gib_per_gpu"),
            weights_gib_per_gpu=num("weights_gib_per_gpu"),
            cache_gib_per_gpu=num("cache_gib_per_gpu"),
        )


@dataclass
class Recommendation:
    """The answer to one scenario."""

    input: dict[str, Any]
    layout: Layout | None
    figures: dict[str, Any]
    alternatives: list[Alternative]
    findings: list[Finding]
    unknowns: list[Unknown]
    launch: dict[str, str]
    lang: str = "en"
    firings: list[Firing] = field(default_factory=list)
    trace_builder: Callable[[], dict[str, FigureTrace]] | None = field(default=None, repr=False)
    env: dict[str, Any] = field(default_factory=dict)
    trace: dict[str, str] = field(default_factory=dict)
    rule_base_hash: str = ""
    knowledge_hash: str = ""

    @cached_property
    def traces(self) -> dict[str, FigureTrace]:
        """How each contract figure was obtained, built on first use (an audit seldom needs them)."""
        return self.trace_builder() if self.trace_builder else {}

    @cached_property
    def machine(self) -> Machine:
        """The hardware and one GPU's memory split, typed, for the panels and drawings."""
        return Machine.from_facts(self.env)

    def finding(self, rule_id: str) -> Finding | None:
        """The finding of a rule, if it fired."""
        return next((f for f in self.findings if f.rule == rule_id), None)


AUDIT_SCHEMA = "advisor.audit/1"


@dataclass
class AuditResult:
    """Everything the audit concluded."""

    inputs: list[InputFile]
    facts: dict[str, Any]
    findings: list[Finding]
    unknowns: list[Unknown]
    recommendation: Recommendation | None
    topology: dict[str, Any] = field(default_factory=dict)
    groups: list[list[int]] = field(default_factory=list)
    lang: str = "en"
    problems: list[str] = field(default_factory=list)  # what kept the audit from checking everything
    firings: list[Firing] = field(default_factory=list)  # every rule's outcome: the deployment's, then the host's

    def summary(self) -> dict[str, int]:
        """Unsuppressed findings per severity."""
        counts = {s: 0 for s in reversed(SEVERITIES)}
        for f in self.findings:
            if not f.suppressed:
                counts[f.severity] += 1
        return counts

    def worst(self) -> str | None:
        """The most severe unsuppressed finding's severity."""
        live = [SEVERITIES.index(f.severity) for f in self.findings if not f.suppressed]
        return SEVERITIES[max(live)] if live else None


@dataclass
class FleetItem:
    """One bundle of a fleet audit: its result, or why it could not be audited."""

    path: str
    result: AuditResult | None
    error: str | None = None


SIZING_SCHEMA = "advisor.sizing/1"


@dataclass
class SizeRow:
    """One platform's answer."""

    platform: Platform
    gpus: int
    status: str  # one-card | split | no-fit
    rec: Recommendation

    @property
    def conversations(self) -> int | None:
        """Conversations the chosen layout holds."""
        return self.rec.figures.get("conversations")

    def serves(self, users: int | None) -> bool:
        """Whether the platform holds the users (any fit counts when no user count is given)."""
        if self.rec.layout is None:
            return False
        return users is None or (self.conversations or 0) >= users


@dataclass
class Sizing:
    """All rows, the smallest platform that serves, and the purchase advice."""

    input: dict[str, Any]
    rows: list[SizeRow]
    smallest: SizeRow | None
    purchase: list[Finding]
    facts: dict[str, Any] = field(default_factory=dict)
    lang: str = "en"
    firings: list[Firing] = field(default_factory=list)  # the sizing rules' outcomes on the facts
