"""`ray status`: the cluster's resources (used/total per resource) and the demands waiting for them.

Ray counts a node's GPUs by detecting them when the node starts, unless `ray start --num-gpus` says
otherwise; a demand for GPUs the cluster does not have waits (a pending placement group), which is how
a vLLM or training job on Ray hangs at start. Custom resources (a `V100` label) are not GPUs to Ray's
scheduler.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from advisor.inputs.evidence import Parsed, clean
from advisor.inputs.evidence.reader import Contribution, Reader, fact

BANNER = re.compile(r"^=+ Autoscaler status|^Node status$", re.M)
USAGE = re.compile(
    r"^[ \t]{0,8}([0-9]{1,9}(?:\.[0-9]{1,6})?)/([0-9]{1,9}(?:\.[0-9]{1,6})?)[ \t]{1,8}([A-Za-z_][\w:.-]{0,60})"
)
DEMAND = re.compile(r"^[ \t]{0,8}\{[^\n}]{0,400}?'GPU':[ \t]{0,4}([0-9]{1,6}(?:\.[0-9]{1,6})?)[^\n}]{0,400}\}")


def looks_like_ray_status(text: str) -> bool:
    """ray status: its autoscaler banner or node status, with a Resources usage block."""
    return bool(BANNER.search(text)) and "Usage:" in text


def parse_ray_status(text: str, file: str) -> Parsed:
    """The total of each resource the Usage block lists, and the GPUs each pending demand asks for."""
    out = Parsed("ray-status", file)
    totals: dict[str, float] = {}
    demands: list[float] = []
    block = ""
    for no, line in enumerate(clean(text).split("\n"), 1):
        stripped = line.strip()
        if stripped in ("Usage:", "Demands:", "Pending:", "Healthy:", "Recent failures:"):
            block = stripped
            out.at(block, no, line)
            continue
        if block == "Usage:" and (m := USAGE.match(line)):
            totals[m.group(3)] = float(m.group(2))
            if m.group(3) == "GPU":
                out.at("gpu", no, line)
        elif block == "Demands:" and (m := DEMAND.match(line)):
            demands.append(float(m.group(1)))
            out.at(f"demand:{len(demands) - 1}", no, line)
    if not totals:
        out.notes.append("no resource usage lines found")
    out.data = {"totals": totals, "demands": demands}
    return out


def ray_facts(parsed: Parsed) -> Iterator[Contribution]:
    """The GPUs the cluster has (0 where the Usage block lists none), and the largest GPU demand waiting."""
    totals, demands, ev = parsed.data.get("totals") or {}, parsed.data.get("demands") or [], parsed.evidence
    if not totals:
        return
    yield fact("ray_gpus_total", totals.get("GPU", 0.0), ev.get("gpu") or ev.get("Usage:"))
    others = sorted(k for k in totals if k not in ("CPU", "GPU", "memory", "object_store_memory") and "GiB" not in k)
    if others:
        yield fact("ray_custom_resources", ", ".join(others), ev.get("Usage:"))
    if demands:
        top = max(range(len(demands)), key=lambda i: demands[i])
        yield fact("ray_gpu_demand", demands[top], ev.get(f"demand:{top}"))


RAY_STATUS = Reader(
    "ray-status",
    looks_like_ray_status,
    parse_ray_status,
    ray_facts,
    yields=("fact:ray_gpus_total", "fact:ray_custom_resources", "fact:ray_gpu_demand"),
)
