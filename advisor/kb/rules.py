"""The rule base: loading rules/*.yaml into checked records, and the selection order of layouts.

A rule is data: an id, texts in English and German, a condition in the expression language of
`advisor.kb.expr` (parsed against the fact table, never evaluated as Python), an effect on candidate
layouts, and its citations. Loading refuses a broken rule base with file, line and rule id.
"""

from __future__ import annotations

import string
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from advisor.errors import AdvisorError, RuleBaseError
from advisor.i18n import LANGS, Text
from advisor.kb.expr import Expression, parse
from advisor.kb.knowledge import ANY_FAILURE, SPECIFIC_FAILURE, Citation, Failure, Knowledge, Message
from advisor.kb.paths import rules_dir
from advisor.kb.schema import Record, key
from advisor.structs import Struct, field
from advisor.yamlio import line_of, load_file

SEVERITIES: tuple[str, ...] = ("info", "advice", "warning", "error")
SCOPES = ("scenario", "layout", "sizing", "audit")
# reject: never chosen; discourage: chosen only if nothing better is left (a concern the speed estimates
# do not carry); explain: a concern the estimates already weigh, said in the why-not of every layout it
# fires on, deciding nothing itself.
EFFECTS = ("none", "reject", "discourage", "explain")
RULE_KEYS = frozenset(
    {
        "id",
        "title",
        "severity",
        "topics",
        "scope",
        "effect",
        "when",
        "explain",
        "fix",
        "verify",
        "figures",
        "cite",
        "conflicts",
        "doc",
        "cases",
        "unsuppressible",
    }
)


class Rule(Record):
    """One rule of the rule base."""

    id: str = key(doc="lowercase words joined by '-'")
    title: Text = key(doc="a short title, in every language")
    severity: str = key(doc="info | advice | warning | error")
    topics: tuple[str, ...] = key(doc="the topics of rules/topics it belongs to")
    scope: str = key(doc="scenario | layout | sizing | audit: what facts it is evaluated over")
    effect: str = key(doc="none | reject | discourage: what it does to a candidate layout")
    when: Expression = key(doc="the condition, parsed against the fact table")
    explain: Text = key(doc="what the finding says, a template of facts")
    cite: tuple[Citation, ...] = key(doc="its sources")
    what: Text = key(doc="doc.what: what the rule checks")
    why: Text = key(doc="doc.why: why it matters")
    example: Text = key(doc="doc.example: a case where it fires")
    fix: Text | None = key(default=None, doc="what to do about it")
    verify: tuple[str, ...] = key(default=(), doc="commands that check the fix")
    figures: tuple[str, ...] = key(default=(), doc="facts the finding shows with their formulas")
    conflicts: tuple[str, ...] = key(default=(), doc="conflicts between sources it depends on")
    cases_fire: tuple[Mapping[str, Any], ...] = key(default=(), doc="scenarios it must fire on")
    cases_quiet: tuple[Mapping[str, Any], ...] = key(default=(), doc="scenarios it must stay quiet on")
    unsuppressible: bool = key(default=False, doc="whether an accepted-findings list may not silence it")
    where: str = key(default="", doc="file:line and rule id, for messages")


class SortKey(Record):
    """One criterion of the layout order: a layout fact and which way is better."""

    fact: str = key(doc="a layout fact, or 'discouraged'")
    better: Literal["low", "high"] = key(doc="low or high")
    why_not: Text = key(doc="why a layout that loses on it was not chosen")
    why_better: Text | None = key(default=None, doc="what a layout that wins on it has over a layout asked about")
    tolerance: float = key(default=0.0, doc="share of the best value within which layouts count as equal on it")
    close: Text | None = key(default=None, doc="what is said of a layout within the tolerance that lost later")


class RuleBase(Struct, frozen=False):
    """All rules by id, the topic list, the selection orders, and the retired ids' successors."""

    rules: dict[str, Rule] = field(default_factory=dict)
    topics: dict[str, Text] = field(default_factory=dict)
    selection: dict[str, tuple[SortKey, ...]] = field(default_factory=dict)
    redirects: dict[str, str] = field(default_factory=dict)
    tie: Text | None = None
    files: tuple[Path, ...] = ()
    root: Path | None = None

    def get(self, rule_id: str) -> Rule:
        """A rule by id, following redirects of retired ids."""
        rule_id = self.redirects.get(rule_id, rule_id)
        if rule_id not in self.rules:
            from advisor.fuzzy import closest

            raise RuleBaseError(f"no rule {rule_id!r}", hint=closest(rule_id, self.rules) or "see `advisor rules`")
        return self.rules[rule_id]

    def in_scope(self, scope: str) -> list[Rule]:
        """The rules of one scope (scenario, layout, audit, sizing), in the order of the rule files."""
        return [r for r in self.rules.values() if r.scope == scope]


