"""`nvidia-smi -q`, `nvidia-smi --query-gpu=... --format=csv` and `nvidia-smi nvlink --status`."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator

from advisor.inputs.evidence import Parsed, clean
from advisor.inputs.evidence.reader import Contribution, Reader, fact

# the sections of `nvidia-smi -q` that say a GPU is not well, read even from an excerpt without its GPU line:
# clock slowdowns the hardware engaged (NVML's clocks event reasons), a vGPU's licence, rows to remap
HEALTH = re.compile(
    r"^[ \t]{0,16}(Clocks Event Reasons|Clocks Throttle Reasons|vGPU Software Licensed Product|Remapped Rows)"
    r"[ \t]{0,8}$",
    re.M,
)
SLOWDOWNS = ("HW Slowdown", "HW Thermal Slowdown", "HW Power Brake Slowdown", "SW Thermal Slowdown")


def looks_like_query(text: str) -> bool:
    """`nvidia-smi -q`: 'Product Name  : ...' lines under 'GPU 0000:..' sections, or an excerpt of its
    health sections (HEALTH)."""
    if HEALTH.search(text):
        return True
    if "Product Name" not in text:
        return False
    return bool(re.search(r"^[ \t]*Product Name[ \t]*:", text, re.M)) and bool(
        re.search(r"^GPU [0-9A-Fa-f]{4,8}:", text, re.M)
    )


def _health(gpu: dict[str, object], section: str, key: str, value: str) -> str | None:
    """What a line of a health section says of the GPU, stored in `gpu`; the name of what it said, or None."""
    if key in SLOWDOWNS and section.startswith("Clocks") and value == "Active":
        slowdowns = gpu.setdefault("slowdowns", [])
        if isinstance(slowdowns, list):
            slowdowns.append(key)
        return "slowdown"
    if key == "License Status" and value.lower().startswith("unlicensed"):
        gpu["unlicensed"] = value
        return "unlicensed"
    if section == "Remapped Rows" and key == "Pending" and value.lower() == "yes":
        gpu["remap_pending"] = True
        return "remap_pending"
    if section == "Remapped Rows" and key == "Remapping Failure Occurred" and value.lower() == "yes":
        gpu["remap_failed"] = True
        return "remap_failed"
    return None


def looks_like_csv(text: str) -> bool:
    """`--query-gpu ... --format=csv`: a header naming query fields, then rows."""
    if ", " not in text and "," not in text:
        return False
    header = re.search(r"^[ \t]*(index|name|pci\.bus_id|memory\.total)( \[[^]\n]*\])?[ \t]*,", text, re.M)
    return bool(header or re.search(r"^\d+, (NVIDIA |Tesla |Quadro )[^,\n]+(, [^,\n]+)*$", text, re.M))


def looks_like_nvlink(text: str) -> bool:
    """`nvidia-smi nvlink --status`: 'GPU n: NAME (UUID: ...)' then 'Link k: ...' lines."""
    if "Link " not in text:
        return False
    lines = text.split("\n", 4000)[:4000]  # a GPU line and its first link line stand at the top
    return any(
        re.match(r"GPU \d+: ", a) is not None and re.match(r"[ \t]+Link \d+:", b) is not None
        for a, b in zip(lines, lines[1:], strict=False)
    )


def _mib(value: str) -> float | None:
    m = re.search(r"(?<![\d.])([\d.]{1,32})[ \t]{0,8}MiB", value)
    return float(m.group(1)) if m else None


def parse_query(text: str, file: str) -> Parsed:
    """Per GPU: name, UUID, serial, total memory, PCIe link, virtualization mode."""
    out = Parsed("nvidia-smi-q", file)
    gpus: list[dict[str, object]] = []
    section = ""
    current: dict[str, object] | None = None
    # the driver's own count: an excerpt may show fewer GPU sections than there are
    count = re.search(r"^Attached GPUs[ \t]{0,40}:[ \t]{0,8}(\d{1,4})[ \t]{0,8}$", clean(text), re.M)
    attached = int(count.group(1)) if count else None
    for no, raw in enumerate(clean(text).split("\n"), 1):
        line = raw.rstrip()
        m = re.match(r"^GPU ([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.\d)", line)
        if m:
            current = {"bus_id": m.group(1)}
            gpus.append(current)
            out.at(f"gpu:{len(gpus) - 1}", no, line)
            continue
        stripped = line.strip()
        if current is None and HEALTH.match(line):
            current = {"bus_id": "", "excerpt": True}  # a health section pasted without its GPU's line
            gpus.append(current)
        if current is None:
            continue
        if stripped and ":" not in stripped:
            section = stripped
            continue
        key, _, value = stripped.partition(":")
        key, value = key.strip(), value.strip()
        said = _health(current, section, key, value)
        if said:
            out.at(f"{said}:{len(gpus) - 1}", no, line)
        elif key == "Product Name" and section != "vGPU Software Licensed Product":
            current["name"] = value
            out.at(f"name:{len(gpus) - 1}", no, line)
        elif key == "GPU UUID":
            current["uuid"] = value
        elif key == "Serial Number":
            current["serial"] = value
        elif key == "Total" and section.startswith("FB Memory Usage"):
            current["memory_mib"] = _mib(value)
            out.at(f"memory:{len(gpus) - 1}", no, line)
        elif key == "Virtualization Mode":
            current["virtualization"] = value
            out.at(f"virtualization:{len(gpus) - 1}", no, line)
        elif key == "Current" and section == "PCIe Generation":
            current["pcie_gen"] = value
        elif key == "Current" and section == "Link Width":
            current["link_width"] = value
        elif key == "Max" and section == "PCIe Generation":
            current["pcie_gen_max"] = value
    if not gpus:
        out.notes.append("no 'GPU 0000:..' section found")
    out.data = {"gpus": gpus, **({"attached": attached} if attached else {})}
    modes = {str(g.get("virtualization", "")) for g in gpus}
    if modes & {"Pass-Through", "VGPU", "Host VGPU"}:
        out.data["virtualized"] = True
    elif modes == {"None"}:
        out.data["virtualized"] = False
    return out


def _cell(rows: list[list[str]], j: int) -> str:
    """Column j of the first row that has one (a header-less CSV's first row may be the short one)."""
    return next((row[j] for row in rows if len(row) > j), "")


def parse_csv(text: str, file: str) -> Parsed:
    """Rows of `--query-gpu`: index, name, memory and bus id where the query asked for them."""
    out = Parsed("nvidia-smi-csv", file)
    lines = clean(text).split("\n")
    start = next(
        (i for i, line in enumerate(lines) if re.match(r"^[ \t]*(index|name|pci\.bus_id|memory\.total)", line)), None
    )
    if start is None:
        start = next((i for i, line in enumerate(lines) if re.match(r"^\d+, ", line)), None)
        if start is None:
            out.notes.append("no CSV header or GPU rows found")
            return out
        out.notes.append("no header row: columns read as index, name, then bus id or memory by their form")
        rows = [["index", "name"]] + list(csv.reader(io.StringIO("\n".join(lines[start:]))))
        width = max(len(r) for r in rows[1:])
        guess = ["index", "name"] + [
            "pci.bus_id"
            if re.match(r"[ \t]*[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:", _cell(rows[1:], j))
            else ("memory.total" if "MiB" in _cell(rows[1:], j) else f"column{j}")
            for j in range(2, width)
        ]
        rows[0] = guess
        start -= 1
    else:
        rows = list(csv.reader(io.StringIO("\n".join(lines[start:]))))
    header = [h.strip().split(" [")[0] for h in rows[0]]
    gpus = []
    for offset, row in enumerate(rows[1:], start + 2):
        if len(row) != len(header):
            if any(c.strip() for c in row):
                out.notes.append(f"line {offset}: {len(row)} fields where the header has {len(header)}; skipped")
            continue
        item = {h: c.strip() for h, c in zip(header, row, strict=False)}
        gpu: dict[str, object] = {"name": item.get("name")}
        if re.fullmatch(r"[0-9]{1,9}", item.get("index", "")):  # not str.isdigit(): it takes '²'
            gpu["index"] = int(item["index"])
        if "memory.total" in item:
            gpu["memory_mib"] = _mib(item["memory.total"] + (" MiB" if "MiB" not in item["memory.total"] else ""))
        if "pci.bus_id" in item:
            gpu["bus_id"] = item["pci.bus_id"]
        gpus.append(gpu)
        out.at(f"gpu:{len(gpus) - 1}", offset, ",".join(row))
    out.data = {"gpus": gpus}
    return out


def parse_nvlink(text: str, file: str) -> Parsed:
    """Active and inactive NVLinks per GPU, and their speed."""
    out = Parsed("nvidia-smi-nvlink", file)
    gpus: dict[int, dict[str, object]] = {}
    current: int | None = None
    for no, line in enumerate(clean(text).split("\n"), 1):
        m = re.match(r"^GPU (\d+): (.*?)(?: \(UUID: [^)\n]*\))?[ \t]*$", line)
        if m:
            current = int(m.group(1))
            gpus[current] = {"name": m.group(2), "active": 0, "inactive": 0, "speeds": []}
            out.at(f"gpu:{current}", no, line)
            continue
        m = re.match(r"^[ \t]+Link (\d+): (.*)$", line)
        if m and current is not None:
            state = m.group(2).strip()
            speed = re.match(r"([\d.]+) GB/s", state)
            if speed:
                gpus[current]["active"] += 1  # type: ignore[operator]
                gpus[current]["speeds"].append(float(speed.group(1)))  # type: ignore[attr-defined]
            else:
                gpus[current]["inactive"] += 1  # type: ignore[operator]
                out.at(f"inactive:{current}", no, line)
    if not gpus:
        out.notes.append("no 'GPU n:' lines found")
    out.data = {"gpus": gpus}
    return out


def gpu_facts(parsed: Parsed) -> Iterator[Contribution]:
    """The GPU model of each GPU listed, their count, and whether they run in a virtual machine.

    The count comes last in precedence (a listing may be filtered: `nvidia-smi -q -i 0`), which the
    order of READERS gives: the topology matrix is read first."""
    gpus = [g for g in parsed.data.get("gpus", []) if not g.get("excerpt")]
    for i, g in enumerate(gpus):
        if g.get("name"):
            where = parsed.evidence.get(f"name:{i}") or parsed.evidence.get(f"gpu:{i}")
            yield Contribution("hardware.gpu", str(g["name"]), where)
    if gpus:
        yield Contribution("hardware.gpus_per_node", max(len(gpus), int(parsed.data.get("attached") or 0)))
    if "virtualized" in parsed.data:
        yield fact("virtualized", parsed.data["virtualized"], parsed.evidence.get("virtualization:0"))


def query_facts(parsed: Parsed) -> Iterator[Contribution]:
    """The GPUs (gpu_facts), and what the health sections say: slowdowns the hardware engaged, an
    unlicensed vGPU, rows waiting to be remapped or that could not be."""
    yield from gpu_facts(parsed)
    gpus, ev = parsed.data.get("gpus", []), parsed.evidence
    name = [f"GPU{i}" if not g.get("excerpt") else "the GPU" for i, g in enumerate(gpus)]
    slow = [(i, g) for i, g in enumerate(gpus) if g.get("slowdowns")]
    if slow:
        said = "; ".join(f"{name[i]}: {', '.join(g['slowdowns'])}" for i, g in slow)
        yield fact("gpu_hw_slowdown", said, ev.get(f"slowdown:{slow[0][0]}"))
    for key, fact_name in (
        ("unlicensed", "vgpu_unlicensed"),
        ("remap_pending", "gpu_row_remap_pending"),
        ("remap_failed", "gpu_row_remap_failed"),
    ):
        hit = [i for i, g in enumerate(gpus) if g.get(key)]
        if hit:
            yield fact(fact_name, ", ".join(name[i] for i in hit), ev.get(f"{key}:{hit[0]}"))


def nvlink_facts(parsed: Parsed) -> Iterator[Contribution]:
    """How many NVLinks are down, with the first one's line."""
    inactive = sum(int(g.get("inactive", 0)) for g in parsed.data.get("gpus", {}).values())
    first = next((k for k in parsed.evidence if k.startswith("inactive:")), None)
    yield fact("nvlink_inactive_links", inactive, parsed.evidence.get(first) if first else None)


QUERY = Reader(
    "nvidia-smi-q",
    looks_like_query,
    parse_query,
    query_facts,
    yields=(
        "hardware.gpu",
        "hardware.gpus_per_node",
        "fact:virtualized",
        "fact:gpu_hw_slowdown",
        "fact:vgpu_unlicensed",
        "fact:gpu_row_remap_pending",
        "fact:gpu_row_remap_failed",
    ),
    gpu_evidence=True,
)
CSV = Reader(
    "nvidia-smi-csv",
    looks_like_csv,
    parse_csv,
    gpu_facts,
    yields=("hardware.gpu", "hardware.gpus_per_node", "fact:virtualized"),
    gpu_evidence=True,
)
NVLINK = Reader(
    "nvidia-smi-nvlink",
    looks_like_nvlink,
    parse_nvlink,
    nvlink_facts,
    yields=("fact:nvlink_inactive_links",),
    gpu_evidence=True,
)
