"""`advisor audit`: check a running or planned deployment against the rules, from host evidence.

Files are recognised by content, not name. Their parsed records become facts (each with the file
and line it came from); the deployment's own layout is evaluated by the same engine and rules as
`recommend` (with `only=` that layout), and the audit rules (scope: audit) look at what only a host
can show: paths between the GPUs of a TP group, measured bus bandwidth, NCCL settings and logs.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import Any

from advisor.audit_deploy import advice_facts, advise, recommend_for_host
from advisor.core.engine import Engine, ScopeResult
from advisor.core.facts import Facts, Origin, link_speeds
from advisor.core.layouts import LINK_ORDER, Layout, collective_latency, link_facts
from advisor.core.records import AuditResult, DeployAdvice, Finding, Firing, FleetItem, Recommendation, Unknown
from advisor.errors import AdvisorError, InputError
from advisor.fuzzy import closest
from advisor.i18n import DEFAULT_LANG, Message, Text, label_text
from advisor.inputs.evidence import Evidence, InputFile, Parsed, topo
from advisor.inputs.evidence.manifest import host_bundles
from advisor.inputs.evidence.reader import ALL_RANKS, Reader
from advisor.inputs.evidence.registry import READERS, contributions, parse_files
from advisor.inputs.scenario import build, check_nvlink, observed_nvlink
from advisor.kb.rules import SEVERITIES
from advisor.structs import replace


def _all(parsed: list[Parsed], kind: str) -> list[Parsed]:
    return [p for p in parsed if p.kind == kind]


def derive(
    parsed: list[Parsed], engine: Engine, readers: Sequence[Reader] = READERS
) -> tuple[Facts, dict[str, Any], dict[str, Any]]:
    """Audit facts, the scenario mapping they imply, and the deployment (layout, GPU indices, topology).

    Every reader's contributions in turn (reader.py): the first to a target wins. A host fact that
    the fact base places in the scenario (p2p: hardware.p2p) also fills that place where no earlier
    source did; a place's line is kept under its fact's name (hardware.gpu: gpu) for the findings."""
    f = Facts()
    placed: dict[str, Any] = {}
    place_of = {name: spec.scenario for name, spec in engine.kb.facts.items() if spec.scenario}
    fact_at = {place: name for name, place in place_of.items()}
    for c in contributions(parsed, readers):
        name = c.fact
        if name is not None:
            if c.value is not None and name not in f.values and name in place_of:
                _fill(placed, place_of[name], c.value)
            f.put(name, c.value, c.evidence)
            continue
        value = c.value
        if c.target == "model" and c.value is not None and not _has(placed, "model"):
            value = _catalogue_name(engine, str(c.value), c.names)
        if _fill(placed, c.target, value):
            name = fact_at.get(c.target, c.target)
            if c.evidence is not None:
                f.where[name] = c.evidence
            if c.as_fact:
                f.put(name, value, c.evidence)
    dep = dict(placed.get("deployment") or {})
    if dep.get("ep") == ALL_RANKS:
        dep["ep"] = dep.get("tp", 1) * dep.get("dp", 1)
    raw = {k: v for k, v in placed.items() if k not in ("deployment", "topology")}
    raw.setdefault("hardware", {})
    return f, raw, {**dep, "topology": placed.get("topology") or {}}


def _whole(value: Any) -> int | None:
    """A plan's count as a number, or None where it is not one (deployment.yaml notes why; the
    scenario check then says the deployment cannot be evaluated)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 < value <= 1 << 20 else None


def _has(mapping: Mapping[str, Any], path: str) -> bool:
    """Whether a dotted place is already set."""
    node: Any = mapping
    for part in path.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return False
        node = node[part]
    return True


def _fill(mapping: dict[str, Any], path: str, value: Any) -> bool:
    """Set a dotted place unless an earlier source did (a mapping fills the keys not yet set); True if set."""
    *parents, key = path.split(".")
    node = mapping
    for part in parents:
        node = node.setdefault(part, {})
        if not isinstance(node, dict):
            return False
    if key not in node:
        node[key] = dict(value) if isinstance(value, Mapping) else value
        return True
    if isinstance(node[key], dict) and isinstance(value, Mapping):
        for k, v in value.items():
            node[key].setdefault(k, v)
    return False


