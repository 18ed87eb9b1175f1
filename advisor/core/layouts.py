"""Candidate layouts (replicas x TP x PP, with EP for MoE) and the links each one's traffic crosses.

Placement follows the guidance the rules encode: a tensor-parallel group takes consecutive GPUs,
so it stays inside an NVLink domain and a node whenever its size allows; pipeline stages follow
across domains and nodes. Which layout is best is decided by the rules, not here.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from advisor.errors import InputError


@dataclass(frozen=True, order=True)
class Layout:
    """How the GPUs are used: copies of the model, and within a copy TP x PP, with EP for MoE."""

    replicas: int
    tp: int
    pp: int
    ep: int = 1  # 1: expert parallelism off

    @property
    def gpus_per_replica(self) -> int:
        """GPUs in one copy."""
        return self.tp * self.pp

    @property
    def gpus_per_instance(self) -> int:
        """GPUs that must run together: one copy, or every copy that shares experts through EP."""
        return self.ep * self.pp if self.ep > 1 else self.gpus_per_replica

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
        return f"{text}, EP {self.ep}" if self.ep > 1 else text

    def as_dict(self) -> dict[str, int]:
        """The contract's layout object."""
        return {
            "replicas": self.replicas,
            "tp": self.tp,
            "pp": self.pp,
            "ep": self.ep,
            "gpus_per_replica": self.gpus_per_replica,
        }


def parse_layout(text: str) -> Layout:
    """'tp=4,pp=2,replicas=1,ep=1' or 'TP4xPP2' into a Layout; InputError when it names no number."""
    values = {"replicas": 1, "tp": 1, "pp": 1, "ep": 1}
    for key, num in re.findall(r"(replicas|dp|tp|pp|ep)\s*=?\s*(\d+)", text.lower()):
        values["replicas" if key == "dp" else key] = int(num)
    if not re.search(r"\d", text):
        raise InputError(f"cannot read layout {text!r}", hint="write it like tp=4,pp=2 or replicas=2,tp=2")
    return Layout(values["replicas"], values["tp"], values["pp"], values["ep"])


def _divisors(n: int) -> list[int]:
    small = [d for d in range(1, int(n**0.5) + 1) if n % d == 0]
    return sorted(set(small + [n // d for d in small]))


def candidates(total: int, gpus_per_node: int, n_layers: int, moe: bool) -> Iterator[Layout]:
    """Every layout worth comparing on `total` GPUs: TP within a node or over whole nodes, PP at most one
    stage per layer."""
    for per_replica in range(1, total + 1):
        replicas = total // per_replica
        for tp in _divisors(per_replica):
            pp = per_replica // tp
            if (tp > gpus_per_node and tp % gpus_per_node) or pp > n_layers:
                continue
            yield Layout(replicas, tp, pp)
            if moe and tp * replicas > 1:
                yield Layout(replicas, tp, pp, ep=tp * replicas)


def link_facts(layout: Layout, env: Mapping[str, Any], latency_us: Mapping[str, float]) -> dict[str, Any]:
    """Per-layout facts about placement and links: which link TP, PP and the replicas cross."""
    per_node = env["gpus_per_node"]
    domain = env["nvlink_domain_size"]
    nvlink = env["nvlink"] != "none" and env.get("nvlink_gbs") is not None
    tp, pp, g = layout.tp, layout.pp, layout.gpus_per_replica

    def link_for(span: int) -> str:
        if span <= 1:
            return "none"
        if span > per_node:
            return "network"
        if nvlink and span <= domain:
            return "nvlink"
        return "pcie"

    speeds = {"nvlink": env.get("nvlink_gbs"), "pcie": env.get("pcie_gbs"), "network": env.get("node_link_gbs")}
    tp_link = link_for(tp)
    pp_link = link_for(g) if pp > 1 else "none"
    dp_link = link_for(layout.gpus) if layout.replicas > 1 else "none"
    return {
        "tp": tp,
        "pp": pp,
        "ep": layout.ep,
        "replicas": layout.replicas,
        "gpus_per_replica": g,
        "idle_gpus": env["total_gpus"] - layout.gpus,
        "tp_link": tp_link,
        "tp_link_gbs": speeds.get(tp_link),
        "tp_link_latency_us": latency_us.get(tp_link, 0.0),
        "pp_link": pp_link,
        "dp_link_gbs": speeds.get(dp_link),
        "tp_spans_nvlink_domains": nvlink and tp > domain,
        "tp_spans_nodes": tp > per_node,
        "pp_spans_nodes": pp > 1 and g > per_node,
    }
