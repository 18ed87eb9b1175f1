"""`nvidia-smi` without options: the table of GPUs, one row per GPU with its index, product name and
persistence mode, then its bus id (the driver's own listing, as pasted in most support threads).

Guarantees: only rows of the GPU table are read (`| <index>  <name>  On|Off | <bus id> ...`); the process
table below it, whose rows also start with a GPU index, is not.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from advisor.inputs.evidence import Parsed, clean
from advisor.inputs.evidence.reader import Contribution, Reader
from advisor.inputs.evidence.smi import gpu_facts
from advisor.inputs.evidence.toolkit import driver_cuda, driver_cuda_facts

HEADER = re.compile(r"NVIDIA-SMI [0-9][0-9.]{1,20}[ \t]{1,40}Driver Version")
ROW = re.compile(
    r"^\|[ \t]{1,6}(\d{1,3})[ \t]{1,6}(\S[^|\n]{1,60}?)[ \t]{1,12}(?:On|Off)[ \t]{0,4}\|[ \t]{0,6}"
    r"([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.\d)"
)


def looks_like_table(text: str) -> bool:
    """nvidia-smi's default table: its header line and at least one GPU row."""
    return bool(HEADER.search(text)) and any(ROW.match(line) for line in text.split("\n"))


def parse_table(text: str, file: str) -> Parsed:
    """Each GPU row: index, name, bus id."""
    out = Parsed("nvidia-smi-table", file)
    gpus = _listed(text, ROW, out)
    for g in gpus:
        g["name"] = g["name"].removesuffix("...").strip()  # nvidia-smi cuts a long name with "..."
    if not gpus:
        out.notes.append("no GPU row found")
        return out
    out.data = {"gpus": gpus, "cuda": driver_cuda(text, out)}
    return out


def table_facts(parsed: Parsed) -> Iterator[Contribution]:
    """The GPUs listed (smi.gpu_facts), and the banner's CUDA Version: the newest CUDA the driver supports."""
    yield from gpu_facts(parsed)
    yield from driver_cuda_facts(parsed)


TABLE = Reader(
    "nvidia-smi-table",
    looks_like_table,
    parse_table,
    table_facts,  # the model of the first GPU listed and how many, as every GPU listing gives them
    first_only=True,
    yields=(
        "hardware.gpu",
        "hardware.gpus_per_node",
        "fact:driver_cuda_version",
        "fact:driver_cuda_number",
        "fact:driver_cuda_major",
    ),
    gpu_evidence=True,
)


# `nvidia-smi -L`: "GPU 0: NVIDIA H100 PCIe (UUID: GPU-...)"; a MIG instance beneath its GPU lists as
# "  MIG 3g.40gb     Device  0: (UUID: MIG-...)" and is not a GPU of its own.
LISTED = re.compile(r"^[ \t]{0,4}GPU[ \t](\d{1,3}):[ \t](\S[^(\n]{1,80}?)[ \t]\(UUID:[ \t]GPU-[0-9a-fA-F-]{8,60}\)")


def looks_like_listing(text: str) -> bool:
    """`nvidia-smi -L`: at least one line of a GPU with its UUID."""
    return "(UUID: GPU-" in text and any(LISTED.match(line) for line in text.split("\n"))


def parse_listing(text: str, file: str) -> Parsed:
    """Each GPU listed: index and name (the bus id is not in this listing)."""
    out = Parsed("nvidia-smi-list", file)
    out.data = {"gpus": _listed(text, LISTED, out)}
    return out


def _listed(text: str, row: re.Pattern[str], out: Parsed) -> list[dict[str, str]]:
    """The GPUs a listing's rows name, once per index (`row`: index, name and, in the table, bus id),
    each with its line."""
    gpus: list[dict[str, str]] = []
    for no, line in enumerate(clean(text).split("\n"), 1):
        m = row.match(line)
        if m and all(g["index"] != m.group(1) for g in gpus):
            gpus.append(
                {"index": m.group(1), "name": m.group(2).strip(), **({"bus_id": m.group(3)} if m.re.groups > 2 else {})}
            )
            out.at(f"gpu:{len(gpus) - 1}", no, line)
    return gpus


LISTING = Reader(
    "nvidia-smi-list",
    looks_like_listing,
    parse_listing,
    gpu_facts,  # the model of the first GPU listed and how many
    first_only=True,
    yields=("hardware.gpu", "hardware.gpus_per_node"),
    gpu_evidence=True,
)
