"""A layout's groups on a host's real GPU ids, as `nvidia-smi topo -m` numbers them.

`layouts.place` puts copies on ids 0..n-1 of a model machine whose NVLink domains are consecutive ids.
A real host numbers its GPUs otherwise (NVLink bridges on GPU0-GPU2 and GPU1-GPU3, two sockets).
`on_host` maps the placement onto the host's GPUs so that each copy takes the closest GPUs `topo -m`
shows, and each tensor-parallel group inside it the closest of those (topo.best_grouping, greedy, never
a search over combinations); `as_launched` names the GPUs a launch uses, consecutive in its device list.
Every node of a multi-node machine is numbered alike: the ids are the ones `topo -m` shows on each.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from advisor.core.layouts import Layout, Placement
from advisor.inputs.evidence import topo

Piece = tuple[int, tuple[int, ...]]  # a node and the GPU ids a group has on it


@dataclass(frozen=True)
class HostGroups:
    """Per copy, per pipeline stage, the GPUs of its tensor-parallel group: (node, GPU ids) pieces."""

    layout: Layout
    copies: tuple[tuple[tuple[Piece, ...], ...], ...]
    nodes: int = 1

    def text(self) -> str:
        """'0-3 → 4-7' (a copy's stages in order), '0,2 | 1,3' (copies); 'n1:0-7' where there are nodes;
        '0 → … → 7' for a pipeline of single GPUs on consecutive ids."""

        def piece(p: Piece) -> str:
            return f"n{p[0]}:{_ids(p[1])}" if self.nodes > 1 else _ids(p[1])

        def copy(stages: tuple[tuple[Piece, ...], ...]) -> str:
            texts = ["+".join(piece(p) for p in stage) for stage in stages]
            if len(texts) > 4 and _one_gpu_each_in_order(stages):  # a long pipeline of single GPUs
                return f"{texts[0]} → … → {texts[-1]}"
            return " → ".join(texts)

        return " | ".join(copy(c) for c in self.copies)

    def tp_groups(self) -> list[list[int]]:
        """The GPU ids of every tensor-parallel group that lies inside one node."""
        return [list(stage[0][1]) for copy in self.copies for stage in copy if len(stage) == 1]

    def as_json(self) -> list[list[list[dict[str, Any]]]]:
        """The contract's form: copies, their stages, each stage's pieces as {node, gpus}."""
        return [
            [[{"node": node, "gpus": list(gpus)} for node, gpus in stage] for stage in copy] for copy in self.copies
        ]


def _one_gpu_each_in_order(stages: tuple[tuple[Piece, ...], ...]) -> bool:
    """Whether every stage is one GPU, all on one node, on consecutive ids in order."""
    if any(len(stage) != 1 or len(stage[0][1]) != 1 for stage in stages):
        return False
    nodes = {stage[0][0] for stage in stages}
    ids = [stage[0][1][0] for stage in stages]
    return len(nodes) == 1 and ids == list(range(ids[0], ids[0] + len(ids)))


def _ids(gpus: Sequence[int]) -> str:
    """'0-3' for a run of consecutive ids, else '0,2'."""
    ordered = sorted(gpus)
    if len(ordered) > 2 and ordered == list(range(ordered[0], ordered[-1] + 1)):
        return f"{ordered[0]}-{ordered[-1]}"
    return ",".join(map(str, ordered))


def _closest(paths: Mapping[str, str], pool: list[int], size: int) -> list[int]:
    """The `size` GPUs of `pool` whose farthest path is shortest (the first ones where paths are unknown)."""
    if size >= len(pool):
        return list(pool)
    if size < 2 or not paths:
        return pool[:size]
    groups, _ = topo.best_grouping(dict(paths), pool, size)
    return groups[0] if groups else pool[:size]


def _local_order(placement: Placement, topology: Mapping[str, Any]) -> dict[int, int]:
    """Model id on a node -> the host's GPU id: copy by copy the closest free GPUs, stage by stage inside."""
    per_node = placement.machine.per_node
    real = sorted(int(g) for g in topology.get("gpus") or [])
    paths = topology.get("paths") or {}
    if len(real) != per_node:  # no matrix for this node's GPUs: the ids as the launch counts them
        return {v: v for v in range(per_node)}
    mapping: dict[int, int] = {}
    pool = list(real)
    for copy in placement.groups():
        stages = [[v % per_node for v in stage if v // per_node == copy[0][0] // per_node] for stage in copy]
        wanted = [v for stage in stages for v in stage if v not in mapping]
        if not wanted:
            continue
        mine = _closest(paths, pool, len(wanted))
        pool = [g for g in pool if g not in mine]
        for stage in stages:
            free = [v for v in stage if v not in mapping]
            if not free:
                continue
            chosen = _closest(paths, mine, len(free))
            mine = [g for g in mine if g not in chosen]
            mapping.update(zip(sorted(free), sorted(chosen), strict=True))
    rest = iter(pool)
    for v in range(per_node):
        if v not in mapping:
            mapping[v] = next(rest)
    return mapping


def _groups(placement: Placement, order: Mapping[int, int]) -> HostGroups:
    per_node = placement.machine.per_node
    copies = []
    for copy in placement.groups():
        stages = []
        for stage in copy:
            pieces: dict[int, list[int]] = {}
            for v in stage:
                pieces.setdefault(v // per_node, []).append(order.get(v % per_node, v % per_node))
            stages.append(tuple((node, tuple(sorted(ids))) for node, ids in sorted(pieces.items())))
        copies.append(tuple(stages))
    return HostGroups(placement.layout, tuple(copies), placement.machine.nodes)


def on_host(placement: Placement, topology: Mapping[str, Any]) -> HostGroups:
    """The placement on the host's GPU ids, each copy and each TP group on the closest GPUs topo -m shows."""
    return _groups(placement, _local_order(placement, topology))


def as_launched(placement: Placement, visible: Sequence[int]) -> HostGroups:
    """The GPUs a launch gives each group: its device list (CUDA_VISIBLE_DEVICES, device ids) in order,
    consecutive ids per group as the engines assign them; 0..n-1 on each node without a list."""
    per_node = placement.machine.per_node
    order = {v: int(visible[v]) if v < len(visible) else v for v in range(per_node)}
    return _groups(placement, order)


def worst_tp_path(groups: HostGroups, topology: Mapping[str, Any]) -> str | None:
    """The farthest topo -m path inside any of the tensor-parallel groups (None: no matrix, or TP 1)."""
    paths = topology.get("paths") or {}
    cells = [topo.worst_path(paths, g) for g in groups.tp_groups() if len(g) > 1] if paths else []
    known = [c for c in cells if c]
    return max(known, key=topo.rank) if known else None
