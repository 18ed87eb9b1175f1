"""`advisor audit`: check a running or planned deployment against the rules, from host evidence.

The audit is a wing of its own: `read` turns what the evidence readers parsed into facts, `groups` places
the deployment's TP groups on the host's GPUs, `diagnose` evaluates the rules (the deployment where its
model is in the catalogue, the host rules where not, then the audit rules), `deploy` says what the advisor
would deploy instead, `accept` marks the findings a deployment accepts, `replay` keeps what a transcript
needs, and `fleet` audits many hosts. Files are recognised by content, not name; every fact keeps the file
and line it came from.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from advisor.audit import p2p
from advisor.audit.accept import suppress
from advisor.audit.diagnose import Verdict, judge, judge_plan, with_evidence
from advisor.audit.fleet import audit_fleet
from advisor.audit.groups import group_facts
from advisor.audit.read import (
    derive,
    gpu_evidence_fact,
    in_catalogue,
    layout_of,
    nvlink_against_catalogue,
    of_kind,
    refuse_many_hosts,
)
from advisor.audit.replay import replay, replay_record
from advisor.core.engine import Engine
from advisor.core.facts import Facts, Origin
from advisor.core.records import AuditResult
from advisor.errors import InputError
from advisor.i18n import DEFAULT_LANG
from advisor.inputs.evidence.reader import PAIRS, Reader
from advisor.inputs.evidence.registry import READERS, parse_files
from advisor.kb.rules import SEVERITIES

__all__ = [
    "Verdict",
    "audit",
    "audit_fleet",
    "derive",
    "in_catalogue",
    "judge",
    "judge_plan",
    "refuse_many_hosts",
    "replay",
    "replay_record",
]


def audit(
    engine: Engine,
    paths: Iterable[Path],
    lang: str = "en",
    today: dt.date | None = None,
    search: bool = True,
    readers: Sequence[Reader] = READERS,
) -> AuditResult:
    """Read the evidence, derive facts, evaluate the deployment with the rules; InputError if nothing is usable.
    `search=False` (fleet audits) skips the alternatives, which a single audit lists; `readers` is the
    registry to read with (READERS unless given)."""
    paths = list(paths)
    refuse_many_hosts(paths)
    inputs, parsed = parse_files(paths, readers)
    if not parsed:
        raise InputError(
            "no usable evidence: "
            + "; ".join(f"{Path(i.path).name}: {', '.join(i.notes) or 'not recognised'}" for i in inputs)
            if inputs
            else ("no files in " + ", ".join(str(p) for p in paths) if paths else "no files given")
        )
    f, raw, dep = derive(parsed, engine, readers)
    hw = raw["hardware"]
    pairs = dep.pop(PAIRS)
    layout = layout_of(dep)
    groups = group_facts(f, dep, layout, hw)
    gpu_evidence_fact(f, paths, parsed, readers)
    problems = [f"{i.path}: {problem}" for i in inputs for problem in i.problems]
    problems += [
        f"the bundle was collected with {p.data.get('summary')}"
        for p in of_kind(parsed, "collect-manifest")
        if p.data.get("nvidia_gpus") is False
    ]
    note = nvlink_against_catalogue(engine, parsed, f, hw)
    if note:
        problems.append(note)
    origins = {k: Origin("evidence", f"{Path(e.file).name}:{e.line}") for k, e in f.where.items() if e.file}
    verdict = judge(engine, f, raw, dep, layout, origins, search)
    rec, unknowns, findings, firings = verdict.rec, verdict.unknowns, verdict.findings, verdict.firings
    problems += verdict.problems
    findings = [with_evidence(x, engine, f) for x in findings]
    findings = suppress(findings, engine, parsed, today or dt.date.today(), inputs)
    findings.sort(key=lambda x: (bool(x.suppressed), -SEVERITIES.index(x.severity), x.rule))
    facts = _public_facts(f, raw, dep, groups)
    result = AuditResult(
        inputs,
        facts,
        findings,
        unknowns,
        rec,
        dep.get("topology") or {},
        groups,
        DEFAULT_LANG,
        problems,
        firings,
        replay=replay_record(f, raw, dep),
        deploy=verdict.deploy,
        p2p=p2p.as_json(pairs),
    )
    return result.in_lang(lang)


def _public_facts(f: Facts, raw: Mapping[str, Any], dep: Mapping[str, Any], groups: list[list[int]]) -> dict[str, Any]:
    topology = dep.get("topology") or {}
    return {
        "model": raw.get("model"),
        "gpu": raw.get("hardware", {}).get("gpu"),
        "gpus_per_node": raw.get("hardware", {}).get("gpus_per_node"),
        "nvlink": raw.get("hardware", {}).get("nvlink"),
        "nvlink_domains": topology.get("nvlink_domains"),
        "cpu_affinity": topology.get("cpu_affinity"),
        "paths": topology.get("paths"),
        "engine": raw.get("engine"),
        "deployment": {k: v for k, v in dep.items() if k != "topology"},
        "tp_groups": groups,
        **{k: v for k, v in f.values.items() if k not in ("tp_link", "tp_spans_nvlink_domains")},
    }
