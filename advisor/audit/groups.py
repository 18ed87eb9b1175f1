"""The TP groups a deployment runs, on the GPUs its launch can see, and the paths between their GPUs: the
first group's worst path against the best grouping the host's topology allows.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import combinations
from typing import Any

from advisor.audit.read import whole
from advisor.core.facts import Facts
from advisor.core.layouts import Layout
from advisor.inputs.evidence import topo


def group_facts(f: Facts, dep: Mapping[str, Any], layout: Layout, hw: Mapping[str, Any]) -> list[list[int]]:
    """TP groups of the deployment, and the path facts of the first group against the best grouping.

    The GPUs the launch can see are known from an explicit device list (CUDA_VISIBLE_DEVICES, device
    ids, the plan's `gpus`), or from the GPUs per node and the number of nodes the plan states; one
    host's GPU count alone does not say it, since a launch may span nodes."""
    groups = _groups(f, dep, layout, hw)
    topology = dep.get("topology") or {}
    paths = topology.get("paths") or {}
    if layout.tp >= 2 and groups and paths:
        _path_facts(f, topology, paths, groups, layout.tp)
    if paths:
        _host_path_facts(f, topology, paths)
    return groups


def _host_path_facts(f: Facts, topology: Mapping[str, Any], paths: dict[str, str]) -> None:
    """The farthest path between any two GPUs of the host, and the pairs that use PCIe (no NVLink)."""
    gpus = [int(g) for g in topology.get("gpus") or []]
    worst = topo.worst_path(paths, gpus)
    if not worst:
        return
    over_pcie = [(a, b) for a, b in combinations(gpus, 2) if 2 <= topo.rank(topo.path(paths, a, b) or "NV") <= 6]
    rows = topology.get("evidence") or {}
    f.put("host_path_worst", worst, rows.get(f"row:{gpus[0]}"))
    f.put("host_path_worst_rank", topo.rank(worst), rows.get(f"row:{gpus[0]}"))
    if over_pcie:
        shown = ", ".join(f"GPU{a}-GPU{b}" for a, b in over_pcie[:6]) + (" …" if len(over_pcie) > 6 else "")
        f.put("host_pcie_pairs", shown, None)
        f.put("host_pcie_pair_count", len(over_pcie), None)


def _groups(f: Facts, dep: Mapping[str, Any], layout: Layout, hw: Mapping[str, Any]) -> list[list[int]]:
    """The visible GPUs cut into TP groups, with the facts of how many GPUs the launch sees and uses."""
    tp = layout.tp
    per_node = whole(hw.get("gpus_per_node")) or 0
    explicit = [int(g) for g in dep.get("gpus") or []]
    visible = explicit or list(range(per_node))
    f.put("deployed_gpus", layout.gpus, None)
    if explicit:
        f.put("visible_gpus", len(explicit), None)
    elif per_node and whole(hw.get("nodes")):
        f.put("visible_gpus", per_node * (whole(hw.get("nodes")) or 1), None)
    return [visible[i : i + tp] for i in range(0, min(len(visible), layout.gpus), tp) if len(visible[i : i + tp]) == tp]


def _path_facts(f: Facts, topology: Mapping[str, Any], paths: dict[str, str], groups: list[list[int]], tp: int) -> None:
    """The first group's worst path (with the row of topo -m that shows it), the best grouping's for as many
    groups as the deployment runs, and whether the group spans NVLink domains."""
    group = groups[0]
    worst = topo.worst_path(paths, group)
    if not worst:
        return
    rows = topology.get("evidence") or {}
    inferred = topology.get("inferred") or {}
    farthest = next((a, b) for a, b in combinations(group, 2) if topo.path(paths, a, b) == worst)
    through = inferred.get("{}-{}".format(*farthest))  # a path the paste did not show: the row it follows from
    where = rows.get(f"row:{through if through is not None else farthest[0]}")
    f.put("tp_gpus", ",".join(map(str, group)), where)
    f.put("tp_path_worst", worst, where)
    f.put("tp_path_worst_rank", topo.rank(worst), where)
    best_groups, best = topo.best_grouping(paths, topology.get("gpus", []), tp)
    if best is None:  # some of the host's pairs are not shown: group as many GPUs as the deployment runs
        best_groups, best = topo.best_grouping(paths, topology.get("gpus", []), tp, len(groups))
    if best:
        f.put("best_tp_path", best, None)
        f.put("best_tp_path_rank", topo.rank(best), None)
        f.put("better_tp_groups", " | ".join(",".join(map(str, g)) for g in best_groups), None)
    if worst == "SYS":
        _socket_split(f, paths, topology.get("gpus", []), group, tp)
    domains = topology.get("nvlink_domains") or []
    spans = sum(1 for d in domains if set(d) & set(group)) > 1 and any(len(d) > 1 for d in domains)
    f.put("tp_gpus_span_domains", spans, None)
    # SYS crosses the CPUs' own link: priced as the `socket` link (knowledge/links.yaml), not plain PCIe
    f.values["tp_link"] = "nvlink" if worst.startswith("NV") else "socket" if worst == "SYS" else "pcie"
    f.values["tp_spans_nvlink_domains"] = spans


def _socket_split(f: Facts, paths: dict[str, str], gpus: list[int], group: list[int], tp: int) -> None:
    """The split that keeps each TP group inside one CPU socket: TP as large as the socket of the group's
    first GPU holds (the GPUs topo -m joins to it by anything shorter than SYS), pipeline stages across."""
    socket = next((s for s in topo.socket_groups(paths, [int(g) for g in gpus]) if group[0] in s), [])
    if 1 < len(socket) < tp and tp % len(socket) == 0:
        f.put("socket_tp", len(socket), None)
        f.put("socket_pp", tp // len(socket), None)
        f.put("socket_gpus", ",".join(map(str, socket)), None)
