"""Result records: what the engine concluded, with the trace back to rules, formulas and sources.

Every way into the advisor (recommend, size, audit, chat) produces these records, and every
renderer (text, Markdown, JSON, chat) reads only them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cached_property
from typing import TYPE_CHECKING, Any

from advisor.core.layouts import Layout
from advisor.i18n import DEFAULT_LANG, Message, Text
from advisor.kb.knowledge import Citation, Platform
from advisor.kb.rules import SEVERITIES
from advisor.structs import Struct, field, replace

if TYPE_CHECKING:  # an annotation only: the recommend path does not load the evidence readers
    from advisor.core.host_placement import HostGroups
    from advisor.inputs.evidence import InputFile

NO_TEXT = Text()


class FigureTrace(Struct):
    """How one figure was obtained: the formula symbolically, with numbers, and its source.

    Its words are kept in every language; `lang` picks the one its text properties read."""

    fact: str
    value: Any
    unit: str | None
    kind: str  # exact | estimate | upper-bound | lower-bound | input | default | catalogue | derived | layout
    formula_id: str | None = None
    formula: str | None = None
    numbers: Message | None = None
    title_text: Text = NO_TEXT
    assumptions_text: Text = NO_TEXT
    cite: Citation | None = None
    detail: str = ""
    shows_input: bool = False
    inputs: tuple[FigureTrace, ...] = ()
    lang: str = DEFAULT_LANG

    @property
    def title(self) -> str:
        """What the figure is, in the trace's language."""
        return self.title_text.get(self.lang)

    @property
    def assumptions(self) -> str:
        """What the formula assumes, in the trace's language."""
        return self.assumptions_text.get(self.lang)

    @property
    def with_numbers(self) -> str | None:
        """The formula with the numbers in place of the names, written as the language writes numbers."""
        return self.numbers.render(self.lang) if self.numbers is not None else None

    def in_lang(self, lang: str) -> FigureTrace:
        """The same trace, read in `lang`."""
        return replace(self, lang=lang, inputs=tuple(t.in_lang(lang) for t in self.inputs))


class Firing(Struct):
    """A rule that fired (or could not be decided) on a set of facts."""

    rule: str
    outcome: bool | None
    facts: dict[str, Any]
    layout: Layout | None = None

    def as_dict(self) -> dict[str, Any]:
        """The contract's trace entry: the rule, its outcome (null: a fact was unknown), the facts it read."""
        return {
            "rule": self.rule,
            "outcome": self.outcome,
            "layout": self.layout.label() if self.layout else None,
            "facts": self.facts,
        }


class Finding(Struct):
    """A fired rule as the user sees it: its texts as messages, read in `lang` by the text properties."""

    rule: str
    severity: str
    topics: tuple[str, ...]
    title_text: Message
    explanation_text: Message
    sources: tuple[Citation, ...]
    fix_text: Message | None = None
    verify_text: tuple[Message, ...] = ()
    figures: tuple[FigureTrace, ...] = ()
    facts: dict[str, Any] = field(default_factory=dict)
    layout: str | None = None
    conflicts: tuple[str, ...] = ()
    evidence: tuple[Any, ...] = ()
    suppressed: dict[str, Any] | None = None
    lang: str = DEFAULT_LANG

    @property
    def title(self) -> str:
        """The rule's title with the facts filled in."""
        return self.title_text.render(self.lang)

    @property
    def explanation(self) -> str:
        """Why it matters here, with the numbers."""
        return self.explanation_text.render(self.lang)

    @property
    def fix(self) -> str | None:
        """What to do, where the rule says."""
        return self.fix_text.render(self.lang) if self.fix_text is not None else None

    @property
    def verify(self) -> tuple[str, ...]:
        """Commands that check it."""
        return tuple(m.render(self.lang) for m in self.verify_text)

    def in_lang(self, lang: str) -> Finding:
        """The same finding, read in `lang`."""
        return replace(self, lang=lang, figures=tuple(t.in_lang(lang) for t in self.figures))


