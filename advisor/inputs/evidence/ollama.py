"""ollama's server log: the GPUs it found, from its `msg="inference compute"` lines (one per GPU, printed by
the server's GPU discovery at start: id, library, compute capability, driver, name, total memory).

Guarantees: a GPU is counted once per id; a line without a name or an id is passed over; nothing else of
the log is read here (failures it prints are the message catalogue's, advisor.inputs.evidence.failures).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from advisor.inputs.evidence import Parsed, clean
from advisor.inputs.evidence.reader import Contribution, Reader

COMPUTE = 'msg="inference compute"'
FIELD = re.compile(r'([a-z_]{2,20})=(?:"([^"\n]{0,200})"|([^ \t\n"]{1,200}))')


def looks_like_ollama(text: str) -> bool:
    """An ollama server log with its GPU discovery lines."""
    return COMPUTE in text


def parse_ollama(text: str, file: str) -> Parsed:
    """Each GPU of the discovery lines: id -> its fields (library, compute, driver, name, total)."""
    out = Parsed("ollama-log", file)
    gpus: dict[str, dict[str, str]] = {}
    for no, line in enumerate(clean(text).split("\n"), 1):
        if COMPUTE not in line:
            continue
        fields = {m.group(1): m.group(2) if m.group(2) is not None else m.group(3) for m in FIELD.finditer(line)}
        if fields.get("id") and fields.get("name") and fields["id"] not in gpus:
            gpus[fields["id"]] = fields
            out.at(f"gpu:{len(gpus) - 1}", no, line)
    if not gpus:
        out.notes.append("inference compute lines without a GPU id and name")
        return out
    out.data = {"gpus": list(gpus.values())}
    return out


def ollama_facts(parsed: Parsed) -> Iterator[Contribution]:
    """The GPU model of the first GPU found and how many GPUs the server found."""
    gpus = parsed.data.get("gpus") or []
    if gpus:
        yield Contribution("hardware.gpu", gpus[0]["name"], parsed.evidence.get("gpu:0"))
        yield Contribution("hardware.gpus_per_node", len(gpus), parsed.evidence.get("gpu:0"))


OLLAMA = Reader(
    "ollama-log",
    looks_like_ollama,
    parse_ollama,
    ollama_facts,
    first_only=True,
    yields=("hardware.gpu", "hardware.gpus_per_node"),
    gpu_evidence=True,
)
