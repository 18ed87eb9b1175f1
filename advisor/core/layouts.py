"""Candidate layouts (replicas x TP x PP, with EP for MoE) and the links each one's traffic crosses.

Placement follows the guidance the rules encode: a tensor-parallel group takes consecutive GPUs,
so it stays inside an NVLink domain and a node whenever its size allows; pipeline stages follow
across domains and nodes. Which layout is best is decided by the rules, not here.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from advisor.errors import InputError
from advisor.structs import Struct

# How the layout labels name a training sharding (the values are knowledge/fields.yaml's sharding choices).
SHARDING_NAMES = {"none": "DDP", "zero1": "ZeRO-1", "zero2": "ZeRO-2", "zero3": "ZeRO-3", "fsdp": "FSDP"}


class Layout(Struct, order=True):
    """How the GPUs are used: copies of the model, and within a copy TP x PP, with EP for MoE."""

    replicas: int
    tp: int
    pp: int
    ep: int = 1  # 1: expert parallelism off
    sharding: str = ""  # training: how the state is sharded where the advisor chose it ("": not chosen)

    @property
    def gpus_per_replica(self) -> int:
        """GPUs in one copy."""
        return self.tp * self.pp

    @property
    def gpus_per_instance(self) -> int:
        """GPUs that must run together: one copy, or every copy that shares experts through EP."""
        return self.ep * self.pp if self.ep > 1 else self.gpus_per_replica

    @property
    def ep_copies(self) -> int:
        """Copies in one expert-parallel group (1 without EP): EP = TP × this."""
        return max(self.ep // self.tp, 1) if self.ep > 1 else 1

    @property
    def gpus(self) -> int:
        """GPUs the layout uses."""
        return self.replicas * self.gpus_per_replica

    def label(self) -> str:
        """Short form such as '2 × TP 2' or '1 × TP 4 × PP 2, EP 8'."""
        parts = [f"TP {self.tp}"] if self.tp > 1 else []
        if self.pp > 1:
            parts.append(f"PP {self.pp}")
        inner = " × ".join(parts) or "1 GPU"
        text = f"{self.replicas} × {inner}" if self.replicas > 1 else inner
        text = f"{text}, EP {self.ep}" if self.ep > 1 else text
        return f"{text}, {SHARDING_NAMES.get(self.sharding, self.sharding)}" if self.sharding else text

    def bare(self) -> Layout:
        """The same split of the GPUs without a chosen sharding."""
        return Layout(self.replicas, self.tp, self.pp, self.ep) if self.sharding else self

    def as_dict(self) -> dict[str, Any]:
        """The contract's layout object (with `sharding` where the advisor chose it)."""
        out: dict[str, Any] = {
            "replicas": self.replicas,
            "tp": self.tp,
            "pp": self.pp,
            "ep": self.ep,
            "gpus_per_replica": self.gpus_per_replica,
        }
        if self.sharding:
            out["sharding"] = self.sharding
        return out


def parse_layout(text: str) -> Layout:
    """'tp=4,pp=2,replicas=1,ep=1' or 'TP4xPP2' into a Layout; InputError when it names no number."""
    values = {"replicas": 1, "tp": 1, "pp": 1, "ep": 1}
    for key, num in re.findall(r"(replicas|dp|tp|pp|ep)[ \t]{0,64}(?:=[ \t]{0,64})?(\d{1,12})", text.lower()):
        values["replicas" if key == "dp" else key] = int(num)
    if not re.search(r"\d", text):
        raise InputError(f"cannot read layout {text!r}", hint="write it like tp=4,pp=2 or replicas=2,tp=2")
    return Layout(values["replicas"], values["tp"], values["pp"], values["ep"])


