"""`setpci` reads of the PCIe ACS control register (`setpci -s BDF ECAP_ACS+0x6.w`), as NCCL's
troubleshooting guide has them run: the command line, then the register's value in hex, one per device
read (a loop over the bridges prints one value each).

The register's bits (PCIe base specification, ACS Control; lspci names them in its ACSCtl line):
0 SrcValid, 1 TransBlk, 2 ReqRedir, 3 CmpltRedir, 4 UpstreamFwd, 5 EgressCtrl, 6 DirectTrans. A read at a
raw offset (`f2a.w`) names no register, so it is not taken as ACS; the note says how to read it by name.
The facts are those of the lspci reader (kernel.lspci_facts): the same register, printed another way.
"""

from __future__ import annotations

import re

from advisor.inputs.evidence import Parsed, clean
from advisor.inputs.evidence.kernel import lspci_facts
from advisor.inputs.evidence.reader import PAIRS, Reader

ACS_BITS = ("SrcValid", "TransBlk", "ReqRedir", "CmpltRedir", "UpstreamFwd", "EgressCtrl", "DirectTrans")
# a read of the ACS control register by its capability's name (ECAP_ACS, or its id 0x0d), not a write (=)
READ = re.compile(r"setpci\b[^\n=]{0,200}?\b(?:ECAP_ACS|ECAP0?d)\+(?:0x)?0?6\.[wW]\b(?![ \t]{0,4}=)", re.I)
RAW = re.compile(r"setpci\b[^\n=]{0,200}?[ \t]([0-9a-fA-F]{1,3})\.[wWlLbB](?:[ \t;]|$)")
DEVICE = re.compile(r"-s[ \t]{1,4}([0-9a-fA-F]{2,4}:[0-9a-fA-F]{2}(?::[0-9a-fA-F]{2})?\.[0-7])")
VALUE = re.compile(
    r"^[ \t]{0,8}(?:[0-9a-fA-F:.]{7,16}[ \t]{0,4}(?:@[0-9a-fA-F]{1,4})?[ \t]{0,4}=[ \t]{0,4})?([0-9a-fA-F]{4})[ \t]*$"
)


def looks_like_setpci(text: str) -> bool:
    """A setpci read (of a register named or not) followed by a value."""
    return "setpci" in text and any(READ.search(line) or RAW.search(line) for line in text.split("\n"))


def _flags(value: int) -> list[str]:
    return [name for bit, name in enumerate(ACS_BITS) if value >> bit & 1]


def parse_setpci(text: str, file: str) -> Parsed:
    """Each value read after an ACS-control read command, as the device's ACS flags."""
    out = Parsed("setpci", file)
    devices: list[dict[str, object]] = []
    reading: str | None = None  # the device (or '') the last ACS read command named; None: not reading ACS
    for no, line in enumerate(clean(text).split("\n"), 1):
        if "setpci" in line:
            named = READ.search(line)
            reading = (m.group(1) if (m := DEVICE.search(line)) else "") if named else None
            if not named and (raw := RAW.search(line)):
                out.notes.append(
                    f"setpci reads offset {raw.group(1)}, which names no register: read ACS by name,"
                    " setpci -s BDF ECAP_ACS+0x6.w"
                )
            continue
        m = VALUE.match(line)
        if reading is None or not m:
            continue
        flags = _flags(int(m.group(1), 16))
        address = reading or f"(line {no})"
        devices.append({"address": address, "acs_enabled": bool(flags), "acs_flags": flags})
        if flags:
            out.at(f"acs:{address}", no, line)
    if devices:
        out.data = {
            "devices": devices,
            "acs_enabled_bridges": [d["address"] for d in devices if d["acs_enabled"]],
            "acs_checked": True,
        }
    elif not out.notes:
        out.notes.append("no ACS control register value found")
    return out


SETPCI = Reader(
    "setpci", looks_like_setpci, parse_setpci, lspci_facts, yields=("fact:acs", "fact:acs_redirect_bridges", PAIRS)
)
