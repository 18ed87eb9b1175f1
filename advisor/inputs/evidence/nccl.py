"""nccl-tests `all_reduce_perf` output, the CUDA sample `p2pBandwidthLatencyTest`, and engine logs
(NCCL INFO/WARN lines, watchdog timeouts, peer-access errors, custom all-reduce, out of memory)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from advisor.inputs.evidence import ALL_PAIRS, Evidence, PairState, Parsed, clean, gap, pair_key
from advisor.inputs.evidence.reader import PAIRS, Contribution, Reader, fact, pairs
from advisor.kb.signatures import matching_lines

ROW = re.compile(
    r"^[ \t]*(\d+)[ \t]+(\d+)[ \t]+(\w+)[ \t]+(\w+)[ \t]+(-?\d+)[ \t]+([\d.]+)[ \t]+([\d.]+)[ \t]+([\d.]+)[ \t]+(\S+)"
)
OLD_ROW = re.compile(
    r"^[ \t]*(\d+)[ \t]+(\d+)[ \t]+(float|half|double|int\w*|bfloat16)"
    r"[ \t]+([\d.]+)[ \t]+([\d.]+)[ \t]+([\d.]+)[ \t]+(\S+)"
)
# A channel line is "NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC/read": the gap to "via" is short,
# and bounded so that no line of many channel starts is scanned from each of them (see `gap`).
CHANNEL = r"NCCL INFO Channel \d{1,6}" + gap("NCCL INFO")
LOG_PATTERNS: dict[str, re.Pattern[str]] = {
    "nccl_p2p": re.compile(CHANNEL + r" via P2P/"),
    "nccl_shm": re.compile(CHANNEL + r" via SHM"),
    "nccl_net": re.compile(CHANNEL + r" via NET/"),
    # a network connection as transport/net.cc prints it: "[send] via NET/IB/0/GDRDMA", without /GDRDMA
    # where that connection does not use GPUDirect RDMA
    "nccl_net_gdr": re.compile(r"\[(?:send|receive)\] via NET/[A-Za-z0-9_]{1,20}/[0-9]{1,3}/GDRDMA"),
    "nccl_net_no_gdr": re.compile(r"\[(?:send|receive)\] via NET/[A-Za-z0-9_]{1,20}/[0-9]{1,3}(?![0-9]|/GDRDMA)"),
    # NCCL 2.0 to 2.3: "host:pid:tid [dev] INFO Ring 00 : 0 -> 1 via P2P/IPC", or without the ring
    "nccl_local_old": re.compile(
        r"\] INFO (?:Ring \d{1,3} : )?\d{1,6}(?:\[\d{1,4}\])? -> \d{1,6}(?:\[\d{1,4}\])? via (?:P2P|SHM)/"
    ),
    "nccl_p2p_disabled": re.compile(r"p2p is disabled|nccl_p2p_disable set|p2p (is )?not supported"),
    "nccl_warn": re.compile(r"NCCL WARN"),
    "nccl_p2p_level": re.compile(r"NCCL_P2P_LEVEL set by environment to (\w+)"),
    "nccl_ib_gid_index": re.compile(r"NCCL_IB_GID_INDEX set by environment to (-?\d{1,5})"),
    "peer_access_unsupported": re.compile(r"peer access is not supported between these two devices"),
    "illegal_access": re.compile(r"an illegal memory access was encountered|cudaerrorillegaladdress"),
    # vLLM's and SGLang's custom all-reduce (custom_all_reduce.py): the driver or the engine's probe said no P2P
    "engine_no_p2p": re.compile(r"custom allreduce is disabled because your platform lacks gpu p2p capability"),
}
# the patterns written in lower case match the lower-cased text: a case-insensitive regex cannot skip
# ahead to its first letter and costs several times more on a long file
ANY_CASE = frozenset(key for key, p in LOG_PATTERNS.items() if p.pattern == p.pattern.lower())


# NCCL_P2P_LEVEL (NCCL's env docs): the farthest path on which NCCL still uses P2P, as the rank of the
# nvidia-smi topo -m path it allows (topo.PATH_RANK); PHB means "the same NUMA node", which topo -m
# calls PHB or NODE. The legacy integers: 0 LOC, 1 PIX, 2 PXB, 3 PHB, 4 SYS, and greater is SYS.
P2P_LEVELS = {"LOC": 0, "NVL": 1, "PIX": 2, "PXB": 3, "PHB": 5, "SYS": 6}
P2P_LEVEL_NUMBERS = ("LOC", "PIX", "PXB", "PHB", "SYS")


def p2p_level(value: str) -> tuple[str, int] | None:
    """An NCCL_P2P_LEVEL value as its name and the farthest topo -m path rank it allows P2P on; None if unreadable."""
    value = value.strip().strip("\"'").upper()
    if re.fullmatch(r"[0-9]{1,9}", value):  # str.isdigit() also takes '²', which int() refuses
        value = P2P_LEVEL_NUMBERS[min(int(value), len(P2P_LEVEL_NUMBERS) - 1)]
    if value in P2P_LEVELS:
        return value, P2P_LEVELS[value]
    return None


ELISION = re.compile(
    r"^[ \t]{0,8}(?:\.{3,}|…|\[\.{3}\]|\[…\])[ \t]{0,8}$"
)  # a line a person put for what they left out
HEADER = re.compile(r"nThread[ \t]{1,8}[0-9]{1,4}[ \t]{1,8}nGpus[ \t]{1,8}[0-9]{1,4}[ \t]{1,8}minBytes")
# the table header of NCCL 1's tests, which printed no nThread line
HEADER_V1 = re.compile(r"bytes[ \t]{1,16}N[ \t]{1,16}type[ \t]{1,16}op[ \t]{1,16}time[ \t]{1,16}algbw[ \t]{1,16}busbw")


def looks_like_allreduce(text: str) -> bool:
    """all_reduce_perf: its 'size count type redop root time algbw busbw' table."""
    if HEADER.search(text) or ("uses device" in text and HEADER_V1.search(text)):
        return True  # its first lines, which a run that fails or hangs before its first row prints too
    if "busbw" not in text and "sum" not in text and "bus bandwidth" not in text:
        return False
    table = re.search(r"algbw[ \t]+busbw", text) and re.search(r"(redop|all_reduce|sum[ \t]+-1)", text)
    rows = len(re.findall(r"^[ \t]*\d+[ \t]+\d+[ \t]+\w+[ \t]+sum[ \t]+-1[ \t]", text, re.M))
    summaries = len(re.findall(r"Avg bus bandwidth[ \t]*:", text))
    return bool(table or rows >= 3 or (summaries and OLD_ROW.search(text)) or summaries >= 2)


def looks_like_p2p_test(text: str) -> bool:
    """The CUDA sample p2pBandwidthLatencyTest."""
    # its banner or its tables; the program's name alone also shows in shell prompts of its build folder
    return any(
        mark in text
        for mark in (
            "P2P (Peer-to-Peer) GPU Bandwidth Latency Test",
            "P2P Connectivity Matrix",
            "Bandwidth Matrix (GB/s)",
        )
    )


def looks_like_log(text: str) -> bool:
    """An engine or NCCL log with one of the lines the audit knows."""
    lowered = text.lower()
    if not any(
        w in lowered
        for w in (
            "nccl",
            "peer access",
            "allreduce",
            "all reduce",
            "out of memory",
            "outofmemory",
            "kv cache",
            "p2p",
            "via net/",
        )
    ):
        return False
    return any(p.search(lowered if key in ANY_CASE else text) for key, p in LOG_PATTERNS.items())


def parse_allreduce(text: str, file: str) -> Parsed:
    """Ranks, GPUs, hosts, busbw per size, the peak busbw and the reported average."""
    out = Parsed("nccl-tests", file)
    rows: list[dict[str, float]] = []
    ranks: list[dict[str, object]] = []
    avg = None
    peak_at: tuple[int, str] | None = None
    peak_bw = 0.0  # the largest busbw so far: the peak's line is found in one pass
    lines = clean(text).split("\n")
    for no, line in enumerate(lines, 1):
        rank = _rank(line)
        if rank is not None:
            ranks.append(rank)
            out.at(f"rank:{rank['rank']}", no, line)
            continue
        m = ROW.match(line)
        old = None if m else OLD_ROW.match(line)
        if (m or old) and not line.lstrip().startswith("#"):
            try:
                if m:
                    rows.append(
                        {
                            "bytes": float(m.group(1)),
                            "time_us": float(m.group(6)),
                            "algbw": float(m.group(7)),
                            "busbw": float(m.group(8)),
                        }
                    )
                else:
                    assert old is not None
                    rows.append(
                        {
                            "bytes": float(old.group(1)),
                            "time_us": float(old.group(4)),
                            "algbw": float(old.group(5)),
                            "busbw": float(old.group(6)),
                        }
                    )
            except ValueError:
                continue
            if peak_at is None or rows[-1]["busbw"] > peak_bw:
                peak_at, peak_bw = (no, line), rows[-1]["busbw"]
            continue
        m = re.search(r"Avg bus bandwidth[ \t]*:[ \t]*([\d.]+)", line)
        if m:
            avg = float(m.group(1))
            out.at("avg", no, line)
            out.at("summary", no, line)
        m = re.search(r"nGpus[ \t]+(\d+)", line)
        if m:
            out.data["ngpus_per_thread"] = int(m.group(1))
    separate = _summaries_per_run(lines)
    if not rows:
        if not ranks:
            out.notes.append("no all_reduce_perf result rows found")
            # a header alone (nThread ... nGpus) says nothing the audit can use; one launch's several summaries do
            out.data = {"summaries_per_run": separate} if separate > 1 else {}
            return out
        elided = any(ELISION.match(line) for line in lines)
        out.notes.append(
            "the paste leaves out what followed the devices ('...'): its result rows are not shown"
            if elided
            else "the run printed its devices but no result row: it failed, hung or was cut before the first size"
        )
        out.data.update(
            _ranks_data(ranks, out.data.get("ngpus_per_thread")), stopped=not elided, summaries_per_run=separate
        )
        return out
    peak = max(rows, key=lambda r: r["busbw"])
    if peak_at is not None:
        out.evidence["peak"] = Evidence(file, peak_at[0], peak_at[1].strip())
    out.data.update(
        {
            "rows": rows,
            "peak_busbw": peak["busbw"],
            "peak_bytes": peak["bytes"],
            "avg_busbw": avg,
            "summaries_per_run": separate,
            **_ranks_data(ranks, out.data.get("ngpus_per_thread")),
        }
    )
    return out


RANK = re.compile(
    r"Rank[ \t]{1,16}(\d{1,7})[ \t]{1,16}(?:Group[ \t]{1,16}\d{1,7}[ \t]{1,16})?Pid[ \t]{1,16}\d{1,10}"
    r"[ \t]{1,16}on[ \t]{1,16}(?:(\S{1,253})[ \t]{1,16})?"  # a host name a paste blanked out leaves none
    r"device[ \t]{1,16}(\d{1,7})[ \t]{1,16}\[([^\]\n]{0,64})\][ \t]{1,16}([^\n]{0,200})"
)
# the tests of NCCL 1 (one process, no host): "#   Rank %2d uses device %2d [0x%02x] %s"
RANK_V1 = re.compile(
    r"Rank[ \t]{1,16}(\d{1,7})[ \t]{1,16}uses device[ \t]{1,16}(\d{1,7})[ \t]{1,16}"
    r"\[(0x[0-9a-fA-F]{1,8})\][ \t]{1,16}([^\n]{1,200})"
)


def _rank(line: str) -> dict[str, object] | None:
    """One 'Using devices' line as rank, host, device, bus and GPU name; None where the line is not one."""
    if m := RANK.search(line):
        return {"rank": int(m.group(1)), "host": m.group(2) or "", "device": int(m.group(3)), "bus": m.group(4),
                "name": m.group(5).strip()}  # fmt: skip
    if m := RANK_V1.search(line):
        return {"rank": int(m.group(1)), "host": "local", "device": int(m.group(2)), "bus": m.group(3),
                "name": m.group(4).strip()}  # fmt: skip
    return None


SUMMARY = re.compile(r"^#?[ \t]{0,4}Avg bus bandwidth[ \t]{0,8}:")
COMMAND = re.compile(r"^[ \t]{0,4}(?:[^ \t\n]{0,64}[$#][ \t]{1,4})?(?:mpirun|mpiexec|srun|[.]/[a-z_]{2,40}_perf)\b")


def _summaries_per_run(lines: list[str]) -> int:
    """The most 'Avg bus bandwidth' summaries one launch printed (a launch runs from its command line to the
    next): an MPI build prints one per run, a build without MPI one per process it was started as."""
    most = count = 0
    for line in lines:
        if COMMAND.match(line):
            count = 0
        elif SUMMARY.match(line):
            count += 1
            most = max(most, count)
    return most


def _ranks_data(ranks: list[dict[str, object]], per_thread: object) -> dict[str, object]:
    """The ranks of a run's 'Using devices' lines: their hosts, how many, the GPU models."""
    return {
        "ranks": ranks,
        "hosts": sorted({str(r["host"]) for r in ranks}),
        "n_ranks": (max(int(str(r["rank"])) for r in ranks) + 1) if ranks else per_thread,
        "gpu_names": sorted({str(r["name"]) for r in ranks}),
    }


