"""The RDMA adapters' own listings: `show_gids` (Mellanox mlnx-tools), `ibv_devinfo -v` (rdma-core) and
`ibdev2netdev` (MLNX_OFED), whose (Up)/(Down) is the network interface's carrier, not the port's state.

Both list each port's GID table: the index, the GID, its RoCE version, and for `show_gids` the IPv4
address an IPv4-mapped GID (::ffff:a.b.c.d) carries. NCCL on RoCE, with NCCL_IB_GID_INDEX unset (-1),
takes the lowest index whose GID is of the address family NCCL_IB_ADDR_FAMILY names (AF_INET by
default) and of the RoCE version NCCL_IB_ROCE_VERSION_NUM names (2 by default; NVIDIA/nccl
src/transport/net_ib/connect.cc, ncclIbGetGidIndex). That index per port is what the readers yield,
with the ports that have none; `ibv_devinfo` also gives each port's state (PORT_ACTIVE, PORT_DOWN,
PORT_INIT: link up and no subnet manager has configured it).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from advisor.inputs.evidence import Parsed, clean
from advisor.inputs.evidence.reader import Contribution, Reader, fact

GID = r"[0-9a-fA-F]{4}(?::[0-9a-fA-F]{4}){7}"
SHOW_GIDS_HEADER = re.compile(r"^DEV[ \t]{1,16}PORT[ \t]{1,16}INDEX[ \t]{1,16}GID\b", re.M)
SHOW_GIDS_ROW = re.compile(
    r"^[ \t]{0,8}([\w.-]{1,40})[ \t]{1,16}(\d{1,3})[ \t]{1,16}(\d{1,5})[ \t]{1,16}(" + GID + r")"
    r"[ \t]{1,40}(?:(\d{1,3}(?:\.\d{1,3}){3})[ \t]{1,40})?[vV]([12])\b"
)
HCA = re.compile(
    r"^[ \t]{0,8}hca_id:[ \t]{1,16}([\w.-]{1,40})|^[$# \t]{0,8}ibv_devinfo\b[^\n]{0,80}?-d[ \t]{1,4}([\w.-]{1,40})"
)
PORT = re.compile(r"^[ \t]{1,24}port:[ \t]{1,16}(\d{1,3})[ \t]{0,8}$")
STATE = re.compile(r"^[ \t]{1,32}state:[ \t]{1,16}(PORT_[A-Z_]{2,20})")
LINK_LAYER = re.compile(r"^[ \t]{1,32}link_layer:[ \t]{1,16}(\w{1,20})")
DEVINFO_GID = re.compile(
    r"^[ \t]{1,32}GID\[[ \t]{0,6}(\d{1,5})\]:[ \t]{1,16}([0-9a-fA-F:.]{2,45}),[ \t]{0,4}RoCE v([12])\b"
)
MAPPED = re.compile(r"^(?:0000:){5}ffff:|^::ffff:", re.I)
# ibdev2netdev (MLNX_OFED): "mlx5_0 port 1 ==> ib0 (Down)"; with -v the PCI address, part, firmware and the
# port's own state come first: "0000:1a:00.0 mlx5_0 (MT4123 - ...) ... fw 20.31.1014 port 1 (ACTIVE) ==> ib0 (Up)"
NETDEV_ROW = re.compile(
    r"^[ \t]{0,8}(?:[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-9a-fA-F][ \t]{1,8})?([\w.-]{1,40})[ \t]"
    r"[^\n]{0,160}?port[ \t]{1,8}(\d{1,3})[ \t]{1,8}(?:\((ACTIVE|DOWN|INIT|ARMED|NA)[ \t]{0,8}\)[ \t]{1,8})?"
    r"==>[ \t]{1,8}([\w.@-]{1,40})[ \t]{1,8}\((Up|Down|NA)\)"
)


def looks_like_show_gids(text: str) -> bool:
    """show_gids: its DEV PORT INDEX GID header, or rows of device, port, index, GID and RoCE version."""
    if SHOW_GIDS_HEADER.search(text):
        return True
    return sum(1 for line in text.split("\n")[:400] if SHOW_GIDS_ROW.match(line)) >= 2


def looks_like_devinfo(text: str) -> bool:
    """ibv_devinfo: an hca_id with its ports' states, or the GID rows of `-v`."""
    if re.search(r"^[ \t]{0,8}hca_id:", text, re.M) and re.search(r"state:[ \t]{1,16}PORT_", text):
        return True
    return sum(1 for line in text.split("\n") if "GID[" in line and DEVINFO_GID.match(line)) >= 2


