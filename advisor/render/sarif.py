"""SARIF 2.1.0 for code-scanning tools: an audit is one run, a fleet audit one run per bundle.

Guarantees: every rule of the rule base is described once (with a help text and, where its first
source has an address, a helpUri); every finding is a result pointing at its rule by id and index;
a result's locations are the lines its evidence was read from, or, for a finding without
evidence, the input files the audit read. Absolute paths become `file://` URIs; relative ones stay
relative to %SRCROOT%, which the run defines as the working directory. The output validates against
the OASIS SARIF 2.1.0 schema (tests/test_sarif.py).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

from advisor import __version__
from advisor.core.records import AuditResult, Finding, FleetItem
from advisor.i18n import outline
from advisor.inputs.evidence import InputFile
from advisor.kb.knowledge import Knowledge
from advisor.kb.rules import Rule, RuleBase
from advisor.render.common import pick

VERSION = "2.1.0"
SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
LEVEL = {"error": "error", "warning": "warning", "advice": "note", "info": "note"}
SRCROOT = "%SRCROOT%"


def artifact_location(path: str, index: dict[str, int] | None = None) -> dict[str, Any]:
    """An artifactLocation: a file:// URI for an absolute path, else a relative URI under %SRCROOT%."""
    p = Path(path)
    loc: dict[str, Any] = {"uri": p.as_uri()} if p.is_absolute() else {"uri": quote(p.as_posix()), "uriBaseId": SRCROOT}
    if index is not None and path in index:
        loc["index"] = index[path]
    return loc


def rule_descriptor(r: Rule, kb: Knowledge, lang: str) -> dict[str, Any]:
    """A rule's reportingDescriptor: title, what it checks, why (the help), level, topics, first source's address."""
    out: dict[str, Any] = {
        "id": r.id,
        "name": "".join(part.title() for part in r.id.split("-")),
        "shortDescription": {"text": outline(r.title.get(lang), braces=False)},
        "fullDescription": {"text": r.what.get(lang)},
        "help": {"text": f"{r.why.get(lang)} Example: {r.example.get(lang)}"},
        "defaultConfiguration": {"level": LEVEL[r.severity]},
        "properties": {"tags": list(r.topics), "severity": r.severity},
    }
    url = next((kb.sources[c.source].url for c in r.cite if c.source in kb.sources and kb.sources[c.source].url), None)
    if url:
        out["helpUri"] = url
    return out


def _locations(f: Finding, read: list[InputFile], index: dict[str, int]) -> list[dict[str, Any]]:
    """Where a finding was detected: each evidence line, or the files the audit read when it has no evidence."""
    out = []
    for e in f.evidence:
        if not e.file:
            continue  # a fact stated in the plan or inferred has no file to point at
        physical: dict[str, Any] = {"artifactLocation": artifact_location(e.file, index)}
        if e.line >= 1:
            physical["region"] = {"startLine": e.line, "snippet": {"text": e.text}}
        out.append({"physicalLocation": physical})
    if not out:
        out = [{"physicalLocation": {"artifactLocation": artifact_location(i.path, index)}} for i in read]
    return out


def _result(f: Finding, rule_index: dict[str, int], read: list[InputFile], index: dict[str, int]) -> dict[str, Any]:
    item: dict[str, Any] = {
        "ruleId": f.rule,
        "level": LEVEL[f.severity],
        "message": {"text": f"{f.title}: {f.explanation}"},
    }
    if f.rule in rule_index:
        item["ruleIndex"] = rule_index[f.rule]
    locations = _locations(f, read, index)
    if locations:
        item["locations"] = locations
    if f.suppressed:
        item["suppressions"] = [{"kind": "external", "justification": f.suppressed["reason"]}]
    item["properties"] = {"severity": f.severity, "topics": list(f.topics)}
    return item


def _run(
    result: AuditResult | None,
    kb: Knowledge,
    rules: RuleBase,
    lang: str,
    error: str | None = None,
    inputs: list[InputFile] | None = None,
) -> dict[str, Any]:
    """One run: the tool with every rule, the input files as artifacts, one result per finding."""
    described = sorted(rules.rules.values(), key=lambda r: r.id)
    rule_index = {r.id: i for i, r in enumerate(described)}
    files = result.inputs if result else (inputs or [])
    index = {i.path: n for n, i in enumerate(files)}
    read = [i for i in files if i.kinds]
    notifications = [{"level": "warning", "message": {"text": p}} for p in (result.problems if result else [])]
    if error:
        notifications.append({"level": "error", "message": {"text": error}})
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "advisor",
                "version": __version__,
                "language": lang,
                "rules": [rule_descriptor(r, kb, lang) for r in described],
            }
        },
        "language": lang,
        "invocations": [{"executionSuccessful": result is not None, "toolExecutionNotifications": notifications}],
        "artifacts": [
            {
                "location": artifact_location(i.path),
                "roles": ["analysisTarget"],
                "properties": {"kinds": i.kinds, "notes": i.notes},
            }
            for i in files
        ],
        "results": [_result(f, rule_index, read, index) for f in (result.findings if result else [])],
    }
    if any(not Path(i.path).is_absolute() for i in files):
        run["originalUriBaseIds"] = {SRCROOT: {"uri": Path.cwd().as_uri().rstrip("/") + "/"}}
    return run


def _document(runs: list[dict[str, Any]]) -> dict[str, Any]:
    return {"$schema": SCHEMA_URI, "version": VERSION, "runs": runs}


def audit(result: AuditResult, kb: Knowledge, rules: RuleBase) -> dict[str, Any]:
    """The audit as a SARIF log with one run."""
    return _document([_run(result, kb, rules, result.lang)])


def fleet(items: list[FleetItem], kb: Knowledge, rules: RuleBase) -> dict[str, Any]:
    """A fleet audit as one run per bundle; an unusable bundle is a failed run that says why."""
    lang = next((i.result.lang for i in items if i.result), "en")
    runs = []
    for item in items:
        run = _run(
            item.result,
            kb,
            rules,
            item.result.lang if item.result else lang,
            error=item.error,
            inputs=[InputFile(item.path)],
        )
        run["automationDetails"] = {"id": f"advisor-audit/{Path(item.path).name}"}
        runs.append(run)
    return _document(runs)


BY_TYPE: dict[type, Callable[[Any, Knowledge, RuleBase], dict[str, Any]]] = {AuditResult: audit, FleetItem: fleet}


def render(record: Any, kb: Knowledge, rules: RuleBase | None = None) -> str:
    """An audit or a fleet audit as SARIF 2.1.0 text; SARIF describes findings in files, so only audits have one."""
    if rules is None:
        raise TypeError("SARIF needs the rule base to describe the rules")
    from advisor.render.jsonout import finite

    doc = finite(pick(BY_TYPE, record, "SARIF")(record, kb, rules))
    return json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