def _catalogue_name(engine: Engine, given: str, others: Iterable[str]) -> str:
    """The model as the catalogue knows it: the name given, else the first of its other names (a repo's
    or local path's last part, a served model name) that the catalogue holds exactly; else the name given."""
    for name in (given, *others):
        if name and in_catalogue(engine, str(name)):
            return str(name)
    return given


def in_catalogue(engine: Engine, name: str) -> bool:
    """Whether the catalogue holds this model name exactly (id, name, alias, HF repo or its last part):
    a launch line's model is never matched loosely, since a near name is most often another model."""
    return engine.kb.has_model_name(name)


def _group_facts(f: Facts, dep: Mapping[str, Any], layout: Layout, hw: Mapping[str, Any]) -> list[list[int]]:
    """TP groups of the deployment, and the path facts of the first group against the best grouping.

    The GPUs the launch can see are known from an explicit device list (CUDA_VISIBLE_DEVICES, device
    ids, the plan's `gpus`), or from the GPUs per node and the number of nodes the plan states; one
    host's GPU count alone does not say it, since a launch may span nodes."""
    topology = dep.get("topology") or {}
    tp = layout.tp
    per_node = _whole(hw.get("gpus_per_node")) or 0
    explicit = [int(g) for g in dep.get("gpus") or []]
    visible = explicit or list(range(per_node))
    f.put("deployed_gpus", layout.gpus, None)
    if explicit:
        f.put("visible_gpus", len(explicit), None)
    elif per_node and _whole(hw.get("nodes")):
        f.put("visible_gpus", per_node * (_whole(hw.get("nodes")) or 1), None)
    groups = [
        visible[i : i + tp] for i in range(0, min(len(visible), layout.gpus), tp) if len(visible[i : i + tp]) == tp
    ]
    paths = topology.get("paths") or {}
    if tp < 2 or not groups or not paths:
        return groups
    worst = topo.worst_path(paths, groups[0])
    if worst:
        rows = topology.get("evidence") or {}
        where = next(
            (rows.get(f"row:{a}") for a, b in combinations(groups[0], 2) if topo.path(paths, a, b) == worst), None
        )
        f.put("tp_gpus", ",".join(map(str, groups[0])), where)
        f.put("tp_path_worst", worst, where)
        f.put("tp_path_worst_rank", topo.rank(worst), where)
        best_groups, best = topo.best_grouping(paths, topology.get("gpus", []), tp)
        if best:
            f.put("best_tp_path", best, None)
            f.put("best_tp_path_rank", topo.rank(best), None)
            f.put("better_tp_groups", " | ".join(",".join(map(str, g)) for g in best_groups), None)
        domains = topology.get("nvlink_domains") or []
        spans = sum(1 for d in domains if set(d) & set(groups[0])) > 1 and any(len(d) > 1 for d in domains)
        f.put("tp_gpus_span_domains", spans, None)
        # SYS crosses the CPUs' own link: priced as the `socket` link (knowledge/links.yaml), not plain PCIe
        f.values["tp_link"] = "nvlink" if worst.startswith("NV") else "socket" if worst == "SYS" else "pcie"
        f.values["tp_spans_nvlink_domains"] = spans
    return groups


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
    for name, spec in engine.kb.facts.items():  # the host settings' defaults, as a scenario has them (bare metal)
        place = spec.scenario or ""
        value = defaults.get(place.rpartition(".")[2])
        if spec.kind == "input" and place.startswith("hardware.") and value not in (None, "unknown"):
            env[name] = value
    if not hw.get("gpu"):
        return env
    try:
        gpu = engine.kb.find_gpu(str(hw["gpu"]))
    except AdvisorError:
        return env
    per_node = _whole(hw.get("gpus_per_node")) or len(gpus)
    nvlink = str(hw.get("nvlink") or gpu.nvlink_fitted)  # a bridge only where topo -m showed one
    network = hw.get("node_link_gbps")
    network = network if isinstance(network, float) else None  # as deployment.yaml's parser made it
    env.update(link_speeds(engine.kb, gpu, nvlink, per_node or 1, network))
    env.update(gpu=gpu.id, nvlink=nvlink, gpu_pcie_p2p=gpu.pcie_p2p)
    if per_node:
        env.update(gpus_per_node=per_node, total_gpus=per_node * (_whole(hw.get("nodes")) or 1))
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