def _text(raw: Any, key: str, where: str, required: bool = True) -> Text | None:
    if raw is None:
        if required:
            raise RuleBaseError(f"missing {key!r}", where=where)
        return None
    if not isinstance(raw, Mapping):
        raise RuleBaseError(f"{key!r} needs an 'en' and a 'de' text", where=where)
    return Text.checked(raw, key, where, RuleBaseError)


def template_fields(template: str) -> list[str]:
    """The fact names a `{name:spec}` template uses; RuleBaseError on attribute or index access."""
    names = []
    for _literal, name, _spec, _conv in string.Formatter().parse(template):
        if name is None:
            continue
        if not name.isidentifier():
            raise RuleBaseError(f"template field {{{name}}} must be a plain fact name")
        names.append(name)
    return names


def _rule(raw: Any, where: str, kb: Knowledge, topics: Mapping[str, Text]) -> Rule:
    if not isinstance(raw, Mapping):
        raise RuleBaseError("a rule must be a mapping", where=where)
    rid = raw.get("id")
    where = f"{where}:{line_of(raw)}" if line_of(raw) else where
    if not isinstance(rid, str) or not rid.replace("-", "").isalnum() or rid != rid.lower():
        raise RuleBaseError(f"rule id {rid!r} must be lowercase words joined by '-'", where=where)
    where = f"{where} rule {rid}"
    unknown = set(raw) - RULE_KEYS
    if unknown:
        from advisor.fuzzy import closest

        key = sorted(unknown)[0]
        raise RuleBaseError(f"unknown key {key!r}", where=where, hint=closest(key, RULE_KEYS))
    severity = raw.get("severity")
    if severity not in SEVERITIES:
        raise RuleBaseError(f"severity {severity!r} is not one of {', '.join(SEVERITIES)}", where=where)
    scope = raw.get("scope", "scenario")
    if scope not in SCOPES:
        raise RuleBaseError(f"scope {scope!r} is not one of {', '.join(SCOPES)}", where=where)
    effect = raw.get("effect", "none")
    if effect not in EFFECTS or (effect != "none" and scope != "layout"):
        raise RuleBaseError(f"effect {effect!r} needs scope 'layout' and one of {', '.join(EFFECTS)}", where=where)
    listed = raw.get("topics") or ()
    if not isinstance(listed, (list, tuple)) or not all(isinstance(t, str) for t in listed):
        raise RuleBaseError(f"topics: expected a list of topic names, not {str(listed)[:60]!r}", where=where)
    rule_topics = tuple(listed)
    for topic in rule_topics:
        if topic not in topics:
            from advisor.fuzzy import closest

            raise RuleBaseError(f"unknown topic {topic!r}", where=where, hint=closest(topic, topics))
    if not rule_topics:
        raise RuleBaseError("a rule needs at least one topic", where=where)
    known = set(kb.facts)
    if not isinstance(raw.get("when", ""), str):
        raise RuleBaseError(f"when: expected a condition as text, not {str(raw.get('when'))[:60]!r}", where=where)
    try:
        when = parse(raw.get("when", ""), known, where=f"{where} when")
    except AdvisorError as exc:
        raise RuleBaseError(exc.message, where=exc.where, hint=exc.hint) from None
    explain = _text(raw.get("explain"), "explain", where)
    assert explain is not None
    fix = _text(raw.get("fix"), "fix", where, required=False)
    title = _text(raw.get("title"), "title", where)
    assert title is not None
    for text in (title, explain, fix):
        if text is None:
            continue
        for lang in LANGS:
            try:
                names = template_fields(text.get(lang))
            except (RuleBaseError, ValueError) as exc:
                raise RuleBaseError(str(exc), where=where) from None
            for name in names:
                if name not in known:
                    from advisor.fuzzy import closest

                    raise RuleBaseError(f"template uses unknown fact {name!r}", where=where, hint=closest(name, known))
    figures = tuple(raw.get("figures") or ())
    for name in figures:
        if not isinstance(name, str):
            raise RuleBaseError(f"figures: expected fact names, not {str(name)[:60]!r}", where=where)
        if name not in known:
            raise RuleBaseError(f"figure {name!r} is not a fact", where=where)
    cites = []
    for c in raw.get("cite") or ():
        if not isinstance(c, Mapping) or not isinstance(c.get("source"), str):
            raise RuleBaseError("each citation needs a 'source'", where=where)
        cites.append(Citation(source=c["source"], locator=str(c.get("locator", "")), quote=c.get("quote")))
    if not cites:
        raise RuleBaseError("a rule needs at least one citation", where=where)
    doc = raw.get("doc") or {}
    if not isinstance(doc, Mapping):
        raise RuleBaseError("'doc' needs 'what', 'why' and 'example'", where=where)
    cases = raw.get("cases") or {}
    if not isinstance(cases, Mapping):
        raise RuleBaseError("'cases' needs 'fires' and 'quiet' lists of scenarios", where=where)
    verify = raw.get("verify") or ()
    if isinstance(verify, str) or not all(isinstance(v, str) for v in verify):
        raise RuleBaseError("'verify' must be a list of commands", where=where)
    return Rule(
        id=rid,
        title=title,
        severity=severity,
        topics=rule_topics,
        scope=scope,
        effect=effect,
        when=when,
        explain=explain,
        fix=fix,
        verify=tuple(verify),
        figures=figures,
        cite=tuple(cites),
        conflicts=tuple(raw.get("conflicts") or ()),
        what=_text(doc.get("what"), "doc.what", where),  # type: ignore[arg-type]
        why=_text(doc.get("why"), "doc.why", where),  # type: ignore[arg-type]
        example=_text(doc.get("example"), "doc.example", where),  # type: ignore[arg-type]
        cases_fire=tuple(cases.get("fires") or ()),
        cases_quiet=tuple(cases.get("quiet") or ()),
        unsuppressible=bool(raw.get("unsuppressible", False)),
        where=where,
    )


