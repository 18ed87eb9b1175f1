"""`advisor audit`: check a running or planned deployment against the rules, from host evidence.

Files are recognised by content, not name. Their parsed records become facts (each with the file
and line it came from); the deployment's own layout is evaluated by the same engine and rules as
`recommend` (with `only=` that layout), and the audit rules (scope: audit) look at what only a host
can show: paths between the GPUs of a TP group, measured bus bandwidth, NCCL settings and logs.
"""

from __future__ import annotations

import datetime as dt
from itertools import combinations
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path, PurePosixPath
from typing import Any

from advisor.core.engine import Engine
from advisor.core.facts import Facts, Origin
from advisor.core.layouts import Layout
from advisor.core.records import AuditResult, Finding, FleetItem, Recommendation, Unknown
from advisor.errors import AdvisorError, InputError
from advisor.i18n import DEFAULT_LANG, Message, Text, label_text
from advisor.inputs.evidence import Evidence, InputFile, Parsed, topo
from advisor.inputs.evidence.registry import parse_files
from advisor.inputs.scenario import build
from advisor.kb.rules import SEVERITIES



def _all(parsed: list[Parsed], kind: str) -> list[Parsed]:
    return [p for p in parsed if p.kind == kind]


def derive(parsed: list[Parsed], engine: Engine) -> tuple[Facts, dict[str, Any], dict[str, Any]]:
    """Audit facts, the scenario mapping they imply, and the deployment (layout and GPU indices)."""
    f = Facts()
    deployment_doc = next(iter(_all(parsed, "deployment")), None)
    doc = deployment_doc.data if deployment_doc else {}
    dep = dict(doc.get("deployment") or {})
    raw: dict[str, Any] = {k: v for k, v in doc.items() if k in ("model", "precision", "kv_cache_dtype", "hardware", "workload", "engine")}
    hw = dict(raw.get("hardware") or {})
    wl = dict(raw.get("workload") or {})

    topo_m = next(iter(_all(parsed, "nvidia-smi-topo")), None)
    gpus_seen: list[int] = topo_m.data["gpus"] if topo_m else []
    names: list[tuple[str, Evidence | None]] = []
    for p in _all(parsed, "nvidia-smi-q") + _all(parsed, "nvidia-smi-csv"):
        for i, g in enumerate(p.data.get("gpus", [])):
            if g.get("name"):
                names.append((str(g["name"]), p.evidence.get(f"name:{i}") or p.evidence.get(f"gpu:{i}")))
        if not gpus_seen:
            gpus_seen = list(range(len(p.data.get("gpus", []))))
        if "virtualized" in p.data:
            f.put("virtualized", p.data["virtualized"], p.evidence.get("virtualization:0"))
    for p in _all(parsed, "nccl-tests"):
        for name in p.data.get("gpu_names", []):
            names.append((name, p.evidence.get("rank:0")))
    if "gpu" not in hw and names:
        hw["gpu"] = names[0][0]
        f.where["gpu"] = names[0][1] or Evidence("", 0, names[0][0])
    if "gpus_per_node" not in hw and gpus_seen:
        hw["gpus_per_node"] = len(gpus_seen)
        if topo_m:
            f.where["gpus_per_node"] = topo_m.evidence.get("header") or Evidence(topo_m.file, 0, "")

    if topo_m:
        nv = topo_m.data["nvlinks"]
        if "nvlink" not in hw:
            hw["nvlink"] = topo.nvlink_kind(gpus_seen, nv)
            f.put("nvlink", hw["nvlink"], topo_m.evidence.get("row:0") or topo_m.evidence.get("header"))
        if nv:
            counts = sorted(set(nv.values()))
            f.put("nvlink_min_links", counts[0], topo_m.evidence.get("row:0"))
            f.put("nvlink_max_links", counts[-1], topo_m.evidence.get("row:0"))
            weak = [pair for pair, n in nv.items() if n == counts[0] and int(pair.split("-")[0]) < int(pair.split("-")[1])]
            if counts[0] < counts[-1]:
                first = int(weak[0].split("-")[0])
                f.put("nvlink_weak_pairs", ", ".join(f"GPU{p.replace('-', '-GPU')}" for p in weak), topo_m.evidence.get(f"row:{first}"))

    for p in _all(parsed, "nvidia-smi-p2p"):
        f.put("p2p", "ok" if p.data["all_ok"] else "broken", next(iter(p.evidence.values()), None))
    for p in _all(parsed, "p2p-bandwidth-test"):
        if p.data.get("p2p"):
            f.put("p2p", p.data["p2p"], next(iter(p.evidence.values()), None))
    for p in _all(parsed, "dmesg"):
        if p.data.get("iommu"):
            f.put("iommu", p.data["iommu"], p.evidence.get("iommu"))
        if p.data.get("virtualized"):
            f.put("virtualized", True, p.evidence.get("virtualized"))
    for p in _all(parsed, "cmdline"):
        f.put("iommu", p.data.get("iommu"), p.evidence.get("iommu"))
    for p in _all(parsed, "lspci"):
        if p.data.get("acs_enabled_bridges"):
            first = p.data["acs_enabled_bridges"][0]
            f.put("acs", "enabled", p.evidence.get(f"acs:{first}"))
        elif p.data.get("acs_checked"):
            f.put("acs", "disabled", None)
        slow = [g["address"] for g in p.data.get("gpus", []) if g.get("downgraded")]
        if slow:
            f.put("gpu_link_downgraded", ", ".join(slow), p.evidence.get(f"downgraded:{slow[0]}"))
    for p in _all(parsed, "nvidia-smi-nvlink"):
        inactive = sum(int(g.get("inactive", 0)) for g in p.data.get("gpus", {}).values())
        first_inactive = next((k for k in p.evidence if k.startswith("inactive:")), None)
        f.put("nvlink_inactive_links", inactive, p.evidence.get(first_inactive) if first_inactive else None)
    for p in _all(parsed, "engine-log"):
        events = p.data.get("events", {})
        for event, fact in (("nccl_timeout", "log_nccl_timeout"), ("peer_access_unsupported", "log_peer_access_unsupported"),
                            ("custom_allreduce_disabled", "log_custom_allreduce_disabled"), ("oom", "log_oom")):
            if events.get(event):
                f.put(fact, True, p.evidence.get(event))
        if events.get("peer_access_unsupported"):
            f.put("p2p", "broken", p.evidence.get("peer_access_unsupported"))
        elif events.get("nccl_p2p"):
            f.put("p2p", "ok", p.evidence.get("nccl_p2p"))

    launches = [(p, i, item) for p in _all(parsed, "launch") for i, item in enumerate(p.data.get("launches", []))]
    if launches:
        p, i, item = launches[0]
        where = p.evidence.get(f"launch:{i}")
        raw.setdefault("engine", item["engine"])
        for key in ("tp", "pp", "dp"):
            if item.get(key) and key not in dep:
                dep[key] = item[key]
                if where:
                    f.where[f"launch_{key}"] = where
        if item.get("ep"):
            f.put("ep_flag", item["ep"], where)
        if item.get("enable_ep") or item.get("ep"):
            dep.setdefault("ep", item.get("ep") or (dep.get("tp", 1) * dep.get("dp", 1)))
        if item.get("model") and "model" not in raw:
            raw["model"] = _catalogue_name(engine, item)
            if where:
                f.where["model"] = where
        if item.get("quantization") in ("fp8",) and "precision" not in raw:
            raw["precision"] = "fp8"
        if str(item.get("kv_cache_dtype", "")).startswith("fp8") and "kv_cache_dtype" not in raw:
            raw["kv_cache_dtype"] = "fp8"
        if item.get("max_model_len") and "context_tokens" not in wl:
            wl["context_tokens"] = item["max_model_len"]
        if item.get("gpus") and "gpus" not in dep:
            dep["gpus"] = item["gpus"]
        env = item.get("env", {})
        value = str(env.get("NCCL_P2P_DISABLE", "")).strip().lower() in ("1", "true", "yes")
        f.put("nccl_p2p_disable", value, p.evidence.get("env:NCCL_P2P_DISABLE") or where)
    if "virtualized" in f.values and "virtualized" not in hw:
        hw["virtualized"] = f.values["virtualized"]
    for name in ("iommu", "acs", "p2p"):
        if name in f.values and name not in hw:
            hw[name] = f.values[name]
    raw["hardware"] = hw
    if wl:
        raw["workload"] = wl
    topology = dict(topo_m.data) if topo_m else {}
    if topo_m:
        topology["evidence"] = topo_m.evidence
    return f, raw, {**dep, "topology": topology}