def _matrix(lines: list[str], title: str) -> tuple[dict[tuple[int, int], float], int | None]:
    """The off-diagonal cells of a p2pBandwidthLatencyTest matrix by (row, column), and the line number of
    its title (None: the matrix is not there)."""
    start = next((i for i, line in enumerate(lines) if line.strip().startswith(title)), None)
    if start is None:
        return {}, None
    cells: dict[tuple[int, int], float] = {}
    for line in lines[start + 2 :]:
        tokens = line.split()
        if not tokens or not re.fullmatch(r"[0-9]{1,6}", tokens[0]):  # str.isdigit() also takes '²'
            break
        row = int(tokens[0])
        for col, value in enumerate(tokens[1:]):
            # one number per cell: a damaged capture may run two together ("20.10.22")
            if col != row and re.fullmatch(r"[0-9]{1,9}(?:\.[0-9]{1,9})?", value):
                cells[(row, col)] = float(value)
    return cells, start + 1


def _connectivity(lines: list[str], allowed: list[tuple[int, int]], denied: list[tuple[int, int]], out: Parsed) -> None:
    """The 'P2P Connectivity Matrix' (1: the pair can access each other), for outputs without the
    CAN/CANNOT lines (excerpts often start at the matrices)."""
    start = next((i for i, line in enumerate(lines) if line.strip() == "P2P Connectivity Matrix"), None)
    if start is None:
        return
    for no, line in enumerate(lines[start + 2 :], start + 3):
        cells = line.split()
        if len(cells) < 2 or not all(re.fullmatch(r"[0-9]{1,6}", c) for c in cells):
            break
        a = int(cells[0])
        for b, flag in enumerate(cells[1:]):
            if a != b:
                (allowed if flag == "1" else denied).append((a, b))
                out.at(f"{'allowed' if flag == '1' else 'denied'}:{a}-{b}", no, line)