def _nvlink_against_catalogue(engine: Engine, parsed: list[Parsed], f: Facts, hw: dict[str, Any]) -> str | None:
    """A plan's NVLink that its card cannot have is refused (InputError, as in `recommend`); a host's
    topology that contradicts the catalogue is a note, and the deployment is evaluated with a setup
    the card can have (a full mesh of four H200 NVL is their 4-card bridge; else the card's usual)."""
    if not hw.get("nvlink") or not hw.get("gpu"):
        return None
    try:
        gpu = engine.kb.find_gpu(str(hw["gpu"]))
    except AdvisorError:
        return None
    nvlink = str(hw["nvlink"]).strip().lower()
    seen = f.where.get("nvlink")
    if seen is None or any(p.kind == "deployment" and p.file == seen.file for p in parsed):
        check_nvlink(gpu, nvlink, "deployment: hardware.nvlink")
        return None
    hw["nvlink"], note = observed_nvlink(gpu, nvlink, _whole(hw.get("gpus_per_node")) or 1)
    if "nvlink" in f.values:
        f.values["nvlink"] = hw["nvlink"]
    return note


def _layout(dep: Mapping[str, Any]) -> Layout:
    tp, pp, dp = int(dep.get("tp") or 1), int(dep.get("pp") or 1), int(dep.get("dp") or 1)
    return Layout(dp, tp, pp, int(dep.get("ep") or 1))


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
    layout = _layout(dep)
    groups = _group_facts(f, dep, layout, hw)
    _gpu_evidence_fact(f, paths, parsed, readers)
    problems = [f"{i.path}: {problem}" for i in inputs for problem in i.problems]
    problems += [
        f"the bundle was collected with {p.data.get('summary')}"
        for p in _all(parsed, "collect-manifest")
        if p.data.get("nvidia_gpus") is False
    ]
    note = _nvlink_against_catalogue(engine, parsed, f, hw)
    if note:
        problems.append(note)
    origins = {k: Origin("evidence", f"{Path(e.file).name}:{e.line}") for k, e in f.where.items() if e.file}
    verdict = judge(engine, f, raw, dep, layout, origins, search)
    rec, unknowns, findings, firings = verdict.rec, verdict.unknowns, verdict.findings, verdict.firings
    problems += verdict.problems
    findings = [_with_evidence(x, engine, f) for x in findings]
    findings = _suppress(findings, engine, parsed, today or dt.date.today(), inputs)
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
    )
    return result.in_lang(lang)


def refuse_many_hosts(paths: Sequence[Path]) -> None:
    """InputError, with the --fleet hint, for a folder that holds several host bundles (as `advisor
    collect` writes them, one sub-folder per host): read as one host, one host's GPUs would meet another's
    errors."""
    for p in paths:
        hosts = host_bundles(p)
        if len(hosts) > 1:
            names = ", ".join(h.name for h in hosts[:4]) + (", ..." if len(hosts) > 4 else "")
            raise InputError(
                f"holds {len(hosts)} host bundles ({names}); one audit reads one host",
                where=str(p),
                hint=f"audit each host on its own: advisor audit --fleet {p}",
            )