def _selection(raw: Any, where: str, kb: Knowledge) -> dict[str, tuple[SortKey, ...]]:
    if not isinstance(raw, Mapping):
        raise RuleBaseError("'selection' must map an order's name to its keys", where=where)
    orders: dict[str, tuple[SortKey, ...]] = {}
    for name, keys in raw.items():
        out = []
        for k in keys or ():
            fact = k.get("fact") if isinstance(k, Mapping) else None
            if not isinstance(fact, str) or fact not in kb.facts and fact != "discouraged":
                shown = repr(fact)[:80] if isinstance(k, Mapping) else f"{k!r}"[:80]
                raise RuleBaseError(f"selection {name}: key {shown} is not a known fact", where=where)
            if k.get("better") not in ("low", "high"):
                raise RuleBaseError(f"selection {name}: 'better' must be low or high", where=where)
            why_not = _text(k.get("why_not"), "why_not", f"{where} selection {name}")
            why_better = _text(k.get("why_better"), "why_better", f"{where} selection {name}", required=False)
            close = _text(k.get("close"), "close", f"{where} selection {name}", required=False)
            tolerance = k.get("tolerance", 0.0)
            if isinstance(tolerance, bool) or not isinstance(tolerance, int | float) or not 0 <= tolerance < 1:
                raise RuleBaseError(f"selection {name}: 'tolerance' must be a share from 0 to below 1", where=where)
            out.append(
                SortKey(
                    fact=k["fact"],
                    better=k["better"],
                    why_not=why_not,  # type: ignore[arg-type]
                    why_better=why_better,
                    tolerance=float(tolerance),
                    close=close,
                )
            )
        orders[str(name)] = tuple(out)
    return orders


VERSIONS = {"en": "Reported with", "de": "Gemeldet mit"}


CITED_MESSAGES = 3  # a failure's rule cites the source of its first messages; `advisor rules show` lists all


def _failure_when(failure: Failure, failures: Mapping[str, Failure]) -> str:
    """A failure's condition: its fact, and none of the failures that explain it better ('*': any that
    explains itself, the fact the failure reader sets for them)."""
    better = [
        SPECIFIC_FAILURE if u == ANY_FAILURE else failures[u].fact
        for u in failure.unless
        if u in failures or u == ANY_FAILURE
    ]
    if not better:
        return failure.fact
    return f"{failure.fact} and not ({' or '.join(f'known({b})' for b in better)})"