def _catalogue_name(engine: Engine, launch: Mapping[str, Any]) -> str:
    """The model a launch serves, as the catalogue knows it: the argument itself, the last part of a
    local path (/models/Llama-3.3-70B-Instruct), or the served model name; else the argument."""
    given = str(launch["model"])
    for name in (given, PurePosixPath(given).name, launch.get("served_model_name")):
        if name:
            try:
                engine.kb.find_model(str(name))
                return str(name)
            except AdvisorError:
                continue
    return given


def _group_facts(f: Facts, dep: Mapping[str, Any], layout: Layout, hw: Mapping[str, Any]) -> list[list[int]]:
    """TP groups of the deployment, and the path facts of the first group against the best grouping.

    The GPUs the launch can see are known from an explicit device list (CUDA_VISIBLE_DEVICES, device
    ids, the plan's `gpus`), or from the GPUs per node and the number of nodes the plan states; one
    host's GPU count alone does not say it, since a launch may span nodes."""
    topology = dep.get("topology") or {}
    tp = layout.tp
    per_node = int(hw.get("gpus_per_node") or 0)
    explicit = [int(g) for g in dep.get("gpus") or []]
    visible = explicit or list(range(per_node))
    f.put("deployed_gpus", layout.gpus, None)
    if explicit:
        f.put("visible_gpus", len(explicit), None)
    elif per_node and hw.get("nodes"):
        f.put("visible_gpus", per_node * int(hw["nodes"]), None)
    groups = [visible[i : i + tp] for i in range(0, min(len(visible), layout.gpus), tp) if len(visible[i : i + tp]) == tp]
    paths = topology.get("paths") or {}
    if tp < 2 or not groups or not paths:
        return groups
    worst = topo.worst_path(paths, groups[0])
    if worst:
        rows = topology.get("evidence") or {}
        where = next((rows.get(f"row:{a}") for a, b in combinations(groups[0], 2) if topo.path(paths, a, b) == worst), None)
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
        f.values["tp_link"] = "nvlink" if worst.startswith("NV") else "pcie"
        f.values["tp_spans_nvlink_domains"] = spans
    return groups


