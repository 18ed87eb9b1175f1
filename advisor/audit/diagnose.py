"""What the rules make of a host's facts: the deployment evaluated where its model is in the catalogue (with
what the advisor would deploy instead), the host rules on what the host shows where it is not, then the
audit rules; each finding with the evidence lines of the facts its rule reads.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from advisor.audit.deploy import advice_facts, advise, recommend_for_host
from advisor.audit.groups import group_facts
from advisor.audit.read import in_catalogue, whole
from advisor.core.engine import Engine, ScopeResult
from advisor.core.facts import Facts, Origin, link_speeds
from advisor.core.layouts import LINK_ORDER, Layout, collective_latency, link_facts
from advisor.core.records import DeployAdvice, Finding, Firing, Recommendation, Unknown
from advisor.errors import AdvisorError
from advisor.fuzzy import closest
from advisor.i18n import Message, Text, label_text
from advisor.inputs.evidence import Evidence
from advisor.inputs.scenario import build
from advisor.structs import replace


def _busbw_facts(f: Facts, env: Mapping[str, Any]) -> None:
    """The link that bounds a measured all_reduce_perf run, and that link's rated speed."""
    if "busbw_measured_gbs" not in f.values:
        return
    ranks = int(f.values.get("busbw_ranks") or 0)
    hosts = int(f.values.get("busbw_hosts") or 1)
    domain = int(env.get("nvlink_domain_size") or 1)
    if hosts > 1:
        link, gbs = "network", env.get("node_link_gbs")
    elif env.get("nvlink") != "none" and env.get("nvlink_gbs") and ranks and ranks <= domain:
        link, gbs = "nvlink", env.get("nvlink_gbs")
    else:
        link, gbs = "pcie", env.get("pcie_gbs")
    f.put("busbw_link", link, None)
    f.put("busbw_expected_gbs", gbs, None)


def _host_env(engine: Engine, hw: Mapping[str, Any], layout: Layout, gpus: Sequence[int]) -> dict[str, Any]:
    """What the host alone says, for checks that need no model: the deployed layout, and with a GPU the
    catalogue knows, its links (speeds, peer-to-peer) and, where the GPU count is known (the host's, or
    at least the GPUs CUDA_VISIBLE_DEVICES names on it), the link each parallel group crosses."""
    env: dict[str, Any] = {
        "tp": layout.tp,
        "pp": layout.pp,
        "replicas": layout.replicas,
        "ep": layout.ep,
        "gpus_per_replica": layout.gpus_per_replica,
    }
    defaults = engine.kb.settings.get("defaults") or {}
    for name, spec in engine.kb.facts.items():  # the host settings the plan states, else their defaults (bare metal)
        place = spec.scenario or ""
        key = place.rpartition(".")[2]
        value = hw.get(key) if hw.get(key) is not None else defaults.get(key)
        if spec.kind == "input" and place.startswith("hardware.") and value not in (None, "unknown"):
            env[name] = value
    if not hw.get("gpu"):
        return env
    try:
        gpu = engine.kb.find_gpu(str(hw["gpu"]))
    except AdvisorError:
        return env
    per_node = whole(hw.get("gpus_per_node")) or len(gpus)
    nvlink = str(hw.get("nvlink") or gpu.nvlink_fitted)  # a bridge only where topo -m showed one
    network = hw.get("node_link_gbps")
    network = network if isinstance(network, float) else None  # as deployment.yaml's parser made it
    env.update(link_speeds(engine.kb, gpu, nvlink, per_node or 1, network))
    env.update(gpu=gpu.id, nvlink=nvlink, gpu_pcie_p2p=gpu.pcie_p2p)
    if per_node:
        env.update(gpus_per_node=per_node, total_gpus=per_node * (whole(hw.get("nodes")) or 1))
        env.update(link_facts(layout, env))
    return env


def _host_rules(engine: Engine, env: Mapping[str, Any], origins: Mapping[str, Origin], layout: Layout) -> ScopeResult:
    """The layout rules on the host's facts alone. A rule decides only where every fact it reads, in its
    condition, its texts and its figures, is known: a host rule (ACS, IOMMU, a VM, a card without P2P)
    fires on the evidence, a rule that needs the model's figures stays undecided."""
    out = engine.evaluate_scope("layout", env, {}, origins, layout)
    kept: list[Finding] = []
    for finding in out.findings:
        rule = engine.rules.rules[finding.rule]
        texts = (finding.title_text, finding.explanation_text, finding.fix_text, *finding.verify_text)
        read = [v for m in texts if m is not None for v in m.values.values()]
        if any(v is None for v in read) or any(env.get(n) is None for n in rule.figures):
            out.undecided.append(rule)
            out.firings = [replace(x, outcome=None) if x.rule == rule.id else x for x in out.firings]
        else:
            kept.append(finding)
    out.findings = kept
    return out


def _real_links(layout: Layout, env: Mapping[str, Any], known: Mapping[str, Any]) -> dict[str, Any]:
    """The speed and small-message time of the link topo -m shows inside the deployed TP group, where the
    model machine of `env` (the scenario's facts) puts the group on another link (a group on PHB that
    the model places inside an NVLink pair); empty where they agree or the link is not known."""
    link = known.get("tp_link")
    gbs = env.get(f"{link}_gbs")
    if link not in LINK_ORDER or gbs is None:
        return {}
    model = link_facts(layout, env)
    if model["tp_link"] == link:
        return {}
    collective = max(str(link), str(model["ep_link"]), key=LINK_ORDER.index)
    return {
        "tp_link_gbs": gbs,
        "tp_link_latency_us": collective_latency(env, str(link), layout.tp),
        "collective_link": collective,
        "collective_link_rank": LINK_ORDER.index(collective),
    }