ENABLED = "Unidirectional P2P=Enabled Bandwidth"
DISABLED = "Unidirectional P2P=Disabled Bandwidth Matrix"


def parse_p2p_test(text: str, file: str) -> Parsed:
    """Which device pairs can access each other, and whether P2P writes beat copies through the host,
    pair by pair; a run that stopped before its first bandwidth figure is said so."""
    out = Parsed("p2p-bandwidth-test", file)
    denied: list[tuple[int, int]] = []
    allowed: list[tuple[int, int]] = []
    lines = clean(text).split("\n")
    for no, line in enumerate(lines, 1):
        m = re.search(r"Device=(\d+) (CAN|CANNOT) Access Peer Device=(\d+)", line)
        if m:
            pair = (int(m.group(1)), int(m.group(3)))
            (allowed if m.group(2) == "CAN" else denied).append(pair)
            out.at(f"{'allowed' if m.group(2) == 'CAN' else 'denied'}:{pair[0]}-{pair[1]}", no, line)
    if not allowed and not denied:
        _connectivity(lines, allowed, denied, out)
    disabled, _disabled_at = _matrix(lines, DISABLED)
    enabled, enabled_at = _matrix(lines, ENABLED)
    data: dict[str, object] = {
        "denied": [f"{a}-{b}" for a, b in denied],
        "allowed": [f"{a}-{b}" for a, b in allowed],
        "measured": {f"{a}-{b}": [enabled[(a, b)], disabled[(a, b)]] for (a, b) in enabled if (a, b) in disabled},
        "disabled_gbs": sum(disabled.values()) / len(disabled) if disabled else None,
        "enabled_gbs": sum(enabled.values()) / len(enabled) if enabled else None,
    }
    if enabled_at:
        out.at("enabled", enabled_at, lines[enabled_at - 1])
    if (allowed or denied) and not enabled:
        # the capability check ran, then no P2P bandwidth figure: the run stopped (or the paste was cut)
        last = max((i for i, line in enumerate(lines, 1) if line.strip()), default=1)
        data["stopped"] = True
        out.at("stopped", last, lines[last - 1])
    if not (allowed or denied or data["measured"]):
        out.notes.append("neither 'CAN/CANNOT Access Peer' lines nor both bandwidth matrices found")
    out.data = data if any(v not in (None, [], {}) for v in data.values()) else {}  # nothing read: not this output
    return out