def _busbw_facts(f: Facts, parsed: list[Parsed], env: Mapping[str, Any]) -> None:
    run = next(iter(_all(parsed, "nccl-tests")), None)
    if run is None:
        return
    where = run.evidence.get("peak")
    f.put("busbw_measured_gbs", run.data["peak_busbw"], where)
    ranks = int(run.data.get("n_ranks") or 0)
    hosts = len(run.data.get("hosts") or []) or 1
    f.put("busbw_ranks", ranks, run.evidence.get("rank:0"))
    f.put("busbw_hosts", hosts, run.evidence.get("rank:0"))
    domain = int(env.get("nvlink_domain_size") or 1)
    if hosts > 1:
        link, gbs = "network", env.get("node_link_gbs")
    elif env.get("nvlink") != "none" and env.get("nvlink_gbs") and ranks and ranks <= domain:
        link, gbs = "nvlink", env.get("nvlink_gbs")
    else:
        link, gbs = "pcie", env.get("pcie_gbs")
    f.put("busbw_link", link, None)
    f.put("busbw_expected_gbs", gbs, None)


def _hardware_env(engine: Engine, hw: Mapping[str, Any]) -> dict[str, Any]:
    """Link facts of the GPU alone, for checks that need no model (measured bus bandwidth)."""
    from advisor.core.facts import link_speeds

    try:
        gpu = engine.kb.find_gpu(str(hw["gpu"]))
    except AdvisorError:
        return {}
    nvlink = str(hw.get("nvlink") or gpu.nvlink)
    return {**link_speeds(engine.kb, gpu, nvlink, int(hw.get("gpus_per_node") or 1), hw.get("node_link_gbps")), "nvlink": nvlink}