class Alternative(Struct):
    """A layout that was not chosen, its figures, and why not."""

    layout: Layout
    figures: dict[str, Any]
    why_not_text: tuple[Message, ...]
    rules: tuple[str, ...] = ()
    rejected: bool = False
    lang: str = DEFAULT_LANG

    @property
    def why_not(self) -> tuple[str, ...]:
        """The reasons, in the alternative's language."""
        return tuple(m.render(self.lang) for m in self.why_not_text)

    def in_lang(self, lang: str) -> Alternative:
        """The same alternative, read in `lang`."""
        return replace(self, lang=lang)


class Unknown(Struct):
    """A fact the advisor did not have, the question that settles it, and which rule needs it."""

    fact: str
    question_text: Text
    why_text: Message
    rules: tuple[str, ...] = ()
    settle_text: Text | None = None
    lang: str = DEFAULT_LANG

    @property
    def question(self) -> str:
        """The question that settles the fact."""
        return self.question_text.get(self.lang)

    @property
    def why(self) -> str:
        """What the answer could change."""
        return self.why_text.render(self.lang)

    @property
    def settle(self) -> str | None:
        """How to find the answer (a command), where known."""
        return self.settle_text.get(self.lang) if self.settle_text is not None else None

    def in_lang(self, lang: str) -> Unknown:
        """The same unknown, read in `lang`."""
        return replace(self, lang=lang)


class Branch(Struct):
    """The answer under another value of an assumed fact: its layout, the key figure that differs
    (beside its value under the assumption), and the findings that come or go."""

    value: Any
    layout: Layout | None
    figure: str | None = None  # a contract figure's name (Recommendation.figures)
    figure_value: Any = None
    assumed_value: Any = None  # the same figure under the assumed value
    unit: str | None = None
    gained: tuple[str, ...] = ()
    lost: tuple[str, ...] = ()


class Assumption(Struct):
    """A fact the user did not state whose assumed value changes the answer: why it was assumed, what
    reads it, and the answer under each other value that changes it."""

    fact: str
    value: Any
    state: str  # default | unknown (see advisor.core.facts.Origin.state)
    reason_text: Message
    why_text: Message
    otherwise: tuple[Branch, ...]
    rules: tuple[str, ...] = ()
    formulas: tuple[str, ...] = ()
    question_text: Text | None = None
    settle_text: Text | None = None
    lang: str = DEFAULT_LANG

    @property
    def reason(self) -> str:
        """Why this value was taken, in the assumption's language."""
        return self.reason_text.render(self.lang)

    @property
    def why(self) -> str:
        """What the fact is and what reads it."""
        return self.why_text.render(self.lang)

    @property
    def question(self) -> str | None:
        """The question that settles the fact."""
        return self.question_text.get(self.lang) if self.question_text is not None else None

    @property
    def settle(self) -> str | None:
        """How to find the value out on the host, where known."""
        return self.settle_text.get(self.lang) if self.settle_text is not None else None

    def in_lang(self, lang: str) -> Assumption:
        """The same assumption, read in `lang`."""
        return replace(self, lang=lang)


class Machine(Struct):
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