# the GPUs of a channel line: rank[cudaDev] -> rank[cudaDev] ... via TRANSPORT (P2P/IPC, SHM/direct/direct)
TRANSPORT = re.compile(
    r"\d{1,6}\[(\d{1,4})\] -> \d{1,6}\[(\d{1,4})\](?: \[(?:send|receive)\])? via (P2P|SHM)/([A-Za-z0-9/_-]{0,40})"
)


def parse_log(text: str, file: str) -> Parsed:
    """Which known events the log shows (how many lines each), each with its first line, and the transport
    NCCL chose between each pair of GPUs of the host (P2P or SHM) with the first line that shows it."""
    out = Parsed("engine-log", file)
    text = clean(text)
    lowered = text.lower()  # the same lines: lower() never adds or removes a line end
    lines = text.split("\n")
    seen: dict[str, int] = {}
    for key, pattern in LOG_PATTERNS.items():
        for no, _line, _column in matching_lines(pattern, lowered if key in ANY_CASE else text):
            seen[key] = seen.get(key, 0) + 1
            out.at(key, no, lines[no - 1])
    transports: dict[str, str] = {}
    if seen.get("nccl_p2p") or seen.get("nccl_shm"):
        for no, line in enumerate(lines, 1):
            m = TRANSPORT.search(line) if " via " in line else None
            if m and m.group(1) != m.group(2):
                key = pair_key(int(m.group(1)), int(m.group(2)))
                if key not in transports:
                    transports[key] = f"{m.group(3)}/{m.group(4)}".rstrip("/")
                    out.at(f"transport:{key}", no, line)
    out.data = {"events": seen, "transports": transports}
    return out


