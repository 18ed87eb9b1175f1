"""From the files read to the audit's facts: every reader's contributions in precedence order, the scenario
mapping and the deployment they imply, the bundle's GPU evidence, and the checks on what the files say.

Guarantees: the first contribution to a target wins (reader.py); a model is named as the catalogue knows it
only by an exact name; nothing here evaluates a rule.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from advisor.audit import p2p
from advisor.core.engine import Engine
from advisor.core.facts import Facts
from advisor.core.layouts import Layout
from advisor.errors import AdvisorError, InputError
from advisor.inputs.evidence import Evidence, Parsed
from advisor.inputs.evidence.manifest import host_bundles
from advisor.inputs.evidence.reader import ALL_RANKS, PAIRS, Reader
from advisor.inputs.evidence.registry import READERS, contributions
from advisor.inputs.scenario import check_nvlink, observed_nvlink


def of_kind(parsed: list[Parsed], kind: str) -> list[Parsed]:
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
        if c.target == PAIRS:  # every reader's word on peer-to-peer is weighed, not only the first
            placed.setdefault(PAIRS, []).extend(c.value)
            continue
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
    raw = {k: v for k, v in placed.items() if k not in ("deployment", "topology", PAIRS)}
    hw = raw.setdefault("hardware", {})
    topology = placed.get("topology") or {}
    pairs = p2p.matrix(placed.get(PAIRS) or [], host_gpus(topology, hw), card_has_p2p(engine, hw), topology)
    p2p.pair_facts(f, pairs)
    if "p2p" in f.values and "p2p" in place_of and not _has(placed, place_of["p2p"]):
        _fill(raw, place_of["p2p"], f.values["p2p"])  # the pairs' verdict is the host's, where nothing else says
    return f, raw, {**dep, "topology": topology, PAIRS: pairs}


def whole(value: Any) -> int | None:
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


def gpu_evidence_fact(f: Facts, paths: Sequence[Path], parsed: list[Parsed], readers: Sequence[Reader]) -> None:
    """bundle_gpu_evidence, for a bundle (a folder, or a collect manifest): whether any file in it was read
    as GPU evidence (a reader with `gpu_evidence`), and the collect manifest, where there is one, did not
    say that no GPU answered. The line is the manifest's summary, else the folder."""
    manifests = of_kind(parsed, "collect-manifest")
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


def nvlink_against_catalogue(engine: Engine, parsed: list[Parsed], f: Facts, hw: dict[str, Any]) -> str | None:
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
    hw["nvlink"], note = observed_nvlink(gpu, nvlink, whole(hw.get("gpus_per_node")) or 1)
    if "nvlink" in f.values:
        f.values["nvlink"] = hw["nvlink"]
    return note


def card_has_p2p(engine: Engine, hw: Mapping[str, Any]) -> bool | None:
    """The catalogue's word on the card's peer-to-peer over PCIe (None: the card is not known, or not said)."""
    if not hw.get("gpu"):
        return None
    try:
        return engine.kb.find_gpu(str(hw["gpu"])).pcie_p2p
    except AdvisorError:
        return None


def host_gpus(topology: Mapping[str, Any], hw: Mapping[str, Any]) -> list[int]:
    """The GPU indices of the host: topo -m's, else as many as the GPUs per node."""
    gpus = topology.get("gpus") or []
    return [int(g) for g in gpus] or list(range(whole(hw.get("gpus_per_node")) or 0))


def layout_of(dep: Mapping[str, Any]) -> Layout:
    tp, pp, dp = int(dep.get("tp") or 1), int(dep.get("pp") or 1), int(dep.get("dp") or 1)
    return Layout(dp, tp, pp, int(dep.get("ep") or 1))