def _gpu_evidence_fact(f: Facts, paths: Sequence[Path], parsed: list[Parsed], readers: Sequence[Reader]) -> None:
    """bundle_gpu_evidence, for a bundle (a folder, or a collect manifest): whether any file in it was read
    as GPU evidence (a reader with `gpu_evidence`), and the collect manifest, where there is one, did not
    say that no GPU answered. The line is the manifest's summary, else the folder."""
    manifests = _all(parsed, "collect-manifest")
    if not manifests and not any(p.is_dir() for p in paths):
        return
    gpu_kinds = {r.kind for r in readers if r.gpu_evidence}
    read = any(p.kind in gpu_kinds for p in parsed)
    said_none = any(m.data.get("nvidia_gpus") is False for m in manifests)
    where = next((m.evidence.get("summary") for m in manifests if m.evidence.get("summary")), None)
    if where is None:
        folder = next((p for p in paths if p.is_dir()), paths[0] if paths else Path("."))
        where = Evidence(str(folder), 0, "no file read as GPU evidence (nvidia-smi, topo -m, nccl-tests)")
    f.put("bundle_gpu_evidence", read and not said_none, where)


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
    would deploy on that host (audit_deploy.py); then the audit rules."""
    origins = origins or {}
    hw = raw.get("hardware") or {}
    rec: Recommendation | None = None
    deploy: DeployAdvice | None = None
    unknowns: list[Unknown] = []
    problems: list[str] = []
    env: dict[str, Any] = dict(f.values)
    model = raw.get("model")
    catalogued = bool(model) and in_catalogue(engine, str(model))
    if model and not catalogued:
        problems.append(_not_in_catalogue(engine, str(model)))
    if catalogued and hw.get("gpu"):
        try:
            scenario = build(raw, engine.kb, where="deployment")
            best = recommend_for_host(engine, scenario, f.values, origins)
            # the TP group's link as topo -m shows it, where the model machine would place it on another
            f.values.update(_real_links(layout, best.env, f.values))
            rec = engine.evaluate(scenario, only=layout, known=f.values, known_origin=origins, search=search)
            deploy = advise(engine, rec, best, dep)
            if deploy is not None:
                f.values.update(advice_facts(deploy))
            env = {**rec.env, **f.values}
            unknowns = list(rec.unknowns)
        except AdvisorError as exc:
            problems.append(f"cannot evaluate the deployment: {exc.one_line()}")
    on_host = ScopeResult()
    if rec is None:  # the host's own facts still decide the host rules; the model's wait for it
        env = {**_host_env(engine, hw, layout, dep.get("gpus") or []), **env}
        _busbw_facts(f, env)
        env.update(f.values)
        on_host = _host_rules(engine, env, origins, layout)
        missing = "model" if not catalogued else None if hw.get("gpu") else "gpu"
        if missing:
            spec = engine.kb.facts[missing]
            blocked = tuple(r.id for r in on_host.undecided)
            why = Message(label_text("needed_for_audit"))
            unknowns.append(Unknown(missing, spec.question or Text.same(missing), why, blocked, spec.settle))
    else:
        _busbw_facts(f, env)
        env.update(f.values)
    host = engine.evaluate_scope("audit", env, rec.trace if rec else {}, origins, rec.layout if rec else None)
    findings = (list(rec.findings) if rec else on_host.findings) + host.findings
    firings = (list(rec.firings) if rec else on_host.firings) + host.firings
    return Verdict(rec, findings, firings, unknowns, problems, deploy)


def judge_plan(engine: Engine, evidence: Facts, topology: Mapping[str, Any], rec: Recommendation) -> list[Finding]:
    """The audit's findings on a recommendation's layout placed on a host's read topology (the chat's
    pasted `nvidia-smi topo -m`): its first TP group's paths against the best grouping, judged by the
    audit rules as `audit` judges a launch. Only the audit scope's findings; the plan's own are in `rec`."""
    if rec.layout is None:
        return []
    f = Facts(dict(evidence.values), dict(evidence.where))
    layout = rec.layout
    dep = {"tp": layout.tp, "pp": layout.pp, "dp": layout.replicas, "ep": layout.ep, "topology": dict(topology)}
    _group_facts(f, dep, layout, rec.input.get("hardware") or {})
    env = {**rec.env, **f.values}
    return list(engine.evaluate_scope("audit", env, rec.trace, {}, layout).findings)


def replay_record(f: Facts, raw: Mapping[str, Any], dep: Mapping[str, Any]) -> dict[str, Any]:
    """What an audit transcript keeps so that `advisor replay` judges the same facts without the bundle:
    each fact with its evidence line, the deployment's scenario mapping, and its layout and GPU list (with
    the topo -m paths between the GPUs, where read)."""
    facts = {}
    for name, value in sorted(f.values.items()):
        if value is None or not isinstance(value, (str, int, float, bool)):
            continue
        e = f.where.get(name)
        line = {"file": Path(e.file).name, "line": e.line, "text": e.text} if e is not None and e.file else None
        facts[name] = {"value": value, "evidence": line}
    deployment = {k: v for k, v in dep.items() if k in ("tp", "pp", "dp", "ep", "gpus")}
    topology = dep.get("topology") or {}
    if topology.get("paths"):  # the GPU ids the deploy advice names come from the paths between them
        deployment["topology"] = {"gpus": list(topology.get("gpus") or []), "paths": dict(topology["paths"])}
    return {"facts": facts, "scenario": _plain(raw), "deployment": deployment}


def replay(engine: Engine, recorded: Mapping[str, Any]) -> Verdict:
    """The rules of today on an audit's recorded facts (see replay_record), judged as the audit judges."""
    f = Facts(values={name: fact["value"] for name, fact in (recorded.get("facts") or {}).items()})
    dep = dict(recorded.get("deployment") or {})
    return judge(engine, f, dict(recorded.get("scenario") or {}), dep, _layout(dep), search=False)