def allreduce_facts(parsed: Parsed) -> Iterator[Contribution]:
    """The GPU model of the ranks, the peak bus bandwidth, and how many ranks and hosts ran."""
    data, ev = parsed.data, parsed.evidence
    if data.get("summaries_per_run", 0) > 1:
        yield fact("nccl_tests_summaries_per_run", data["summaries_per_run"], ev.get("summary"))
    if "n_ranks" not in data and "peak_busbw" not in data:
        return  # a summary alone: how many ranks ran it does not say
    for name in data.get("gpu_names", []):
        yield Contribution("hardware.gpu", name, ev.get("rank:0"))
    if data.get("stopped"):
        yield fact("nccl_tests_no_rows", True, ev.get("rank:0"))
    elif "peak_busbw" in data:  # else the paste left the rows out
        yield fact("busbw_measured_gbs", data["peak_busbw"], ev.get("peak"))
    yield fact("busbw_ranks", int(data.get("n_ranks") or 0), ev.get("rank:0"))
    yield fact("busbw_hosts", len(data.get("hosts") or []) or 1, ev.get("rank:0"))


def p2p_test_facts(parsed: Parsed) -> Iterator[Contribution]:
    """What the CUDA sample found pair by pair: the driver's claim (CAN / CANNOT Access Peer), and where it
    measured both, whether P2P copies beat copies through the host; whether it stopped before measuring."""
    data, ev = parsed.data, parsed.evidence
    found = [
        PairState(pair_key(*map(int, k.split("-"))), "capable", 2, ev.get(f"allowed:{k}"), "CAN Access Peer")
        for k in data.get("allowed", [])
    ]
    found += [
        PairState(pair_key(*map(int, k.split("-"))), "unsupported", 2, ev.get(f"denied:{k}"), "CANNOT Access Peer")
        for k in data.get("denied", [])
    ]
    for key, (on, off) in sorted((data.get("measured") or {}).items()):
        a, b = map(int, key.split("-"))
        faster = on > off * 1.2
        why = f"P2P copies {on:g} GB/s against {off:g} GB/s with P2P disabled (p2pBandwidthLatencyTest, {a}->{b})"
        found.append(PairState(pair_key(a, b), "ok" if faster else "blocked", 3, ev.get("enabled"), why))
    yield pairs(found)
    if data.get("stopped"):
        yield fact("p2p_test_stopped", True, ev.get("stopped"))