def _failure_rule(
    failure: Failure, messages: Sequence[Message] = (), kb_failures: Mapping[str, Failure] | None = None
) -> dict[str, Any]:
    """The audit rule of a catalogued failure (knowledge/failures.yaml): it fires where the failure's
    signature or one of its messages matched a line of the evidence, cites the software that prints the
    messages, and says the versions the thread reported it with."""
    versions = ", ".join(f"{k} {v}" for k, v in failure.versions.items())
    explain = {
        lang: failure.explain.get(lang) + (f" {VERSIONS[lang]}: {versions}." if versions else "") for lang in LANGS
    }
    cite = [{"source": c.source, "locator": c.locator, "quote": c.quote} for c in failure.cite]
    cited = {(c["source"], c["locator"]) for c in cite}
    cite += [
        {"source": m.source, "locator": m.locator}
        for m in messages[:CITED_MESSAGES]
        if (m.source, m.locator) not in cited
    ]
    texts = {lang: failure.title.get(lang) for lang in LANGS}
    return {
        "id": f"failure-{failure.id}",
        "title": texts,
        "severity": failure.severity,
        "topics": list(failure.topics),
        "scope": "audit",
        "when": _failure_when(failure, kb_failures or {}),
        "explain": explain,
        "fix": {lang: failure.fix.get(lang) for lang in LANGS},
        "verify": list(failure.verify),
        "cite": cite,
        "doc": {"what": texts, "why": {lang: failure.explain.get(lang) for lang in LANGS}, "example": texts},
        "cases": {"fires": [{"facts": {failure.fact: True}}], "quiet": [{"facts": {failure.fact: False}}]},
        "unsuppressible": failure.unsuppressible,
    }


def load(kb: Knowledge, root: Path | None = None) -> RuleBase:
    """Load every rules/*.yaml file; RuleBaseError names the file, line and rule on any problem."""
    root = root or rules_dir()
    if not root.is_dir():
        raise RuleBaseError("rules folder not found", where=str(root))
    files = tuple(sorted(root.glob("*.yaml")))
    base = RuleBase(files=files, root=root)
    raw_rules: list[tuple[Any, str]] = []
    for path in files:
        data = load_file(path, RuleBaseError)
        if data is None:
            continue
        if not isinstance(data, Mapping):
            raise RuleBaseError("a rule file must be a mapping with a 'rules' list", where=str(path))
        unknown = set(data) - {"rules", "topics", "selection", "redirects", "tie"}
        if unknown:
            raise RuleBaseError(f"unknown top-level key {sorted(unknown)[0]!r}", where=str(path))
        for name, text in (data.get("topics") or {}).items():
            base.topics[str(name)] = _text(text, f"topic {name}", str(path))  # type: ignore[assignment]
        if "tie" in data:
            base.tie = _text(data["tie"], "tie", str(path))
        if "selection" in data:
            base.selection.update(_selection(data["selection"], str(path), kb))
        base.redirects.update({str(k): str(v) for k, v in (data.get("redirects") or {}).items()})
        rules = data.get("rules") or []
        if not isinstance(rules, list):
            raise RuleBaseError("'rules' must be a list", where=str(path))
        raw_rules += [(r, str(path)) for r in rules]
    # the catalogue's rules come first, so that the rules of the files keep the order of their files
    said: dict[str, list[Message]] = {}
    for m in kb.messages:
        said.setdefault(m.cause, []).append(m)
    raw_rules = [(_failure_rule(f, said.get(f.id, []), kb.failures), f.where) for f in kb.failures.values()] + raw_rules
    for raw, where in raw_rules:
        rule = _rule(raw, where, kb, base.topics)
        if rule.id in base.rules:
            raise RuleBaseError(
                f"duplicate rule id {rule.id!r} (also at {base.rules[rule.id].where})", where=rule.where
            )
        base.rules[rule.id] = rule
    for old, new in base.redirects.items():
        if old in base.rules or new not in base.rules:
            raise RuleBaseError(f"redirect {old!r} -> {new!r} must lead from a retired id to a rule", where=str(root))
    return base