class Recommendation(Struct, frozen=False):
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
    input_states: dict[str, str] = field(default_factory=dict)  # input fact: given | evidence | default | unknown
    assumption_builder: Callable[[], list[Assumption]] | None = field(default=None, repr=False)

    @cached_property
    def assumptions(self) -> list[Assumption]:
        """The defaults that change the answer, each with the answer otherwise; evaluated on first use
        (advisor.core.assumptions), read in the recommendation's language."""
        return [a.in_lang(self.lang) for a in self.assumption_builder()] if self.assumption_builder else []

    def __getstate__(self) -> dict[str, Any]:
        # The builders are closures over the engine: a pickled copy (a fleet audit's worker) keeps what
        # they built so far and drops them.
        state = dict(self.__dict__)
        state["trace_builder"] = state["assumption_builder"] = None
        return state

    @cached_property
    def traces(self) -> dict[str, FigureTrace]:
        """How each contract figure was obtained, built on first use (an audit seldom needs them)."""
        return self.trace_builder() if self.trace_builder else {}

    @cached_property
    def machine(self) -> Machine:
        """The hardware and one GPU's memory split, typed, for the panels and drawings."""
        return Machine.from_facts(self.env)

    def in_lang(self, lang: str) -> Recommendation:
        """The same recommendation, read in `lang`: nothing is evaluated again."""
        if lang == self.lang:
            return self
        source = self

        def traces() -> dict[str, FigureTrace]:
            return {k: t.in_lang(lang) for k, t in source.traces.items()}

        return replace(
            self,
            lang=lang,
            findings=[f.in_lang(lang) for f in self.findings],
            alternatives=[a.in_lang(lang) for a in self.alternatives],
            unknowns=[u.in_lang(lang) for u in self.unknowns],
            trace_builder=traces if self.trace_builder is not None else None,
        )

    def finding(self, rule_id: str) -> Finding | None:
        """The finding of a rule, if it fired."""
        return next((f for f in self.findings if f.rule == rule_id), None)


AUDIT_SCHEMA = "advisor.audit/1"


DEPLOY_FIGURES = {
    "one_user_tokens_per_s": "one_user_tps",
    "tokens_per_s_per_user_at_load": "user_tps_at_load",
    "throughput_tokens_per_s": "throughput_tps",
    "ttft_ms": "ttft_ms",
}


class DeployOption(Struct):
    """A layout on the host's GPU ids, with the farthest topo -m path of its TP groups and its estimates
    (the contract's names of DEPLOY_FIGURES)."""

    layout: Layout
    groups: HostGroups
    tp_path: str | None
    figures: Mapping[str, float | None]


class DeployAdvice(Struct):
    """The deployed layout against the advisor's recommendation for the host the audit read."""

    deployed: DeployOption
    recommended: DeployOption
    differs: bool  # another layout, or the same on GPUs with a shorter path
    against: tuple[str, ...] = ()  # rules that reject or discourage the deployed layout and not the recommended


class AuditResult(Struct, frozen=False):
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
    replay: dict[str, Any] = field(default_factory=dict)  # what a transcript keeps to judge the facts again
    deploy: DeployAdvice | None = None  # what the advisor would deploy on this host (a known model only)
    p2p: dict[str, Any] = field(default_factory=dict)  # peer-to-peer per pair of GPUs: state, why, evidence

    def in_lang(self, lang: str) -> AuditResult:
        """The same audit, read in `lang`."""
        if lang == self.lang:
            return self
        return replace(
            self,
            lang=lang,
            findings=[f.in_lang(lang) for f in self.findings],
            unknowns=[u.in_lang(lang) for u in self.unknowns],
            recommendation=self.recommendation.in_lang(lang) if self.recommendation else None,
        )

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


class FleetItem(Struct, frozen=False):
    """One bundle of a fleet audit: its result, or why it could not be audited."""

    path: str
    result: AuditResult | None
    error: str | None = None


SIZING_SCHEMA = "advisor.sizing/1"


class SizeRow(Struct, frozen=False):
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


class Sizing(Struct, frozen=False):
    """All rows, the smallest platform that serves, and the purchase advice."""

    input: dict[str, Any]
    rows: list[SizeRow]
    smallest: SizeRow | None
    purchase: list[Finding]
    facts: dict[str, Any] = field(default_factory=dict)
    lang: str = "en"
    firings: list[Firing] = field(default_factory=list)  # the sizing rules' outcomes on the facts

    def in_lang(self, lang: str) -> Sizing:
        """The same sizing, read in `lang`."""
        if lang == self.lang:
            return self
        rows = [replace(row, rec=row.rec.in_lang(lang)) for row in self.rows]
        smallest = next((new for new, old in zip(rows, self.rows, strict=True) if old is self.smallest), None)
        return replace(self, lang=lang, rows=rows, smallest=smallest, purchase=[f.in_lang(lang) for f in self.purchase])
