"""The kernel's view of the IOMMU and of virtualisation: `/proc/cmdline`, `dmesg`, and `lspci -vvv`."""

from __future__ import annotations

import re
from collections.abc import Iterator

from advisor.inputs.evidence import ALL_PAIRS, PairState, Parsed, clean, gap
from advisor.inputs.evidence.reader import PAIRS, Contribution, Reader, fact, pairs

# NCCL's troubleshooting guide counts any of these '+' in ACSCtl as ACS enabled on the bridge
ACS_FLAGS = ("SrcValid", "ReqRedir", "CmpltRedir", "UpstreamFwd", "EgressCtrl")
ACS_ON = re.compile(r"\b(" + "|".join(ACS_FLAGS) + r")\+")
# of those, the controls that turn peer-to-peer away (PCIe base spec, ACS): request and completion redirect
# send a peer's traffic up to the root complex, egress control blocks it; source validation alone checks
# the requester's ID and leaves P2P between peers as it is
ACS_REDIRECT = frozenset(("ReqRedir", "CmpltRedir", "EgressCtrl"))


KERNEL_PARAMS = (
    "BOOT_IMAGE",
    "root",
    "ro",
    "quiet",
    "splash",
    "console",
    "intel_iommu",
    "amd_iommu",
    "iommu",
    "iommu.passthrough",
    "mitigations",
    "panic",
    "init",
    "rdinit",
    "nomodeset",
    "crashkernel",
    "pci",
)


def _param_line(text: str) -> tuple[int, str] | None:
    """The line holding kernel parameters: /proc/cmdline itself, or GRUB_CMDLINE_LINUX[_DEFAULT]="..."."""
    best: tuple[int, int, str] | None = None
    for no, line in enumerate(text.split("\n"), 1):
        grub = re.match(r'^[ \t]*GRUB_CMDLINE_LINUX(?:_DEFAULT)?="([^"\n]*)"', line)
        body = grub.group(1) if grub else line
        keys = {token.split("=", 1)[0] for token in body.split()}
        score = len(keys & set(KERNEL_PARAMS)) + (2 if grub and body.strip() else 0)
        if re.search(r"(^|[ \t])(BOOT_IMAGE=|root=(UUID=|/dev/|LABEL=|ZFS=))", body):
            score += 2
        if score >= 2 and (best is None or score > best[0]):
            best = (score, no, body)
    return (best[1], best[2]) if best else None


def looks_like_cmdline(text: str) -> bool:
    """Kernel parameters: one line of them (/proc/cmdline), or GRUB's GRUB_CMDLINE_LINUX settings."""
    if len(text) > 8192 or len([line for line in text.split("\n") if line.strip()]) > 6:
        return False
    return _param_line(text) is not None


def looks_like_dmesg(text: str) -> bool:
    """Kernel log lines that speak of the IOMMU, DMAR, AMD-Vi or a hypervisor."""
    if not any(word in text for word in ("DMAR", "AMD-Vi", "iommu", "IOMMU", "Hypervisor")):
        return False
    return bool(
        re.search(r"(DMAR:|AMD-Vi:|iommu: Default domain type|Hypervisor detected|Intel-IOMMU|IOMMU enabled)", text)
    )


def looks_like_lspci(text: str) -> bool:
    """`lspci -vvv`: device headers like '00:01.0 PCI bridge:' with indented capability lines."""
    if not any(word in text for word in ("ACSCtl", "Capabilities", "LnkSta", "Region ")):
        return False
    headers = re.search(r"^(?:[0-9a-f]{4}:)?[0-9a-f]{2}:[0-9a-f]{2}\.[0-7] [^:\n]+:", text, re.M | re.I)
    capabilities = re.search(r"^[ \t]+(Capabilities|ACSCtl|LnkSta|Region \d|Control:)", text, re.M)
    return bool(headers and capabilities) or bool(re.search(r"^[ \t]*ACSCtl:[ \t]+SrcValid[+-]", text, re.M))


def iommu_from_cmdline(params: dict[str, str]) -> str | None:
    """IOMMU mode implied by kernel parameters: off, passthrough, translated, or None if not said."""
    if params.get("iommu") == "off" or params.get("intel_iommu") == "off" or params.get("amd_iommu") == "off":
        return "off"
    if params.get("iommu") == "pt" or params.get("iommu.passthrough") in ("1", "y", "on"):
        return "passthrough"
    if params.get("iommu.passthrough") in ("0", "n", "off") or params.get("iommu") == "nopt":
        return "translated"
    if params.get("intel_iommu", "").startswith("on") or params.get("amd_iommu") in ("on", "force_isolation"):
        return "translated"
    return None


def parse_cmdline(text: str, file: str) -> Parsed:
    """Kernel parameters and the IOMMU mode they set."""
    out = Parsed("cmdline", file)
    text = clean(text)
    found = _param_line(text)
    if found is None:
        out.notes.append("no kernel parameter line found")
        return out
    no, line = found
    params: dict[str, str] = {}
    for token in line.split():
        key, _, value = token.partition("=")
        params[key] = value
    out.data = {"params": params, "iommu": iommu_from_cmdline(params)}
    if out.data["iommu"]:
        out.at("iommu", no, text.split("\n")[no - 1])
    return out