def log_facts(parsed: Parsed) -> Iterator[Contribution]:
    """The NCCL_P2P_LEVEL the log shows, and what its peer-access and NCCL channel lines say of P2P (the
    failures a log shows are the message catalogue's: advisor.inputs.evidence.failures)."""
    ev = parsed.evidence
    level_line = ev.get("nccl_p2p_level")
    found = LOG_PATTERNS["nccl_p2p_level"].search(level_line.text) if level_line else None
    level = p2p_level(found.group(1)) if found else None
    if level is not None:
        yield fact("nccl_p2p_level", level[0], level_line)
        yield fact("nccl_p2p_level_rank", level[1], level_line)
    gid_line = ev.get("nccl_ib_gid_index")
    gid = LOG_PATTERNS["nccl_ib_gid_index"].search(gid_line.text) if gid_line else None
    if gid:
        yield fact("nccl_ib_gid_index", int(gid.group(1)), gid_line)
    events = parsed.data.get("events", {})
    local = next((k for k in ("nccl_p2p", "nccl_shm", "nccl_local_old") if events.get(k)), None)
    if local:  # a transport NCCL uses only between ranks it takes for one host
        yield fact("nccl_intra_host_transport", True, ev.get(local))
    if events.get("nccl_net_gdr") and events.get("nccl_net_no_gdr"):
        yield fact("nccl_net_gdr_mixed", True, ev.get("nccl_net_no_gdr"))
    yield pairs(_transport_states(parsed))


def _transport_states(parsed: Parsed) -> list[PairState]:
    """What the log says of P2P between pairs: NCCL's transport for each, peer access refused, or an
    illegal memory access after NCCL set up P2P (the P2P path corrupts what it moves)."""
    events, ev = parsed.data.get("events", {}), parsed.evidence
    found = []
    for key, transport in sorted((parsed.data.get("transports") or {}).items()):
        state, strength = ("ok", 3) if transport.startswith("P2P") else ("shm", 2)
        found.append(PairState(key, state, strength, ev.get(f"transport:{key}"), f"NCCL connects them via {transport}"))
    if events.get("peer_access_unsupported"):
        why = "CUDA refuses peer access between the devices"
        found.append(PairState(ALL_PAIRS, "unsupported", 3, ev.get("peer_access_unsupported"), why))
    if events.get("engine_no_p2p"):
        why = "the engine found no GPU peer-to-peer (its custom all-reduce is off)"
        found.append(PairState(ALL_PAIRS, "refused", 2, ev.get("engine_no_p2p"), why))
    if events.get("illegal_access") and events.get("nccl_p2p"):
        why = "an illegal memory access after NCCL set up P2P between the GPUs"
        found.append(PairState(ALL_PAIRS, "broken", 3, ev.get("illegal_access"), why))
    return found


ALLREDUCE = Reader(
    "nccl-tests",
    looks_like_allreduce,
    parse_allreduce,
    allreduce_facts,
    yields=(
        "hardware.gpu",
        "fact:busbw_measured_gbs",
        "fact:busbw_ranks",
        "fact:busbw_hosts",
        "fact:nccl_tests_summaries_per_run",
        "fact:nccl_tests_no_rows",
    ),
    gpu_evidence=True,
)
P2P_TEST = Reader(
    "p2p-bandwidth-test",
    looks_like_p2p_test,
    parse_p2p_test,
    p2p_test_facts,
    yields=(PAIRS, "fact:p2p_test_stopped"),
    gpu_evidence=True,
)
LOG = Reader(
    "engine-log",
    looks_like_log,
    parse_log,
    log_facts,
    yields=(
        "fact:nccl_p2p_level",
        "fact:nccl_p2p_level_rank",
        "fact:nccl_ib_gid_index",
        "fact:nccl_intra_host_transport",
        "fact:nccl_net_gdr_mixed",
        PAIRS,
    ),
)
