"""NVIDIA's nvbandwidth: the GPUs it saw, the device-to-device copy matrices, and the tests it waived.

nvbandwidth runs a device-to-device test (device_to_device_*, all_to_one_*, one_to_all_*) only where at
least one pair of GPUs can access each other (Testcase::filterHasAccessiblePeerPairs, which asks
cuDeviceCanAccessPeer of every pair); otherwise it waives the test: `Waiving <test>.` (up to v0.5) or
`Waived:` (later, after the test's name on the command line). A waived peer test on a host of two or
more GPUs therefore says that no pair has peer access. In a matrix "GPU(row) <- GPU(column)" a figure
between two GPUs is a copy that was made; N/A is a pair the test could not copy between.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from advisor.inputs.evidence import ALL_PAIRS, PairState, Parsed, clean, pair_key
from advisor.inputs.evidence.reader import PAIRS, Contribution, Reader, pairs

PEER_TESTS = re.compile(r"\b((?:device_to_device|all_to_one|one_to_all)_[a-z_]{2,60})\b")
DEVICE = re.compile(r"^Device ([0-9]{1,3}): ([^\n(]{2,120}?)(?: \([0-9a-fA-F:]{4,20}\))?[ \t]*$")
WAIVING = re.compile(r"^Waiving ([a-z_]{3,80})\.")
MATRIX = re.compile(r"^memcpy (?:CE|SM) GPU\(row\) (?:<-|->|<->) GPU\(column\) bandwidth \(GB/s\)")
CELL = re.compile(r"[0-9]{1,6}(?:\.[0-9]{1,4})?|N/A")


def looks_like_nvbandwidth(text: str) -> bool:
    """nvbandwidth's banner or one of its matrices."""
    return "nvbandwidth Version:" in text or any(MATRIX.match(x) for x in text.split("\n")[:2000])


def _matrix(lines: list[str], start: int, out: Parsed, copied: dict[str, float], missing: list[str]) -> None:
    """The rows under the matrix header at lines[start] (0-based): a figure or N/A for each pair."""
    for offset, line in enumerate(lines[start + 2 : start + 2 + 256], start + 3):
        cells = line.split()
        if len(cells) < 2 or not cells[0].isdigit() or not all(CELL.fullmatch(c) for c in cells[1:]):
            return
        a = int(cells[0])
        for b, cell in enumerate(cells[1:]):
            if a == b:
                continue
            key = pair_key(a, b)
            if cell == "N/A":
                if key not in copied and key not in missing:
                    missing.append(key)
                    out.at(f"missing:{key}", offset, line)
            elif float(cell) > 0 and key not in copied:
                copied[key] = float(cell)
                out.at(f"copied:{key}", offset, line)


def parse_nvbandwidth(text: str, file: str) -> Parsed:
    """The devices, the peer tests waived, the pairs a device-to-device matrix copied between or not."""
    out = Parsed("nvbandwidth", file)
    lines = clean(text).split("\n")
    devices: dict[int, str] = {}
    waived: list[str] = []
    copied: dict[str, float] = {}
    missing: list[str] = []
    asked = PEER_TESTS.findall(" ".join(x for x in lines[:20] if "nvbandwidth" in x and "-t" in x))
    for no, line in enumerate(lines, 1):
        device = DEVICE.match(line)
        if device:
            devices[int(device.group(1))] = device.group(2).strip()
            out.at(f"device:{device.group(1)}", no, line)
        waiving = WAIVING.match(line)
        named = waiving.group(1) if waiving else (asked[0] if asked and line.startswith("Waived") else None)
        if named and PEER_TESTS.fullmatch(named):
            waived.append(named)
            out.at(f"waived:{len(waived) - 1}", no, line)
        if MATRIX.match(line):
            _matrix(lines, no - 1, out, copied, missing)
    data: dict[str, object] = {"devices": devices, "waived": waived, "copied": copied, "missing": missing}
    if not (devices or waived or copied or missing):
        out.notes.append("no devices, waived tests or device-to-device matrix found")
        data = {}
    out.data = data
    return out


def nvbandwidth_facts(parsed: Parsed) -> Iterator[Contribution]:
    """The GPU model, and P2P pair by pair: copied (measured), or none possible where a peer test was waived."""
    data, ev = parsed.data, parsed.evidence
    devices: dict[int, str] = data.get("devices") or {}
    for index, name in sorted(devices.items())[:1]:
        yield Contribution("hardware.gpu", name, ev.get(f"device:{index}"))
    found = [
        PairState(key, "ok", 3, ev.get(f"copied:{key}"), f"nvbandwidth copied {gbs:g} GB/s between them")
        for key, gbs in sorted((data.get("copied") or {}).items())
    ]
    found += [
        PairState(key, "unsupported", 2, ev.get(f"missing:{key}"), "nvbandwidth could not copy between them (N/A)")
        for key in data.get("missing") or []
    ]
    waived = data.get("waived") or []
    if waived and len(devices) != 1:
        why = f"nvbandwidth waived {waived[0]}: no pair of GPUs can access a peer (cuDeviceCanAccessPeer)"
        found.append(PairState(ALL_PAIRS, "unsupported", 2, ev.get("waived:0"), why))
    yield pairs(found)


NVBANDWIDTH = Reader(
    "nvbandwidth",
    looks_like_nvbandwidth,
    parse_nvbandwidth,
    nvbandwidth_facts,
    yields=("hardware.gpu", PAIRS),
    gpu_evidence=True,
)
