"""A consultation: the facts gathered so far, the next question worth asking, and the answers to
"why?", "how?", "why not X?" and "what if?". The chat app shows this; it decides nothing itself.

Questions are chosen by value of information: a fact a rule needs and cannot decide without comes
first; otherwise each unstated fact's plausible answers are tried, and the fact whose answers change
the result most (the layout or a warning first, then the conversations that fit and the estimated
speeds, by their relative change) is asked. A fact whose every answer gives the same result is never
asked. Serving or training is not asked once the user counts conversations (only a served model has
them), and host questions (IOMMU, ACS, peer-to-peer, virtualization) are not asked while the servers
are still being planned: a machine not bought has no host state to look up.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from advisor.chat.strings import t
from advisor.core.assumptions import answer_key, branch, trials
from advisor.core.engine import Engine
from advisor.core.layouts import Layout
from advisor.core.records import Branch, FigureTrace, Finding, Recommendation
from advisor.errors import AdvisorError
from advisor.i18n import number
from advisor.inputs.fields import field_table
from advisor.inputs.freetext import Understood, understand
from advisor.inputs.scenario import build
from advisor.structs import replace

REQUIRED = ("model", "gpu", "gpus_per_node")
ASK_ORDER = (
    "model",
    "gpu",
    "gpus_per_node",
    "users",
    "context_tokens",
    "goal",
    "precision",
    "kv_cache_dtype",
    "nvlink",
    "p2p",
    "iommu",
    "acs",
    "virtualized",
    "gpus_per_socket",
    "nodes",
    "node_link_gbs",
    "workload_kind",
    "max_num_seqs",
    "max_num_batched_tokens",
)
# The values tried for a fact before it is asked. Precision is not among the recommendation's
# assumptions (its default is the model's own), yet FP8 or INT4 weights can decide whether and how the
# model fits, so it is tried here.
PROBES: dict[str, tuple[Any, ...]] = {
    "precision": ("bf16", "fp8", "int4"),
    "users": (1, 16, 64, 256),
    "context_tokens": (2048, 32768, 131072),
    "goal": ("throughput", "latency", "capacity"),
    "kv_cache_dtype": ("bf16", "fp8"),
    "workload_kind": ("inference", "training"),
}
# The figures a user reads as the result besides the layout and warnings; a relative change below
# MIN_CHANGE is rounding, not an answer worth a question.
RESULT_FIGURES = ("conversations", "one_user_tokens_per_s", "throughput_tokens_per_s")
MIN_CHANGE = 0.05
# Facts only a running host can answer: not asked while the servers are still being planned.
HOST_FACTS = ("p2p", "iommu", "acs", "virtualized")
# Fact name to scenario path, for every field of the field table (knowledge/fields.yaml).
PATHS = field_table().paths()
FACT_OF_PATH = {v: k for k, v in PATHS.items()}
_MISSING = object()


@dataclass(frozen=True)
class Question:
    """A question for one fact, and the rules that want it."""

    fact: str
    text: str
    rules: tuple[str, ...] = ()
    choices: tuple[str, ...] = ()


def outcome(rec: Recommendation | None) -> tuple[Any, ...] | None:
    """What a user would see change: the layout, and the findings that advise, warn or refuse (the
    same test that decides which assumptions a recommendation lists)."""
    return answer_key(rec)


def figures(rec: Recommendation | None) -> dict[str, float]:
    """The result figures a user compares: conversations that fit and the estimated speeds."""
    if rec is None:
        return {}
    return {k: float(rec.figures[k]) for k in RESULT_FIGURES if rec.figures.get(k) is not None}


def figure_text(key: str, value: float, lang: str) -> str:
    """A result figure as a reply names it: 'conversations 83', 'one user 42.3 tokens/s'."""
    return f"{t('fig_' + key, lang)} {number(value, None if key == 'conversations' else 'tokens/s', lang)}"


def change(base: Recommendation | None, trial: Recommendation | None) -> float:
    """How much an answer changes the result: 1 for another layout or other warnings, else the largest
    relative change of the result figures (0 below MIN_CHANGE)."""
    if outcome(base) != outcome(trial):
        return 1.0
    before, after = figures(base), figures(trial)
    moved = [abs(after[k] - v) / abs(v) for k, v in before.items() if k in after and v]
    most = max(moved, default=0.0)
    return min(most, 0.99) if most >= MIN_CHANGE else 0.0


def planning(text: str) -> bool:
    """Whether the customer says the servers are still to be bought (in English or German)."""
    return any(re.search(t("planning_pattern", lang), text, re.I) for lang in ("en", "de"))


class Consultation:
    """Facts gathered from free-text answers, evaluated by the engine after every answer."""

    def __init__(self, engine: Engine, lang: str = "en") -> None:
        self.engine = engine
        self.lang = lang
        self.fields: dict[str, Any] = {}
        self.skipped: set[str] = set()
        self.asked: Question | None = None
        self.rec: Recommendation | None = None
        self.error: str | None = None
        self.planning = False  # the servers are not bought yet: no host questions
        self.evidence: Any = None  # facts read from a pasted topo -m (advisor.core.facts.Facts)
        self.topology: dict[str, Any] = {}
        self.host: list[Finding] = []  # the audit's findings on the layout placed on that topology
        self._tried: dict[str, tuple[Any, ...]] | None = None

    # --- state --------------------------------------------------------------------------------

    def raw(self, fields: dict[str, Any] | None = None) -> dict[str, Any]:
        """The scenario mapping of the fields so far (or of `fields`)."""
        raw: dict[str, Any] = {}
        for path, value in (fields if fields is not None else self.fields).items():
            if "." in path:
                section, key = path.split(".")
                raw.setdefault(section, {})[key] = value
            else:
                raw[path] = value
        return raw

    def ready(self) -> bool:
        """Whether model and GPU are known, so the engine can answer."""
        return "model" in self.fields and "hardware.gpu" in self.fields

    def evaluate(self, fields: dict[str, Any] | None = None, only: Layout | None = None) -> Recommendation:
        """The engine's answer for the fields so far (or for `fields`)."""
        raw = self.raw(fields)
        raw.setdefault("hardware", {}).setdefault("gpus_per_node", 1)
        return self.engine.evaluate(build(raw, self.engine.kb, where="chat"), self.lang, only=only)

    def set(self, path: str, value: Any) -> str | None:
        """Change one fact (from the side panel) and re-evaluate; a value the engine rejects is not
        kept, and its one-line reason is returned."""
        previous = self.fields.get(path, _MISSING)
        self.fields[path] = value
        self._refresh()
        if self.error is None:
            return None
        error = self.error
        if previous is _MISSING:
            self.fields.pop(path, None)
        else:
            self.fields[path] = previous
        self._refresh()
        return error

    def set_lang(self, lang: str) -> None:
        """Answer in `lang` from now on; the current recommendation is read in it, not evaluated again."""
        self.lang = lang
        if self.rec is not None:
            self.rec = self.rec.in_lang(lang)
        self.host = [replace(f, lang=lang) for f in self.host]

    def take_evidence(self, evidence: Any, topology: dict[str, Any]) -> None:
        """Keep a host's read topology: from now on the layout is also judged on it (`host`)."""
        self.evidence, self.topology = evidence, dict(topology)
        self._judge_host()

    def _judge_host(self) -> None:
        self.host = []
        if self.rec is None or self.evidence is None or not self.topology:
            return
        from advisor.audit import judge_plan

        found = judge_plan(self.engine, self.evidence, self.topology, self.rec)
        self.host = [replace(f, lang=self.lang) for f in found if f.severity in ("warning", "error")]

    def _refresh(self) -> None:
        self.error = None
        self.host = []
        if not self.ready():
            self.rec = None
            return
        try:
            self.rec = self.evaluate()
        except AdvisorError as exc:
            self.error = exc.one_line()
            self.rec = None
        self._judge_host()

    # --- answering ----------------------------------------------------------------------------

    def answer(self, text: str, got: Understood | None = None) -> Understood:
        """Take a free-text answer (`got`: the text as already read, with the open question); return what
        was understood (the caller shows "did you mean")."""
        expecting = self.asked.fact if self.asked else None
        got = got if got is not None else understand(text, self.engine.kb, expecting)
        if planning(text):
            self.planning = True
        if got.skipped and expecting and expecting not in REQUIRED:
            self.skipped.add(expecting)
        from advisor.chat.context import settle

        settle(got, dict(self.fields), self.engine.kb, expecting, text)
        before = dict(self.fields)
        self.fields.update(got.fields)
        self._refresh()
        if self.error and got.fields:
            bad = self.error
            if not self._without_culprit(got, before, bad):
                self.fields = before
                self._refresh()
                self.error = bad
        return got

    def _without_culprit(self, got: Understood, before: dict[str, Any], bad: str) -> bool:
        """Where one value of an answer is what the engine refuses ("2x RTX 4090, connected with NVLink":
        the card has none), the rest taken and that one asked back with the catalogue's own value for the
        card as the proposal; False where no single value is the cause."""
        new_card = got.fields.get("hardware.gpu") not in (None, before.get("hardware.gpu"))
        table = field_table(self.engine.kb.root).by_path()
        for path in [
            p
            for p in before
            if new_card and p not in got.fields and getattr(table.get(p), "default_from", None) == "gpu"
        ]:
            self.fields = {**{k: v for k, v in before.items() if k != path}, **got.fields}
            self._refresh()
            if not self.error:
                return True  # "... auf vier L4": the bridge said of the card before is not this card's
        for path in reversed(list(got.fields) if len(got.fields) > 1 else []):
            proposal = self._catalogue_value(path)
            if proposal is None:
                continue  # a value refused for itself (beyond its limit): the refusal is the answer
            self.fields = {**before, **{k: v for k, v in got.fields.items() if k != path}}
            self._refresh()
            if self.error:
                continue
            del got.fields[path]
            got.held[path] = proposal
            got.held_why[path] = re.sub(
                r"^\w{1,20}: [\w.]{1,60}: ", "", bad
            )  # the refusal, without where it was checked
            return True
        return False

    def _catalogue_value(self, path: str) -> Any:
        """The value a field takes from the card where the user gives none (NVLink: the card's own)."""
        row = field_table(self.engine.kb.root).by_path().get(path)
        gpu = self.fields.get("hardware.gpu")
        if row is None or row.default_from != "gpu" or not gpu:
            return None
        try:
            return getattr(self.engine.kb.find_gpu(str(gpu)), path.rsplit(".", 1)[-1], None)
        except AdvisorError:
            return None

    def next_question(self) -> Question | None:
        """The fact whose answers change the result most (a fact an undecided rule needs first, ASK_ORDER
        breaking ties); None when settled."""
        facts = self.engine.kb.facts
        for fact in REQUIRED:
            path = PATHS[fact]
            if path not in self.fields and fact not in self.skipped:
                if fact == "gpus_per_node" and "hardware.gpu" not in self.fields:
                    continue
                question = facts[fact].question
                self.asked = Question(fact, question.get(self.lang) if question else fact)
                return self.asked
        if self.rec is None:
            self.asked = None
            return None
        wanted = {u.fact: u for u in self.rec.unknowns}
        self._tried = None  # the assumptions' trials, read when a fact needs them
        best: tuple[float, str, tuple[str, ...]] | None = None
        for fact in ASK_ORDER:
            field_path = PATHS.get(fact)
            if field_path is None or field_path in self.fields or fact in self.skipped or fact in REQUIRED:
                continue
            if fact == "workload_kind" and PATHS["users"] in self.fields:
                continue
            if self.planning and fact in HOST_FACTS:
                continue
            if fact in wanted and wanted[fact].rules:  # a rule cannot decide without it: worth a changed layout
                worth, rules = 1.0, wanted[fact].rules
            else:
                worth, rules = self._worth(fact, field_path), ()
            if worth > 0 and (best is None or worth > best[0]):
                best = (worth, fact, rules)
            if worth >= 1.0:
                break
        if best is None:
            self.asked = None
            return None
        _, fact, rules = best
        spec = facts[fact]
        self.asked = Question(fact, spec.question.get(self.lang) if spec.question else fact, rules, tuple(spec.choices))
        return self.asked

    def _worth(self, fact: str, path: str) -> float:
        """The value of asking `fact`: the most its plausible answers change the result."""
        if fact in PROBES:  # its probes include the values the assumptions try
            return self.value(path, PROBES[fact])
        if self._tried is None:  # an unstated value the recommendation lists among its assumptions
            self._tried = self._trials()
        return self.value(path, self._tried.get(fact, ()))

    def _trials(self) -> dict[str, tuple[Any, ...]]:
        """The values the recommendation's assumptions try, by fact (advisor.core.assumptions.trials)."""
        assert self.rec is not None
        raw = self.raw()
        raw.setdefault("hardware", {}).setdefault("gpus_per_node", 1)
        scenario = build(raw, self.engine.kb, where="chat")
        return {
            fact: values for fact, _, values in trials(self.engine.kb, scenario, self.rec.input_states, self.rec.env)
        }

    def value(self, path: str, values: Iterable[Any]) -> float:
        """The most any of `values` for the field at `path` would change the result (see `change`)."""
        assert self.rec is not None
        most = 0.0
        for value in values:
            trial = dict(self.fields)
            trial[path] = value
            try:
                most = max(most, change(self.rec, self.evaluate(trial)))
            except AdvisorError:
                continue
            if most >= 1.0:
                break
        return most

    def assumed(self) -> dict[str, Any]:
        """Facts the advisor assumed (defaults) because they were not asked or not answered."""
        if self.rec is None:
            return {}
        inputs = self.rec.input
        out: dict[str, Any] = {}
        for f in field_table(self.engine.kb.root).fields:
            fact, path = f.fact, f.path
            if path in self.fields or not f.stated:
                continue
            node: Any = inputs
            for part in path.split("."):
                node = node.get(part) if isinstance(node, dict) else None
            if node is not None:
                out[fact] = node
        return out

    def still_open(self) -> list[tuple[str, Any, tuple[Branch, ...]]]:
        """The assumed values that could still change the answer, each with the answers otherwise:
        (fact, value assumed, branches). First the recommendation's own assumption records (those
        `recommend --format json` lists as `assumptions`), then each fact the user skipped that those
        do not try (precision: its default is the model's own), tried with the values its question
        offers; empty when no assumed value could change the answer."""
        if self.rec is None:
            return []
        rec = self.rec
        out = [(a.fact, a.value, a.otherwise) for a in rec.assumptions]
        listed = {a.fact for a in rec.assumptions}
        assumed = self.assumed()
        units = self.engine.figure_units
        for fact in ASK_ORDER:
            if fact not in self.skipped or fact in listed or fact in REQUIRED or fact not in assumed:
                continue
            values = PROBES.get(fact) or tuple(self.engine.kb.facts[fact].choices)
            branches = []
            for value in values:
                if value == assumed[fact]:
                    continue
                try:
                    other = self.evaluate({**self.fields, PATHS[fact]: value})
                except AdvisorError:
                    continue
                if outcome(other) != outcome(rec):
                    branches.append(branch(value, rec, other, units))
            if branches:
                out.append((fact, assumed[fact], tuple(branches)))
        return out

    # --- explaining ---------------------------------------------------------------------------

    def why(self, fact: str | None = None) -> list[tuple[str, str]]:
        """For the question asked (or `fact`): which rules need it, and what each answer would change."""
        fact = fact or (self.asked.fact if self.asked else None)
        if fact is None or self.rec is None:
            return []
        spec = self.engine.kb.facts[fact]
        lines: list[tuple[str, str]] = []
        for u in self.rec.unknowns:
            if u.fact == fact:
                for rid in u.rules:
                    rule = self.engine.rules.rules[rid]
                    lines.append((rid, rule.why.get(self.lang)))
        path = PATHS[fact]
        choices = PROBES.get(fact) or tuple(c for c in spec.choices)
        for choice in choices:
            trial = dict(self.fields)
            trial[path] = choice
            try:
                rec = self.evaluate(trial)
            except AdvisorError:
                continue
            layout = rec.layout.label() if rec.layout else "—"
            shown = [layout, *(figure_text(k, v, self.lang) for k, v in figures(rec).items())]
            warn = [f.rule for f in rec.findings if f.severity in ("warning", "error")]
            lines.append((f"{fact} = {choice}", " · ".join(shown) + (f"; {', '.join(warn)}" if warn else "")))
        return lines

    def how(self) -> list[FigureTrace]:
        """The chain behind the recommendation: each figure's formula, with numbers, and its source."""
        if self.rec is None:
            return []
        return [t for t in self.rec.traces.values()]

    def why_not(self, layout: Layout) -> Recommendation | None:
        """The same scenario evaluated with `layout`, to show the rule or figure that rules it out."""
        if self.rec is None:
            return None
        return self.evaluate(only=layout)

    def what_if(self, text: str) -> tuple[Recommendation | None, Recommendation | None, dict[str, Any], str | None]:
        """The recommendation now and with one more change, without keeping the change: (now, with the
        change, the change understood, why the change cannot be evaluated)."""
        from advisor.chat.context import supposed

        got = understand(text, self.engine.kb, self.asked.fact if self.asked else None)
        supposed(got, self.fields, self.engine.kb)
        if not got.fields:
            return self.rec, None, got.fields, None
        try:
            return self.rec, self.evaluate({**self.fields, **got.fields}), got.fields, None
        except AdvisorError as exc:
            return self.rec, None, got.fields, exc.one_line()
