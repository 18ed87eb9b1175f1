"""`nvidia-smi topo -m` and `nvidia-smi topo -p2p r|w|p` matrices.

The matrix comes with tabs or spaces, with or without NIC rows (NIC0 or mlx5_0), CPU/NUMA affinity
columns, a "GPU NUMA ID" column, legends, shell prompts and other commands around it. Paths are
ranked by how far traffic travels: X < NV# < PIX < PXB < PHB < NODE < SYS (SOC is the old name of SYS).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from itertools import combinations

from advisor.inputs.evidence import Evidence, PairState, Parsed, clean, pair_key
from advisor.inputs.evidence.reader import PAIRS, Contribution, Reader, fact, pairs

PATH_RANK = {"X": 0, "NV": 1, "PIX": 2, "PXB": 3, "PHB": 4, "NODE": 5, "SYS": 6}
MAX_NVLINKS = 36  # links between two GPUs: NV18 on NVLink 4 and 5 (H100, B200), twice that allowed for what comes
# an NVLink count that no GPU has (NV0, NV999) is a garbled cell, not 999 links
CELL = re.compile(r"^(X|NV(?:[1-9]|[1-2]\d|3[0-6])|PIX|PXB|PHB|NODE|SYS|SOC)$")
P2P_CELL = re.compile(r"^(X|OK|NS|CNS|GNS|TNS|U)$")
DEVICE = re.compile(r"^(GPU\d+|NIC\d+|mlx\d+_\d+|[a-z]+\d*_\d+)$")


def rank(cell: str) -> int:
    """How far a path travels: 0 for the GPU itself, 1 for NVLink, up to 6 for SYS."""
    if cell.startswith("NV"):
        return PATH_RANK["NV"]
    return PATH_RANK.get("SYS" if cell == "SOC" else cell, 9)


def looks_like_topo(text: str) -> bool:
    """A topo -m matrix: a header with GPU0 and rows of path codes (a topo -p2p matrix has X and OK/NS only)."""
    if "GPU0" not in text or "GPU1" not in text:
        return False
    return bool(re.search(r"^[ \t]*GPU0[ \t]+(X|NV\d+|PIX|PXB|PHB|NODE|SYS|SOC)\b", text, re.M)) and bool(
        re.search(r"^[ \t]*GPU\d+[ \t]+(?:\S+[ \t]+)*?(?:NV\d+|PIX|PXB|PHB|NODE|SYS|SOC)\b", text, re.M)
    )


def looks_like_p2p(text: str) -> bool:
    """A topo -p2p matrix: rows of OK / NS / CNS / TNS codes."""
    if "GPU0" not in text:
        return False
    return bool(re.search(r"^[ \t]*GPU0[ \t]+X[ \t]+(OK|NS|CNS|GNS|TNS|U)\b", text, re.M))


def _header(line: str) -> list[str] | None:
    tokens = line.split()
    if "GPU0" not in tokens or tokens[0] not in ("GPU0",) and not line[:1].isspace():
        return None
    devices = [t for t in tokens if DEVICE.match(t)]
    return devices if devices and devices[0] == "GPU0" else None


def parse_topo(text: str, file: str) -> Parsed:
    """The GPUs, NICs, the path between every pair, NVLink counts, CPU and NUMA affinity."""
    out = Parsed("nvidia-smi-topo", file)
    lines = clean(text).split("\n")
    devices: list[str] | None = None
    paths: dict[tuple[int, int], str] = {}
    affinity: dict[int, str] = {}
    numa: dict[int, str] = {}
    nic_names: dict[str, str] = {}
    header_line = 0
    cut: list[str] = []
    read_rows: set[int] = set()
    for no, line in enumerate(lines, 1):
        if devices is None:
            devices = _header(line)
            header_line = no
            if devices is not None:
                out.at("header", no, line)
            continue
        tokens = line.split()
        if not tokens:
            continue
        m = re.match(r"^[ \t]*(NIC\d+)[ \t]*:[ \t]*(\S+)", line)
        if m:
            nic_names[m.group(1)] = m.group(2)
            continue
        row = tokens[0]
        if row in devices and row.startswith("GPU"):
            read_rows.add(int(row[3:]))
        if row not in devices:
            if tokens[0].startswith("Legend"):
                break
            continue
        cells = tokens[1 : 1 + len(devices)]
        if not cells or not all(CELL.match(c) for c in cells):
            out.notes.append(f"line {no}: row {row} is garbled; skipped")
            continue
        if len(cells) < len(devices):  # a paste cut inside the row, or a lower triangle: the cells shown stand
            cut.append(f"{row} (line {no})")
        rest = tokens[1 + len(devices) :]
        if row.startswith("GPU"):
            i = int(row[3:])
            for j, dev in enumerate(devices[: len(cells)]):
                if dev.startswith("GPU") and dev != row:
                    paths[(i, int(dev[3:]))] = "SYS" if cells[j] == "SOC" else cells[j]
            if rest:
                affinity[i] = rest[0]
                out.at(f"affinity:{i}", no, line)
            if len(rest) > 1:
                numa[i] = rest[1]
            out.at(f"row:{i}", no, line)
    if devices is None:
        out.notes.append("no topo -m header (a line with GPU0 GPU1 ...) found")
        return out
    gpus = sorted({int(d[3:]) for d in devices if d.startswith("GPU")})
    if cut:
        out.notes.append(f"rows cut short, their cells read as far as they go: {', '.join(cut)}")
    seen_rows = {i for (i, _j) in paths} | (read_rows if paths else set())
    if not seen_rows:
        out.notes.append(f"line {header_line}: header found but no GPU rows could be read")
        return out
    missing = [g for g in gpus if g not in seen_rows]
    if missing:
        out.notes.append("rows missing for " + ", ".join(f"GPU{g}" for g in missing) + " (truncated?)")
    nvlinks = {pair: int(cell[2:]) for pair, cell in paths.items() if cell.startswith("NV")}
    inferred = infer_paths(paths, gpus)
    if inferred:
        shown = ", ".join(f"GPU{a}-GPU{b} {paths[(a, b)]}" for a, b in sorted(inferred)[:6])
        more = f" and {len(inferred) - 6} more" if len(inferred) > 6 else ""
        out.notes.append(f"paths the paste does not show, from the PCIe tree of the rows it does: {shown}{more}")
    out.data = {
        "gpus": gpus,
        "nics": [d for d in devices if not d.startswith("GPU")],
        "nic_names": nic_names,
        "paths": {f"{a}-{b}": cell for (a, b), cell in sorted(paths.items())},
        "nvlinks": {f"{a}-{b}": n for (a, b), n in sorted(nvlinks.items())},
        "cpu_affinity": affinity,
        "numa_affinity": numa,
        "nvlink_domains": nvlink_domains(gpus, nvlinks),
        "inferred": {f"{a}-{b}": f"{k}" for (a, b), k in sorted(inferred.items())},
    }
    return out


PCIE_LEVELS = ("PIX", "PXB", "PHB", "NODE", "SYS")
INFER_ROUNDS = 3  # a path inferred from inferred ones; each round is O(GPUs^3)


def infer_paths(paths: dict[tuple[int, int], str], gpus: list[int]) -> dict[tuple[int, int], int]:
    """Fill in (in `paths`) the PCIe paths a cut matrix does not show, and return each with the GPU it was
    inferred through. PCIe paths are levels of one tree (a switch, several, a host bridge, a NUMA node, the
    CPUs' link), so where GPU a reaches k on a lower level than k reaches b, a reaches b as k does:
    path(a, b) = path(k, b); where both sit under k's switch (PIX), so are they. Two equal higher levels
    leave it open. NVLink is no level of that tree and is never used to infer."""

    def get(a: int, b: int) -> str | None:
        return paths.get((a, b)) or paths.get((b, a))

    found: dict[tuple[int, int], int] = {}
    for _round in range(INFER_ROUNDS):
        before = len(found)
        for a, b in combinations(gpus, 2):
            if get(a, b) is not None:
                continue
            for k in gpus:
                near, far = get(a, k), get(k, b)
                if near in PCIE_LEVELS and far in PCIE_LEVELS and (near != far or near == PCIE_LEVELS[0]):
                    # two levels apart: the higher; both under one switch (PIX): that switch joins them too
                    paths[(a, b)] = paths[(b, a)] = max(near, far, key=PCIE_LEVELS.index)
                    found[(a, b)] = k
                    break
        if len(found) == before:
            break
    return found


def nvlink_domains(gpus: list[int], nvlinks: dict[tuple[int, int], int]) -> list[list[int]]:
    """GPUs joined by NVLink, directly or through others (connected components)."""
    parent = {g: g for g in gpus}

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in nvlinks:
        if a in parent and b in parent:
            parent[find(a)] = find(b)
    groups: dict[int, list[int]] = {}
    for g in gpus:
        groups.setdefault(find(g), []).append(g)
    return sorted(groups.values())


def nvlink_kind(gpus: list[int], nvlinks: dict[str, int]) -> str:
    """The NVLink setting a topology shows: NVLink between every pair of more than two GPUs is an
    NVSwitch; three or more GPUs joined pairwise by NVLink (a triangle) make 4-way bridges; else 2-way.

    A group of three or more joined pairwise holds a triangle, and a triangle is such a group, so
    looking for one triangle (each link against its ends' neighbours) decides it without trying every
    group of GPUs: polynomial in the GPU count (a 64-GPU matrix takes milliseconds)."""
    n = len(gpus)
    known = set(gpus)
    pairs: set[frozenset[int]] = set()
    for key in nvlinks:
        a, _, b = key.partition("-")
        if (
            re.fullmatch(r"[0-9]{1,9}", a)
            and re.fullmatch(r"[0-9]{1,9}", b)
            and a != b
            and int(a) in known
            and int(b) in known
        ):
            pairs.add(frozenset((int(a), int(b))))
    if not pairs:
        return "none"
    if n > 2 and len(pairs) == n * (n - 1) // 2:
        return "nvswitch"
    near: dict[int, set[int]] = {g: set() for g in gpus}
    for pair in pairs:
        lo, hi = sorted(pair)
        near[lo].add(hi)
        near[hi].add(lo)
    triangle = any(near[x] & near[y] for x, y in (sorted(p) for p in pairs))
    return "bridge-4" if triangle else "bridge-2"


def path(paths: dict[str, str], a: int, b: int) -> str | None:
    """The path between two GPUs, from either direction of the matrix."""
    return paths.get(f"{a}-{b}") or paths.get(f"{b}-{a}")


def worst_path(paths: dict[str, str], group: list[int]) -> str | None:
    """The farthest path between any two GPUs of a group."""
    cells = [path(paths, a, b) for a, b in combinations(group, 2)]
    known = [c for c in cells if c]
    return max(known, key=rank) if known else None


def socket_groups(paths: dict[str, str], gpus: list[int]) -> list[list[int]]:
    """The GPUs joined by any path shorter than SYS (PCIe inside a socket, or NVLink), as groups: one
    group where nothing crosses the CPU interconnect, several where only SYS joins them."""
    groups: list[set[int]] = []
    for g in gpus:
        linked = [grp for grp in groups if any((p := path(paths, g, o)) and p != "SYS" for o in grp)]
        merged = {g}.union(*linked)
        groups = [grp for grp in groups if grp not in linked] + [merged]
    return sorted((sorted(grp) for grp in groups), key=lambda grp: grp[0])


def best_grouping(
    paths: dict[str, str], gpus: list[int], size: int, count: int | None = None
) -> tuple[list[list[int]], str | None]:
    """Groups of `size` GPUs whose worst path is short (as many as fit, or `count`), and the worst path of
    them all.

    Greedy by construction, never a search over combinations (a 48-GPU matrix has 377 million groups
    of 8): for the next group, each free GPU in turn seeds a group that grows by the free GPU whose
    farthest path to the group is shortest (the lowest index on a tie); the seed whose group has the
    shortest worst path wins (the first on a tie). O(n^3) in the GPU count: 64 GPUs take well under a second."""
    if size < 2 or size > len(gpus):
        return [], None
    ranks = {a: {b: rank(path(paths, a, b) or "?") for b in gpus if b != a} for a in gpus}
    pool = list(gpus)
    groups: list[list[int]] = []
    worst_rank = -1
    while len(pool) >= size and (count is None or len(groups) < count):
        best: tuple[int, list[int]] | None = None
        for seed in pool:
            group, far = [seed], 0
            reach = {g: ranks[seed][g] for g in pool if g != seed}  # farthest path from each free GPU to the group
            while len(group) < size:
                nxt = min(reach, key=lambda g: (reach[g], g))
                far = max(far, reach.pop(nxt))
                group.append(nxt)
                for g in reach:
                    reach[g] = max(reach[g], ranks[nxt][g])
            if best is None or far < best[0]:
                best = (far, sorted(group))
                if far <= 1:
                    break
        assert best is not None
        groups.append(best[1])
        worst_rank = max(worst_rank, best[0])
        pool = [g for g in pool if g not in best[1]]
    worst = worst_path(paths, next(g for g in groups if _group_rank(paths, g) == worst_rank)) if groups else None
    return groups, worst


def _group_rank(paths: dict[str, str], group: list[int]) -> int:
    """The rank of a group's farthest path (9 when a pair's path is not in the matrix)."""
    return max(rank(path(paths, a, b) or "?") for a, b in combinations(group, 2))


def parse_p2p(text: str, file: str) -> Parsed:
    """`nvidia-smi topo -p2p r|w|p`: OK or the reason peer-to-peer is not supported, per pair."""
    out = Parsed("nvidia-smi-p2p", file)
    lines = clean(text).split("\n")
    devices: list[str] | None = None
    status: dict[str, str] = {}
    for no, line in enumerate(lines, 1):
        tokens = line.split()
        if devices is None:
            if tokens and tokens[0] == "GPU0" and all(t.startswith("GPU") for t in tokens):
                devices = tokens
            continue
        if not tokens or tokens[0] not in devices:
            if tokens and tokens[0].startswith("Legend"):
                break
            continue
        cells = tokens[1 : 1 + len(devices)]
        if len(cells) < len(devices) or not all(P2P_CELL.match(c) for c in cells):
            out.notes.append(f"line {no}: row {tokens[0]} is incomplete; skipped")
            continue
        i = int(tokens[0][3:])
        for j, dev in enumerate(devices):
            if dev != tokens[0]:
                status[f"{i}-{int(dev[3:])}"] = cells[j]
                if cells[j] != "OK":
                    out.at(f"p2p:{i}-{int(dev[3:])}", no, line)
        out.at(f"row:{i}", no, line)
    if not status:
        out.notes.append("no topo -p2p matrix found")
        return out
    out.data = {"p2p": status, "all_ok": all(v == "OK" for v in status.values())}
    return out


def topo_facts(parsed: Parsed) -> Iterator[Contribution]:
    """The GPU count, the NVLink setting, link counts and weak pairs, and the matrix itself."""
    data, ev = parsed.data, parsed.evidence
    gpus, nv = data["gpus"], data["nvlinks"]
    yield Contribution("hardware.gpus_per_node", len(gpus), ev.get("header") or Evidence(parsed.file, 0, ""))
    yield Contribution("hardware.nvlink", nvlink_kind(gpus, nv), ev.get("row:0") or ev.get("header"), as_fact=True)
    if nv:
        counts = sorted(set(nv.values()))
        yield fact("nvlink_min_links", counts[0], ev.get("row:0"))
        yield fact("nvlink_max_links", counts[-1], ev.get("row:0"))
        weak = sorted(
            {tuple(sorted(map(int, pair.split("-")))) for pair, n in nv.items() if n == counts[0]}
        )  # either direction: a matrix copied in part need not be symmetric
        if counts[0] < counts[-1] and weak:
            first = weak[0][0]
            named = ", ".join(f"GPU{a}-GPU{b}" for a, b in weak)
            yield fact("nvlink_weak_pairs", named, ev.get(f"row:{first}"))
        # a pair on NVLink has peer-to-peer over it, unless a transfer between them says otherwise
        yield pairs(
            PairState(
                pair_key(*map(int, pair.split("-"))), "ok", 2, ev.get(f"row:{pair.split('-')[0]}"), f"NV{n} in topo -m"
            )
            for pair, n in sorted(nv.items())
        )
    sockets = socket_groups(data.get("paths") or {}, [int(g) for g in gpus])
    if len(sockets) > 1 and len({len(grp) for grp in sockets}) == 1:
        # equal groups joined only over SYS: the GPUs of one CPU socket each (uneven ones are not modelled)
        first = sockets[1][0]
        yield fact("gpus_per_socket", len(sockets[0]), ev.get(f"row:{first}") or ev.get("header"))
    yield Contribution("topology", {**data, "evidence": ev})


# what the driver's topo -p2p legend means for a pair (nvidia-smi topo -h): OK, or why P2P is not supported
P2P_STATES = {
    "OK": ("ok", "the driver reports P2P (topo -p2p: OK)"),
    "NS": ("unsupported", "the driver reports no P2P (topo -p2p: NS, not supported)"),
    "GNS": ("unsupported", "the driver reports the GPU does not support P2P (topo -p2p: GNS)"),
    "TNS": ("unsupported", "the driver reports the topology does not support P2P (topo -p2p: TNS)"),
    "CNS": ("blocked", "the driver reports the chipset does not support P2P between them (topo -p2p: CNS)"),
    "DR": ("blocked", "P2P is disabled by a driver registry key (topo -p2p: DR)"),
}


def p2p_facts(parsed: Parsed) -> Iterator[Contribution]:
    """What the driver says of peer-to-peer for each pair the matrix shows."""
    found = []
    for key, cell in sorted(parsed.data["p2p"].items()):
        state = P2P_STATES.get(cell)
        if state is None:
            continue  # U: unknown
        a, b = map(int, key.split("-"))
        where = parsed.evidence.get(f"p2p:{key}") or parsed.evidence.get(f"row:{a}")
        found.append(PairState(pair_key(a, b), state[0], 2, where, state[1]))
    yield pairs(found)
    shown = {int(n) for key in parsed.data["p2p"] for n in key.split("-")}
    if shown:  # the GPUs the matrix shows, where no topology matrix or listing counts them first
        yield Contribution("hardware.gpus_per_node", len(shown), parsed.evidence.get("row:0"), fallback=True)


TOPO = Reader(
    "nvidia-smi-topo",
    looks_like_topo,
    parse_topo,
    topo_facts,
    first_only=True,
    gpu_evidence=True,
    yields=(
        "hardware.gpus_per_node",
        "hardware.nvlink",
        "fact:nvlink_min_links",
        "fact:nvlink_max_links",
        "fact:nvlink_weak_pairs",
        PAIRS,
        "fact:gpus_per_socket",
        "topology",
    ),
)
P2P = Reader(
    "nvidia-smi-p2p", looks_like_p2p, parse_p2p, p2p_facts, yields=(PAIRS, "hardware.gpus_per_node"), gpu_evidence=True
)
