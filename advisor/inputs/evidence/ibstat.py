"""`ibstat` (infiniband-diags): each channel adapter's ports with their state, rate and link layer.

The rate is what the port negotiated, in Gb/s ("Rate: 400" on an NDR ConnectX-7); the fastest active
port is the node's link to the others. A port that is not Active, or whose physical state is not
LinkUp, carries nothing, and its rate is not taken.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from advisor.inputs.evidence import Parsed, clean
from advisor.inputs.evidence.reader import Contribution, Reader, fact

CA = re.compile(r"^CA '([\w.-]{1,40})'[ \t]{0,8}$")
FIELD = re.compile(
    r"^[ \t]{1,16}(State|Physical state|Rate|Link layer)[ \t]{0,4}:[ \t]{0,8}([\w .-]{1,40}?)[ \t]{0,8}$"
)


def looks_like_ibstat(text: str) -> bool:
    """ibstat output: a channel adapter with a port's rate."""
    return bool(re.search(r"^CA '[\w.-]{1,40}'", text, re.M)) and "Rate:" in text


def parse_ibstat(text: str, file: str) -> Parsed:
    """Per port: adapter, state, physical state, rate (Gb/s) and link layer."""
    out = Parsed("ibstat", file)
    ports: list[dict[str, str]] = []
    adapter = ""
    for no, line in enumerate(clean(text).split("\n"), 1):
        m = CA.match(line.strip()) if line.startswith("CA ") else None
        if m:
            adapter = m.group(1)
            continue
        number = re.match(r"^[ \t]{1,16}Port (\d{1,3}):[ \t]{0,8}$", line)
        if number:
            ports.append({"adapter": adapter, "port": number.group(1)})
            out.at(f"port:{len(ports) - 1}", no, line)
            continue
        field = FIELD.match(line)
        if field and ports:
            ports[-1][field.group(1).lower()] = field.group(2)
            if field.group(1) in ("Rate", "State"):
                out.at(f"{field.group(1).lower()}:{len(ports) - 1}", no, line)
    if not ports:
        out.notes.append("no port section found")
        return out
    out.data = {"ports": ports}
    return out


def ibstat_facts(parsed: Parsed) -> Iterator[Contribution]:
    """The rate of the fastest active port, as the node's link (Gb/s per direction)."""
    best: tuple[float, int] | None = None
    for i, port in enumerate(parsed.data.get("ports") or []):
        rate = re.match(r"\d{1,5}(?:\.\d{1,3})?", port.get("rate", ""))
        if rate is None or port.get("state", "Active") != "Active" or port.get("physical state", "LinkUp") != "LinkUp":
            continue
        if best is None or float(rate.group(0)) > best[0]:
            best = (float(rate.group(0)), i)
    if best is not None:
        yield Contribution("hardware.node_link_gbps", best[0], parsed.evidence.get(f"rate:{best[1]}"))
    yield from _states(parsed)


def _states(parsed: Parsed) -> Iterator[Contribution]:
    """Ports that carry nothing (State Down, Armed, or a physical state other than LinkUp), and ports
    whose link is up but which no subnet manager has configured (State Initializing)."""
    ports = parsed.data.get("ports") or []
    name = [f"{p['adapter']}:{p.get('port', '?')}" for p in ports]
    down = [i for i, p in enumerate(ports) if p.get("state", "Active") not in ("Active", "Initializing")]
    waiting = [i for i, p in enumerate(ports) if p.get("state") == "Initializing"]
    yield fact("rdma_ports_active", sum(1 for p in ports if p.get("state") == "Active"))
    if down:
        said = ", ".join(f"{name[i]} {ports[i].get('state')}/{ports[i].get('physical state', '?')}" for i in down)
        yield fact("rdma_ports_down", said, parsed.evidence.get(f"state:{down[0]}"))
    if waiting:
        yield fact("rdma_ports_no_sm", ", ".join(name[i] for i in waiting), parsed.evidence.get(f"state:{waiting[0]}"))


IBSTAT = Reader(
    "ibstat",
    looks_like_ibstat,
    parse_ibstat,
    ibstat_facts,
    yields=("hardware.node_link_gbps", "fact:rdma_ports_active", "fact:rdma_ports_down", "fact:rdma_ports_no_sm"),
)