def _divisors(n: int) -> list[int]:
    small = [d for d in range(1, int(n**0.5) + 1) if n % d == 0]
    return sorted(set(small + [n // d for d in small]))


# fastest first: a group's link is its slowest; "socket" is PCIe across the CPU interconnect (topo -m's SYS)
LINK_ORDER = ("none", "nvlink", "pcie", "socket", "network")


class Machine(Struct):
    """The GPUs as ids 0..total-1: `per_node` to a node, NVLink domains of `domain` GPUs inside a node, and
    `socket` GPUs to a CPU socket (0: one socket per node, nothing crosses the CPU interconnect)."""

    nodes: int
    per_node: int
    domain: int
    nvlink: bool
    socket: int = 0

    @property
    def total(self) -> int:
        """GPUs in all nodes."""
        return self.nodes * self.per_node

    def link(self, first: int, last: int) -> str:
        """The slowest link inside the consecutive GPU ids first..last."""
        if last <= first:
            return "none"
        if first // self.per_node != last // self.per_node:
            return "network"
        if self.nvlink and (first % self.per_node) // self.domain == (last % self.per_node) // self.domain:
            return "nvlink"
        if (
            0 < self.socket < self.per_node
            and (first % self.per_node) // self.socket != (last % self.per_node) // self.socket
        ):
            return "socket"
        return "pcie"

    def start(self, cursor: int, size: int) -> int:
        """Where a copy of `size` GPUs starts at or after `cursor` without straddling a node, an NVLink
        domain or a CPU socket that it fits inside; a copy larger than a node starts on a node boundary."""
        local = cursor % self.per_node
        if size > self.per_node:
            return cursor if local == 0 else cursor + self.per_node - local
        if local + size > self.per_node:
            return cursor + self.per_node - local
        if self.nvlink and size <= self.domain and local % self.domain + size > self.domain:
            return min(cursor + self.domain - local % self.domain, cursor + self.per_node - local)
        if 0 < self.socket < self.per_node and size <= self.socket and local % self.socket + size > self.socket:
            if not (self.nvlink and size <= self.domain):  # an NVLink domain that holds the copy is faster still
                return min(cursor + self.socket - local % self.socket, cursor + self.per_node - local)
        return cursor


class Placement(Struct):
    """Where each copy of a layout sits: the first GPU id of every copy (its GPUs follow in order:
    stage by stage, each stage's tensor-parallel group on consecutive ids)."""

    layout: Layout
    machine: Machine
    starts: tuple[int, ...]

    def gpus(self, copy: int) -> range:
        """The GPU ids of one copy."""
        first = self.starts[copy]
        return range(first, first + self.layout.gpus_per_replica)

    def groups(self) -> list[list[list[int]]]:
        """Per copy, per pipeline stage, the GPU ids of its tensor-parallel group."""
        tp = self.layout.tp
        return [
            [list(self.gpus(c))[s * tp : (s + 1) * tp] for s in range(self.layout.pp)] for c in range(len(self.starts))
        ]

    def _pattern(self) -> tuple[int, ...]:
        # copies repeat node by node (or span whole nodes), so the copies of the first node show every case
        first_node = [s for s in self.starts if s < self.machine.per_node]
        return tuple(first_node or self.starts[:1])

    def links(self) -> dict[str, str]:
        """The slowest link each kind of traffic crosses: TP inside a stage, PP between stages, EP
        across the copies that share experts, DP between the copies."""
        m, lay = self.machine, self.layout
        worst = {"tp": 0, "pp": 0}
        for start in self._pattern():
            for stage in range(lay.pp):
                first = start + stage * lay.tp
                worst["tp"] = max(worst["tp"], LINK_ORDER.index(m.link(first, first + lay.tp - 1)))
                if stage:
                    worst["pp"] = max(worst["pp"], LINK_ORDER.index(m.link(first - lay.tp, first + lay.tp - 1)))
        span = (
            LINK_ORDER[0]
            if len(self.starts) < 2
            else m.link(self.starts[0], self.starts[-1] + lay.gpus_per_replica - 1)
        )
        return {
            "tp": LINK_ORDER[worst["tp"]],
            "pp": LINK_ORDER[worst["pp"]],
            "ep": _worst(
                ep_link(lay, m, self.starts[i], self.starts[i + lay.ep_copies - 1])
                for i in range(0, len(self.starts) - lay.ep_copies + 1, lay.ep_copies)
            ),
            "dp": span,
        }

    def straddles(self) -> bool:
        """Whether a copy that fits inside one node crosses a node boundary."""
        g, per_node = self.layout.gpus_per_replica, self.machine.per_node
        return g <= per_node and any(s // per_node != (s + g - 1) // per_node for s in self.starts)


def place(layout: Layout, machine: Machine, strict: bool = True) -> Placement | None:
    """The copies of `layout` on real GPU ids, none straddling a node or an NVLink domain it fits in;
    None when they do not all fit that way (with `strict=False`: packed in order, straddling where they
    must, so a layout the user names is still placed and its links are the slowest it crosses)."""
    g = layout.gpus_per_replica
    starts, cursor = [], 0
    for _ in range(layout.replicas):
        start = machine.start(cursor, g) if strict else cursor
        if start + g > machine.total:
            return None
        starts.append(start)
        cursor = start + g
    return Placement(layout, machine, tuple(starts))


def max_copies(size: int, machine: Machine) -> int:
    """How many copies of `size` GPUs fit the machine without straddling: as many as `place` places one
    after the other. A copy larger than a node starts on a node boundary; smaller ones never straddle a
    node, so every node holds the same copies as the first (counted there, not across the cluster)."""
    per_node = machine.per_node
    if size > per_node:
        span = -(-size // per_node) * per_node
        return 0 if size > machine.total else (machine.total - size) // span + 1
    count, cursor = 0, 0
    while True:
        start = machine.start(cursor, size)
        if start + size > per_node:
            return count * machine.nodes
        count, cursor = count + 1, start + size


def candidates(machine: Machine, n_layers: int, moe: bool) -> Iterator[Layout]:
    """Every layout worth comparing: as many copies of each size as fit without straddling, TP within a
    node or over whole nodes, PP at most one stage per layer. A copy larger than a node takes whole
    nodes: one that ends part-way into a node would leave the rest of that node idle, since the next copy
    starts on a node boundary, so the copy of those whole nodes is compared instead."""
    for per_replica in range(1, machine.total + 1):
        if per_replica > machine.per_node and per_replica % machine.per_node:
            continue
        replicas = max_copies(per_replica, machine)
        if not replicas:
            continue
        for tp in _divisors(per_replica):
            pp = per_replica // tp
            if (tp > machine.per_node and tp % machine.per_node) or pp > n_layers:
                continue
            yield Layout(replicas, tp, pp)
            if moe:  # expert groups of k copies each: one instance of all copies, or several (one per node)
                for k in _divisors(replicas):
                    if tp * k > 1:
                        yield Layout(replicas, tp, pp, ep=tp * k)


def collective_latency(env: Mapping[str, Any], link: str, ranks: int) -> float:
    """The small-message time of one collective over `ranks` GPUs on `link`: the measured time, scaled by
    the depth of NCCL's tree, log2(ranks) / log2(ranks measured); 0 where nothing was measured."""
    measured, measured_ranks = env.get(f"{link}_latency_us"), env.get(f"{link}_latency_ranks") or 2
    if not measured or ranks < 2:
        return 0.0
    return float(measured) * math.log2(ranks) / math.log2(max(int(measured_ranks), 2))


def machine_of(env: Mapping[str, Any]) -> Machine:
    """The machine the scenario facts describe."""
    per_node = int(env["gpus_per_node"])
    nvlink = env["nvlink"] != "none" and env.get("nvlink_gbs") is not None
    socket = int(env.get("gpus_per_socket") or 0)
    return Machine(
        int(env["total_gpus"]) // per_node,
        per_node,
        int(env["nvlink_domain_size"] or 1),
        nvlink,
        socket if 0 < socket < per_node and per_node % socket == 0 else 0,
    )


def aligned_links(layout: Layout, machine: Machine) -> dict[str, str] | None:
    """The links of `layout` placed as `place` places it, worked out from the copies of the first node
    alone (every node holds the same pattern), so the cost does not grow with the cluster; None when the
    copies do not all fit without straddling."""
    g, per_node = layout.gpus_per_replica, machine.per_node
    if g > per_node:
        span = -(-g // per_node) * per_node  # a copy larger than a node starts on a node boundary
        starts, last_start = [0], (layout.replicas - 1) * span
    else:
        starts, cursor = [], 0
        while True:
            start = machine.start(cursor, g)
            if start + g > per_node:
                break
            starts.append(start)
            cursor = start + g
        if not starts:
            return None
        per = len(starts)
        last_start = (layout.replicas - 1) // per * per_node + starts[(layout.replicas - 1) % per]

    def copy_start(i: int) -> int:
        if g > per_node:
            return i * span
        return i // len(starts) * per_node + starts[i % len(starts)]

    if last_start + g > machine.total:
        return None
    tp_worst = pp_worst = 0
    groups = min(layout.pp, per_node) if layout.tp > 1 else 0  # group offsets repeat within per_node groups
    for start in starts:
        for stage in range(groups):
            first = start + stage * layout.tp
            tp_worst = max(tp_worst, LINK_ORDER.index(machine.link(first, first + layout.tp - 1)))
        if layout.pp > 1:  # the hand-offs' ranges overlap on every TP group and cover the whole copy
            pp_worst = max(pp_worst, LINK_ORDER.index(machine.link(start, start + g - 1)))
    worst = {"tp": tp_worst, "pp": pp_worst}
    span_link = machine.link(0, last_start + g - 1) if layout.replicas > 1 else "none"
    return {
        "tp": LINK_ORDER[worst["tp"]],
        "pp": LINK_ORDER[worst["pp"]],
        "ep": _worst(
            ep_link(
                layout,
                machine,
                copy_start(j * layout.ep_copies),
                copy_start(j * layout.ep_copies + layout.ep_copies - 1),
            )
            for j in range(min(layout.replicas // layout.ep_copies, per_node))
        ),
        "dp": span_link,
    }


def _worst(links: Iterable[str]) -> str:
    return max(links, key=LINK_ORDER.index, default="none")


def ep_link(layout: Layout, machine: Machine, first_start: int, last_start: int) -> str:
    """The slowest link inside an expert-parallel group: each pipeline stage's TP groups of every copy,
    from the first copy's (at `first_start`) to the last copy's (at `last_start`)."""
    if layout.ep < 2:
        return "none"
    worst = 0
    for stage in range(layout.pp):
        offset = stage * layout.tp
        link = machine.link(first_start + offset, last_start + offset + layout.tp - 1)
        worst = max(worst, LINK_ORDER.index(link))
    return LINK_ORDER[worst]


def ep_nodes(layout: Layout, machine: Machine) -> int:
    """Nodes one stage of an expert-parallel group spans, with copies placed node by node: copies that
    share a node share it in the group too; a copy of whole nodes puts each stage's TP group on its own."""
    if layout.ep < 2:
        return 1
    copies_per_node = machine.per_node // layout.gpus_per_replica
    if copies_per_node:
        return -(-layout.ep_copies // copies_per_node)
    return layout.ep_copies * -(-layout.tp // machine.per_node)


LAYOUT_NUMBERS = ("tp", "pp", "ep", "replicas", "gpus_per_replica", "idle_gpus")


def layout_numbers(layout: Layout, env: Mapping[str, Any]) -> dict[str, Any]:
    """The layout's own numbers (LAYOUT_NUMBERS), without placing it: the first facts of `link_facts`."""
    return {
        "tp": layout.tp,
        "pp": layout.pp,
        "ep": layout.ep,
        "replicas": layout.replicas,
        "gpus_per_replica": layout.gpus_per_replica,
        "idle_gpus": env["total_gpus"] - layout.gpus,
    }


def link_facts(
    layout: Layout, env: Mapping[str, Any], placement: Placement | None = None, machine: Machine | None = None
) -> dict[str, Any]:
    """Per-layout facts about placement and links: which link TP, PP, EP and the copies cross, at what
    bandwidth and measured latency (the scenario's `pcie_latency_us`, ...; 0 where none is known);
    `machine`: the scenario's (`machine_of(env)`), where the caller has it."""
    machine = machine or machine_of(env)
    straddles = False
    links = placement.links() if placement is not None else aligned_links(layout, machine)
    if links is None:  # a layout the user named that cannot be placed without straddling
        placement = place(layout, machine, strict=False)
        straddles = bool(placement and placement.straddles())
        links = placement.links() if placement is not None else dict.fromkeys(("tp", "pp", "ep", "dp"), "network")
    speeds = {
        "nvlink": env.get("nvlink_gbs"),
        "pcie": env.get("pcie_gbs"),
        "socket": env.get("socket_gbs"),
        "network": env.get("node_link_gbs"),
    }
    tp, pp = layout.tp, layout.pp
    per_node, domain = machine.per_node, machine.domain
    facts = layout_numbers(layout, env)
    facts |= {
        "copy_straddles_nodes": straddles,
        "tp_spans_nvlink_domains": machine.nvlink and tp > domain,
        "tp_spans_nodes": tp > per_node or links["tp"] == "network",
        "tp_crosses_sockets": links["tp"] == "socket",
        "pp_spans_nodes": pp > 1 and links["pp"] == "network",
    }
    ranks = {"tp": tp, "pp": 2, "ep": layout.ep}  # a hand-off between two stages is one send
    for kind in ("tp", "pp", "ep"):
        facts[f"{kind}_link"] = links[kind]
        facts[f"{kind}_link_gbs"] = speeds.get(links[kind])
        facts[f"{kind}_link_latency_us"] = collective_latency(env, links[kind], ranks[kind])
    facts["dp_link_gbs"] = speeds.get(links["dp"])
    facts["ep_nodes"] = ep_nodes(layout, machine) if links["ep"] == "network" else 1
    collective = max(links["tp"], links["ep"], key=LINK_ORDER.index)
    facts["collective_link"] = collective
    facts["collective_link_rank"] = LINK_ORDER.index(collective)
    return facts