def _layout(dep: Mapping[str, Any]) -> Layout:
    tp, pp, dp = int(dep.get("tp") or 1), int(dep.get("pp") or 1), int(dep.get("dp") or 1)
    return Layout(dp, tp, pp, int(dep.get("ep") or 1))


def audit(engine: Engine, paths: Iterable[Path], lang: str = "en", today: dt.date | None = None,
          search: bool = True) -> AuditResult:
    """Read the evidence, derive facts, evaluate the deployment with the rules; InputError if nothing is usable.
    `search=False` (fleet audits) skips the alternatives, which a single audit lists."""
    paths = list(paths)
    inputs, parsed = parse_files(paths)
    if not parsed:
        raise InputError(
            "no usable evidence: " + "; ".join(f"{Path(i.path).name}: {', '.join(i.notes) or 'not recognised'}" for i in inputs)
            if inputs else ("no files in " + ", ".join(str(p) for p in paths) if paths else "no files given")
        )
    f, raw, dep = derive(parsed, engine)
    hw = raw["hardware"]
    layout = _layout(dep)
    groups = _group_facts(f, dep, layout, hw)
    rec: Recommendation | None = None
    unknowns: list[Unknown] = []
    problems = [f"the bundle was collected with {p.data.get('summary')}" for p in _all(parsed, "collect-manifest")
                if p.data.get("nvidia_gpus") is False]
    env: dict[str, Any] = dict(f.values)
    origins = {k: Origin("evidence", f"{Path(e.file).name}:{e.line}") for k, e in f.where.items() if e.file}
    if raw.get("model") and hw.get("gpu"):
        try:
            scenario = build(raw, engine.kb, where="deployment")
            rec = engine.evaluate(scenario, only=layout, known=f.values, known_origin=origins, search=search)
            env = {**rec.env, **f.values}
            unknowns = list(rec.unknowns)
        except AdvisorError as exc:
            problems.append(f"cannot evaluate the deployment: {exc.one_line()}")
    else:
        missing = "model" if not raw.get("model") else "gpu"
        spec = engine.kb.facts[missing]
        unknowns.append(Unknown(missing, spec.question or Text.same(missing), Message(label_text("needed_for_audit")),
                                (), spec.settle))
    if rec is None:  # the deployed layout and the GPU's links still decide the audit rules
        deployed = {"tp": layout.tp, "pp": layout.pp, "replicas": layout.replicas, "ep": layout.ep}
        env = {**(_hardware_env(engine, hw) if hw.get("gpu") else {}), **deployed, **env}
    _busbw_facts(f, parsed, env)
    env.update(f.values)
    host = engine.evaluate_scope("audit", env, rec.trace if rec else {}, origins, rec.layout if rec else None)
    findings = (list(rec.findings) if rec else []) + host.findings
    firings = (list(rec.firings) if rec else []) + host.firings
    findings = [_with_evidence(x, engine, f) for x in findings]
    findings = _suppress(findings, engine, parsed, today or dt.date.today(), inputs)
    findings.sort(key=lambda x: (bool(x.suppressed), -SEVERITIES.index(x.severity), x.rule))
    facts = _public_facts(f, raw, dep, groups)
    result = AuditResult(inputs, facts, findings, unknowns, rec, dep.get("topology") or {}, groups, DEFAULT_LANG, problems,
                         firings)
    return result.in_lang(lang)


def _with_evidence(finding: Finding, engine: Engine, f: Facts) -> Finding:
    rule = engine.rules.rules[finding.rule]
    seen: list[Evidence] = []
    for name in sorted(rule.when.names):
        e = f.where.get(name)
        if e is not None and e not in seen and e.file:
            seen.append(e)
    return replace(finding, evidence=tuple(seen))


def _suppress(findings: list[Finding], engine: Engine, parsed: list[Parsed], today: dt.date, inputs: list[InputFile]) -> list[Finding]:
    accepted: dict[str, dict[str, Any]] = {}
    for p in _all(parsed, "deployment"):
        for item in p.data.get("accept") or []:
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


def audit_fleet(engine: Engine, bundles: list[Path], lang: str = "en", jobs: int = 1,
                progress: Any = None) -> list[FleetItem]:
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