def _not_in_catalogue(engine: Engine, model: str) -> str:
    """The note for a model the catalogue does not hold, with the names closest to it."""
    near = closest(model, sorted(engine.kb.models))
    return (
        f"model {model!r} is not in the catalogue"
        + (f" ({near})" if near else "")
        + ": the checks that need the model (fit, split) are left undecided; the host checks still run"
    )


@dataclass
class Verdict:
    """What the rules made of a deployment's facts: its evaluation, findings, trace and open questions."""

    rec: Recommendation | None
    findings: list[Finding]
    firings: list[Firing]
    unknowns: list[Unknown]
    problems: list[str]
    deploy: DeployAdvice | None = None


def judge(
    engine: Engine,
    f: Facts,
    raw: Mapping[str, Any],
    dep: Mapping[str, Any],
    layout: Layout,
    origins: Mapping[str, Origin] | None = None,
    search: bool = True,
) -> Verdict:
    """The rules on facts read from a host (or recorded in an audit transcript): the deployment evaluated
    where its model is in the catalogue, else the host rules on what the host shows; then what the advisor
    would deploy on that host (advisor.audit.deploy); then the audit rules."""
    origins = origins or {}
    hw = raw.get("hardware") or {}
    verdict = Verdict(None, [], [], [], [])
    model = raw.get("model")
    catalogued = bool(model) and in_catalogue(engine, str(model))
    if model and not catalogued:
        verdict.problems.append(_not_in_catalogue(engine, str(model)))
    env: dict[str, Any] = dict(f.values)
    if catalogued and hw.get("gpu"):
        env = _deployment(engine, f, raw, dep, layout, origins, search, verdict)
    rec = verdict.rec
    if rec is None:  # the host's own facts still decide the host rules; the model's wait for it
        env = {**_host_env(engine, hw, layout, dep.get("gpus") or []), **env}
        if raw.get("engine") or dep.get("engine"):
            env.setdefault("engine", raw.get("engine") or dep.get("engine"))  # the launch's, else the plan's
        _busbw_facts(f, env)
        env.update(f.values)
        on_host = _host_rules(engine, env, origins, layout)
        verdict.findings, verdict.firings = list(on_host.findings), list(on_host.firings)
        missing = "model" if not catalogued else None if hw.get("gpu") else "gpu"
        if missing:
            spec = engine.kb.facts[missing]
            blocked = tuple(r.id for r in on_host.undecided)
            why = Message(label_text("needed_for_audit"))
            verdict.unknowns.append(Unknown(missing, spec.question or Text.same(missing), why, blocked, spec.settle))
    else:
        _busbw_facts(f, env)
        env.update(f.values)
        verdict.findings, verdict.firings = list(rec.findings), list(rec.firings)
    host = engine.evaluate_scope("audit", env, rec.trace if rec else {}, origins, rec.layout if rec else None)
    verdict.findings += host.findings
    verdict.firings += host.firings
    return verdict


def _deployment(
    engine: Engine,
    f: Facts,
    raw: Mapping[str, Any],
    dep: Mapping[str, Any],
    layout: Layout,
    origins: Mapping[str, Origin],
    search: bool,
    verdict: Verdict,
) -> dict[str, Any]:
    """The deployed layout evaluated as `recommend` evaluates it, with the host's facts in place of
    assumptions, and what the advisor would deploy instead (into `verdict`); the facts the audit rules
    then read. A deployment that cannot be evaluated is a problem, and the host's facts stay."""
    try:
        scenario = build(raw, engine.kb, where="deployment")
        best = recommend_for_host(engine, scenario, f.values, origins)
        # the TP group's link as topo -m shows it, where the model machine would place it on another
        f.values.update(_real_links(layout, best.env, f.values))
        rec = engine.evaluate(scenario, only=layout, known=f.values, known_origin=origins, search=search)
    except AdvisorError as exc:
        verdict.problems.append(f"cannot evaluate the deployment: {exc.one_line()}")
        return dict(f.values)
    verdict.rec, verdict.unknowns = rec, list(rec.unknowns)
    verdict.deploy = advise(engine, rec, best, dep)
    if verdict.deploy is not None:
        f.values.update(advice_facts(verdict.deploy))
    return {**rec.env, **f.values}


def judge_plan(engine: Engine, evidence: Facts, topology: Mapping[str, Any], rec: Recommendation) -> list[Finding]:
    """The audit's findings on a recommendation's layout placed on a host's read topology (the chat's
    pasted `nvidia-smi topo -m`): its first TP group's paths against the best grouping, judged by the
    audit rules as `audit` judges a launch. Only the audit scope's findings; the plan's own are in `rec`."""
    if rec.layout is None:
        return []
    f = Facts(dict(evidence.values), dict(evidence.where))
    layout = rec.layout
    dep = {"tp": layout.tp, "pp": layout.pp, "dp": layout.replicas, "ep": layout.ep, "topology": dict(topology)}
    group_facts(f, dep, layout, rec.input.get("hardware") or {})
    env = {**rec.env, **f.values}
    return list(engine.evaluate_scope("audit", env, rec.trace, {}, layout).findings)


def with_evidence(finding: Finding, engine: Engine, f: Facts) -> Finding:
    rule = engine.rules.rules[finding.rule]
    seen: list[Evidence] = []
    for name in sorted(rule.when.names):
        e = f.where.get(name)
        if e is not None and e not in seen and e.file:
            seen.append(e)
    return replace(finding, evidence=tuple(seen))