_FAULT = re.compile(r"AMD-Vi: Event logged \[IO_PAGE_FAULT|DMAR: \[DMA (Read|Write)\]")
# the device of a fault: "nvidia 0000:0a:00.0: AMD-Vi: ..." (driver and address) or "Request device [0a:00.0]"
_FAULT_DEVICE = re.compile(
    r"(?:(\w{1,32}) )?((?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]): AMD-Vi"
    r"|Request device \[([0-9a-fA-F:.]{7,14})\]"
)
_DOMAIN = re.compile(r"iommu: Default domain type: (\w+)")
_ENABLED = re.compile(
    r"DMAR: IOMMU enabled|AMD-Vi: " + gap("AMD-Vi:") + r"(Found IOMMU|Interrupt remapping enabled)|Intel-IOMMU: enabled"
)
_HYPERVISOR = re.compile(r"Hypervisor detected: (\S+)")
_DMESG_WORDS = ("AMD-Vi", "DMAR", "iommu", "IOMMU", "Hypervisor")  # a line without one holds nothing to read


def parse_dmesg(text: str, file: str) -> Parsed:
    """IOMMU default domain type, DMAR/AMD-Vi enablement, DMA faults the IOMMU logged, and a hypervisor if
    the kernel saw one. A logged DMA fault shows the IOMMU translating that device's addresses."""
    out = Parsed("dmesg", file)
    data: dict[str, object] = {}
    faults: list[tuple[int, str]] = []
    for no, line in enumerate(clean(text).split("\n"), 1):
        if not any(w in line for w in _DMESG_WORDS):
            continue
        if _FAULT.search(line):
            faults.append((no, line))
        m = _DOMAIN.search(line)
        if m:
            data["iommu"] = {"Translated": "translated", "Passthrough": "passthrough"}.get(
                m.group(1), m.group(1).lower()
            )
            out.at("iommu", no, line)
        elif _ENABLED.search(line):
            data.setdefault("iommu_enabled", True)
            out.at("iommu_enabled", no, line)
        m = _HYPERVISOR.search(line)
        if m:
            data["virtualized"] = True
            data["hypervisor"] = m.group(1)
            out.at("virtualized", no, line)
    if faults:
        data["iommu_faults"] = len(faults)
        data["fault_devices"] = _fault_devices(faults)
        if "iommu" not in data:
            data["iommu"] = "translated"
            out.at("iommu", *faults[0])
    if "iommu" not in data and data.get("iommu_enabled"):
        data["iommu"] = None  # enabled, but the domain type is not in the excerpt
    out.data = data
    if not data:
        out.notes.append("no IOMMU or hypervisor lines found")
    return out


def _fault_devices(faults: list[tuple[int, str]]) -> list[dict[str, str]]:
    """The devices the IOMMU's faults name, each once: its PCI address and, where logged, its driver."""
    seen: dict[str, str] = {}
    for _no, line in faults:
        m = _FAULT_DEVICE.search(line)
        if m:
            seen.setdefault(m.group(2) or m.group(3), m.group(1) or "")
    return [{"address": a, "driver": d} for a, d in seen.items()]


def parse_lspci(text: str, file: str) -> Parsed:
    """Per PCI function: class, name, ACS control bits, link speed and width, BAR sizes."""
    out = Parsed("lspci", file)
    devices: list[dict[str, object]] = []
    current: dict[str, object] | None = None
    for no, line in enumerate(clean(text).split("\n"), 1):
        m = re.match(r"^((?:[0-9a-f]{4}:)?[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]) ([^:\n]+): (.*)$", line, re.I)
        if m:
            current = {"address": m.group(1), "class": m.group(2).strip(), "name": m.group(3).strip(), "line": no}
            devices.append(current)
            continue
        stripped = line.strip()
        if current is None:
            if not stripped.startswith("ACSCtl:"):
                continue
            current = {
                "address": f"(line {no})",
                "class": "PCI bridge (from a filtered listing)",
                "name": "",
                "line": no,
            }
            devices.append(current)
        if stripped.startswith("ACSCtl:"):
            enabled = ACS_ON.findall(stripped)
            current["acs_enabled"] = bool(enabled)
            current["acs_flags"] = enabled
            if enabled:
                out.at(f"acs:{current['address']}", no, line)
            if str(current["address"]).startswith("(line"):
                current = None  # a filtered listing: each ACSCtl line stands for its own bridge
        elif stripped.startswith("LnkSta:"):
            m2 = re.search(r"Speed ([\d.]{1,8})GT/s[^,\n]{0,80}, Width x(\d{1,3})", stripped)
            if m2:
                current["link_gts"] = float(m2.group(1))
                current["link_width"] = int(m2.group(2))
            current["downgraded"] = "downgraded" in stripped
            if current["downgraded"]:
                out.at(f"downgraded:{current['address']}", no, line)
        elif stripped.startswith("LnkCap:"):
            m2 = re.search(r"Speed ([\d.]+)GT/s, Width x(\d+)", stripped)
            if m2:
                current["cap_gts"] = float(m2.group(1))
                current["cap_width"] = int(m2.group(2))
        elif stripped.startswith("Region") and "size=" in stripped:
            m2 = re.search(r"size=(\d+)([KMGT])", stripped)
            if m2:
                current.setdefault("bars", []).append(m2.group(1) + m2.group(2))  # type: ignore[attr-defined]
    if not devices:
        out.notes.append("no PCI device headers found")
    acs = [d["address"] for d in devices if d.get("acs_enabled")]
    nvidia = [
        d for d in devices if "NVIDIA" in str(d.get("name")) and ("3D" in str(d["class"]) or "VGA" in str(d["class"]))
    ]
    out.data = {
        "devices": devices,
        "acs_enabled_bridges": acs,
        "acs_checked": any("acs_enabled" in d for d in devices),
        "gpus": [
            {
                "address": d["address"],
                "link_gts": d.get("link_gts"),
                "link_width": d.get("link_width"),
                "downgraded": d.get("downgraded", False),
                "bars": d.get("bars", []),
            }
            for d in nvidia
        ],
    }
    return out