def looks_like_ibdev2netdev(text: str) -> bool:
    """ibdev2netdev: rows of RDMA device, port, ==> network interface and its (Up)/(Down)."""
    return sum(1 for line in text.split("\n")[:400] if "==>" in line and NETDEV_ROW.match(line)) >= 1


def parse_ibdev2netdev(text: str, file: str) -> Parsed:
    """Each row: the port (device:port), its network interface, the interface's carrier, the port state (-v)."""
    out = Parsed("ibdev2netdev", file)
    rows = []
    for no, line in enumerate(clean(text).split("\n"), 1):
        m = NETDEV_ROW.match(line) if "==>" in line else None
        if m:
            port = f"{m.group(1)}:{m.group(2)}"
            rows.append({"port": port, "state": m.group(3) or "", "netdev": m.group(4), "carrier": m.group(5)})
            out.at(f"netdev:{port}", no, line)
    out.data = {"netdevs": rows}
    return out


def netdev_facts(parsed: Parsed) -> Iterator[Contribution]:
    """The interfaces whose carrier is down: IPoIB ones (ib*), whose carrier says nothing of the port, and
    Ethernet ones (a RoCE port's own link); and ports -v shows not ACTIVE."""
    rows, ev = parsed.data.get("netdevs") or [], parsed.evidence
    ipoib = [r for r in rows if r["carrier"] == "Down" and r["netdev"].startswith("ib")]
    ethernet = [r for r in rows if r["carrier"] == "Down" and not r["netdev"].startswith("ib")]
    if ipoib:
        named = ", ".join(f"{r['netdev']} ({r['port']})" for r in ipoib)
        yield fact("ipoib_netdevs_down", named, ev.get(f"netdev:{ipoib[0]['port']}"))
    if ethernet:
        named = ", ".join(f"{r['netdev']} ({r['port']})" for r in ethernet)
        yield fact("rdma_ethernet_netdevs_down", named, ev.get(f"netdev:{ethernet[0]['port']}"))
    yield from _verbose_states(parsed)


def _verbose_states(parsed: Parsed) -> Iterator[Contribution]:
    """The ports' own states, where ibdev2netdev -v printed them."""
    rows, ev = parsed.data.get("netdevs") or [], parsed.evidence
    if not any(r["state"] for r in rows):
        return
    yield fact("rdma_ports_active", sum(1 for r in rows if r["state"] == "ACTIVE"))
    down = [r for r in rows if r["state"] and r["state"] != "ACTIVE"]
    if down:
        said = ", ".join(f"{r['port']} {r['state']}" for r in down)
        yield fact("rdma_ports_down", said, ev.get(f"netdev:{down[0]['port']}"))


def _family(gid: str) -> str:
    """ipv4 for an IPv4-mapped GID, link-local for fe80::, else ipv6."""
    if MAPPED.match(gid):
        return "ipv4"
    return "link-local" if gid.lower().startswith("fe80") else "ipv6"


def parse_show_gids(text: str, file: str) -> Parsed:
    """Each GID row: port (device:port), index, family, RoCE version."""
    out = Parsed("show-gids", file)
    rows = []
    for no, line in enumerate(clean(text).split("\n"), 1):
        m = SHOW_GIDS_ROW.match(line)
        if m:
            port = f"{m.group(1)}:{m.group(2)}"
            family = "ipv4" if m.group(5) else _family(m.group(4))
            rows.append({"port": port, "index": int(m.group(3)), "family": family, "version": int(m.group(6))})
            out.at(f"gid:{port}:{m.group(3)}", no, line)
            out.at(f"port:{port}", no, line)
    if not rows:
        out.notes.append("no GID rows found")
    out.data = {"gids": rows, "states": {}}
    return out


def parse_devinfo(text: str, file: str) -> Parsed:
    """Each port's state and link layer, and its GID rows where `-v` listed them (an excerpt that starts
    below its port line counts as port 1 of the device `-d` names)."""
    out = Parsed("ibv-devinfo", file)
    rows: list[dict[str, object]] = []
    states: dict[str, str] = {}
    layers: dict[str, str] = {}
    hca, port = "", ""
    for no, line in enumerate(clean(text).split("\n"), 1):
        if m := HCA.match(line):
            hca, port = m.group(1) or m.group(2), ""
        elif m := PORT.match(line):
            port = f"{hca}:{m.group(1)}"
            out.at(f"port:{port}", no, line)
        elif port and (m := STATE.match(line)):
            states[port] = m.group(1)
            out.at(f"state:{port}", no, line)
        elif port and (m := LINK_LAYER.match(line)):
            layers[port] = m.group(1)
        elif m := DEVINFO_GID.match(line):
            port = port or f"{hca or '?'}:1"  # a -v excerpt that starts below its port line
            rows.append(
                {"port": port, "index": int(m.group(1)), "family": _family(m.group(2)), "version": int(m.group(3))}
            )
            out.at(f"gid:{port}:{m.group(1)}", no, line)
    if not states:
        out.notes.append("no port states found")
    out.data = {"gids": rows, "states": states, "layers": layers}
    return out