def _plain(value: Any) -> Any:
    """YAML mappings and lists as plain dicts and lists, for JSON."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _with_evidence(finding: Finding, engine: Engine, f: Facts) -> Finding:
    rule = engine.rules.rules[finding.rule]
    seen: list[Evidence] = []
    for name in sorted(rule.when.names):
        e = f.where.get(name)
        if e is not None and e not in seen and e.file:
            seen.append(e)
    return replace(finding, evidence=tuple(seen))


def _suppress(
    findings: list[Finding], engine: Engine, parsed: list[Parsed], today: dt.date, inputs: list[InputFile]
) -> list[Finding]:
    accepted: dict[str, dict[str, Any]] = {}
    for p in _all(parsed, "deployment"):
        items = p.data.get("accept") or []
        if not isinstance(items, list):
            next(i for i in inputs if i.path == p.file).notes.append("accept: not a list of findings; ignored")
            items = []
        for item in items:
            if not isinstance(item, Mapping) or not item.get("rule"):
                continue
            note = next(i for i in inputs if i.path == p.file)
            rule_id = str(item["rule"])
            if rule_id not in engine.rules.rules:
                note.notes.append(f"accept: unknown rule {rule_id!r}")
                continue
            if not str(item.get("reason") or "").strip():
                note.notes.append(f"accept: {rule_id} has no reason; not accepted")
                continue
            if engine.rules.rules[rule_id].unsuppressible:
                note.notes.append(f"accept: {rule_id} cannot be accepted (data loss or hangs)")
                continue
            expires = item.get("expires")
            if expires is not None:
                try:
                    day = expires if isinstance(expires, dt.date) else dt.date.fromisoformat(str(expires))
                except ValueError:
                    note.notes.append(f"accept: {rule_id} has an unreadable expiry {expires!r}; not accepted")
                    continue
                if day < today:
                    note.notes.append(f"accept: {rule_id} expired on {day.isoformat()}")
                    continue
                expires = day.isoformat()
            accepted[rule_id] = {"reason": str(item["reason"]).strip(), "expires": expires}
    return [replace(x, suppressed=accepted[x.rule]) if x.rule in accepted else x for x in findings]


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


_WORKER_ENGINE: Engine | None = None


def _init_worker() -> None:
    global _WORKER_ENGINE
    if _WORKER_ENGINE is None:
        _WORKER_ENGINE = Engine.load()


def _audit_one(args: tuple[str, str]) -> FleetItem:
    path, lang = args
    assert _WORKER_ENGINE is not None
    try:
        result = audit(_WORKER_ENGINE, [Path(path)], lang, search=False)
        if result.recommendation is not None:
            result.recommendation.trace_builder = None  # a closure over the engine: not sent between processes
        return FleetItem(path, result)
    except AdvisorError as exc:
        return FleetItem(path, None, exc.one_line())


def audit_fleet(
    engine: Engine, bundles: list[Path], lang: str = "en", jobs: int = 1, progress: Any = None
) -> list[FleetItem]:
    """Audit each bundle folder on its own, in order, with `jobs` worker processes; `progress(done, total)`."""
    global _WORKER_ENGINE
    _WORKER_ENGINE = engine
    work = [(str(b), lang) for b in bundles]
    items: list[FleetItem] = []
    if jobs <= 1 or len(work) < 2:
        for i, w in enumerate(work, 1):
            items.append(_audit_one(w))
            if progress:
                progress(i, len(work))
        return items
    import multiprocessing as mp

    ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else mp.get_context()
    with ctx.Pool(jobs, initializer=_init_worker) as pool:
        for i, item in enumerate(pool.imap(_audit_one, work, chunksize=max(1, len(work) // (jobs * 8))), 1):
            items.append(item)
            if progress:
                progress(i, len(work))
    return items