def cmdline_facts(parsed: Parsed) -> Iterator[Contribution]:
    """The IOMMU mode the kernel parameters ask for: a fallback, for the kernel's log says what it did."""
    yield fact("iommu", parsed.data.get("iommu"), parsed.evidence.get("iommu"), fallback=True)


def dmesg_facts(parsed: Parsed) -> Iterator[Contribution]:
    """The IOMMU mode the kernel logged, a hypervisor if it saw one, and the DMA faults the IOMMU logged
    for GPUs (devices the nvidia driver owns, or any device where the line names no driver): each one a
    transfer the IOMMU dropped, so peer-to-peer between the GPUs is broken while it translates."""
    data, ev = parsed.data, parsed.evidence
    if data.get("iommu"):
        yield fact("iommu", data["iommu"], ev.get("iommu"))
    if data.get("virtualized"):
        yield fact("virtualized", True, ev.get("virtualized"))
    gpus = [d for d in data.get("fault_devices", []) if d["driver"] in ("nvidia", "")]
    if data.get("iommu_faults") and (gpus or not data.get("fault_devices")):
        where = ev.get("iommu")
        yield fact("iommu_gpu_faults", int(data["iommu_faults"]), where)
        named = ", ".join(f"{d['driver']} {d['address']}".strip() for d in gpus)
        if named:
            yield fact("iommu_fault_devices", named, where)
        why = f"the IOMMU logged {data['iommu_faults']} DMA faults" + (f" for {named}" if named else "")
        yield pairs([PairState(ALL_PAIRS, "broken", 3, where, why)])


def lspci_facts(parsed: Parsed) -> Iterator[Contribution]:
    """ACS on the bridges (redirect or egress control on any: enabled; checked and off on all: disabled),
    how many bridges redirect, and GPU links trained down."""
    if parsed.data.get("acs_enabled_bridges"):
        bridges = parsed.data["acs_enabled_bridges"]
        yield fact("acs", "enabled", parsed.evidence.get(f"acs:{bridges[0]}"))
        redirect = [d for d in parsed.data["devices"] if ACS_REDIRECT & set(d.get("acs_flags", []))]
        if redirect:
            where = parsed.evidence.get(f"acs:{redirect[0]['address']}")
            yield fact("acs_redirect_bridges", len(redirect), where)
            flags = sorted({f for d in redirect for f in d["acs_flags"] if f in ACS_REDIRECT})
            why = f"ACS {'+ '.join(flags)}+ on {len(redirect)} PCIe bridge(s): P2P redirected to the root complex"
            yield pairs([PairState(ALL_PAIRS, "blocked", 1, where, why)])
    elif parsed.data.get("acs_checked"):
        yield fact("acs", "disabled")
    slow = [g["address"] for g in parsed.data.get("gpus", []) if g.get("downgraded")]
    if slow:
        yield fact("gpu_link_downgraded", ", ".join(slow), parsed.evidence.get(f"downgraded:{slow[0]}"))


CMDLINE = Reader("cmdline", looks_like_cmdline, parse_cmdline, cmdline_facts, yields=("fact:iommu",))
DMESG = Reader(
    "dmesg",
    looks_like_dmesg,
    parse_dmesg,
    dmesg_facts,
    yields=("fact:iommu", "fact:virtualized", "fact:iommu_gpu_faults", "fact:iommu_fault_devices", PAIRS),
)
LSPCI = Reader(
    "lspci",
    looks_like_lspci,
    parse_lspci,
    lspci_facts,
    yields=("fact:acs", "fact:acs_redirect_bridges", "fact:gpu_link_downgraded", PAIRS),
)