def _chosen(rows: list[dict[str, object]]) -> dict[str, int | None]:
    """Per port, the index NCCL picks by default: the lowest IPv4 RoCE v2 GID (None: the port has none)."""
    chosen: dict[str, int | None] = {}
    for row in rows:
        port, index = str(row["port"]), int(str(row["index"]))
        best = chosen.setdefault(port, None)
        if row["family"] == "ipv4" and row["version"] == 2 and (best is None or index < best):
            chosen[port] = index
    return chosen


def gid_facts(parsed: Parsed) -> Iterator[Contribution]:
    """The RoCE v2 IPv4 GID index of the ports (one number where they agree), the ports without one, the
    lowest index each port's table starts at; the ports that are not active, and those waiting for a
    subnet manager."""
    ev, rows = parsed.evidence, parsed.data.get("gids") or []
    chosen = _chosen(rows)
    found = {p: i for p, i in chosen.items() if i is not None}
    first = next(iter(found), None)
    if first is not None:
        yield fact("roce_ports", len(found), ev.get(f"port:{first}"))
        yield fact(
            "roce_gid_ports", ", ".join(f"{p} {i}" for p, i in found.items()), ev.get(f"gid:{first}:{found[first]}")
        )
        if len(set(found.values())) == 1:
            yield fact("roce_gid_index", found[first], ev.get(f"gid:{first}:{found[first]}"))
        else:
            yield fact("roce_gid_indices_differ", True, ev.get(f"gid:{first}:{found[first]}"))
        lowest = min(int(str(r["index"])) for r in rows)
        yield fact("roce_gid_table_starts_at", lowest, ev.get(f"port:{first}"))
    with_ipv4 = {str(r["port"]) for r in rows if r["family"] == "ipv4"}
    missing = [p for p, i in chosen.items() if i is None and p not in with_ipv4]
    if missing and found:
        yield fact("roce_ports_without_v2_ipv4", ", ".join(missing), ev.get(f"port:{missing[0]}"))
    yield from _state_facts(parsed)


def _state_facts(parsed: Parsed) -> Iterator[Contribution]:
    states, ev = parsed.data.get("states") or {}, parsed.evidence
    down = [p for p, s in states.items() if s not in ("PORT_ACTIVE", "PORT_INIT")]
    waiting = [p for p, s in states.items() if s == "PORT_INIT"]
    if states:
        yield fact("rdma_ports_active", sum(1 for s in states.values() if s == "PORT_ACTIVE"))
    if down:
        yield fact("rdma_ports_down", ", ".join(f"{p} {states[p]}" for p in down), ev.get(f"state:{down[0]}"))
    if waiting:
        yield fact("rdma_ports_no_sm", ", ".join(waiting), ev.get(f"state:{waiting[0]}"))


YIELDS = (
    "fact:roce_ports",
    "fact:roce_gid_ports",
    "fact:roce_gid_index",
    "fact:roce_gid_indices_differ",
    "fact:roce_gid_table_starts_at",
    "fact:roce_ports_without_v2_ipv4",
    "fact:rdma_ports_active",
    "fact:rdma_ports_down",
    "fact:rdma_ports_no_sm",
)
IBDEV2NETDEV = Reader(
    "ibdev2netdev",
    looks_like_ibdev2netdev,
    parse_ibdev2netdev,
    netdev_facts,
    yields=(
        "fact:ipoib_netdevs_down",
        "fact:rdma_ethernet_netdevs_down",
        "fact:rdma_ports_active",
        "fact:rdma_ports_down",
    ),
)
SHOW_GIDS = Reader("show-gids", looks_like_show_gids, parse_show_gids, gid_facts, yields=YIELDS)
DEVINFO = Reader("ibv-devinfo", looks_like_devinfo, parse_devinfo, gid_facts, yields=YIELDS)
