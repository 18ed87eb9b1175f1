"""Environment reports: PyTorch's and vLLM's `collect_env` ("Collecting environment information..."), and
SGLang's `python -m sglang.check_env`: the GPUs, the driver, the CUDA and NCCL versions, the CPU's vendor,
and the NCCL and engine variables of the report's environment section.

Guarantees: each value comes from the line that prints it (`GPU 0: NVIDIA A100 80GB PCIe`,
`Nvidia driver version: 535.171.04`, `[pip3] nvidia-nccl-cu12==2.20.5`, `NCCL: 2.21.5`); a value the report
does not print stays unknown; the GPU count is the number of GPUs the report lists.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from advisor.inputs.evidence import Parsed, clean
from advisor.inputs.evidence.environment import ASSIGNMENT, is_setting
from advisor.inputs.evidence.launch import ENV_FACTS, env_facts
from advisor.inputs.evidence.reader import Contribution, Reader, fact

MARKS = ("Collecting environment information", "GPU models and configuration:", "CUDA used to build PyTorch")
GPU_LINE = re.compile(
    r"^[ \t]{0,8}GPU ([0-9]{1,3}(?:,[0-9]{1,3}){0,63}): ((?:NVIDIA|Tesla|Quadro|AMD|Instinct)[^\n]{1,100})$"
)
VALUES = {
    "driver_version": re.compile(
        r"^(?:Nvidia driver version|NVIDIA Driver Version|Driver Version)[ \t]{0,4}:[ \t]{0,4}([0-9][0-9.]{1,20})"
    ),
    "nccl_version": re.compile(
        r"^(?:\[(?:pip3?|conda)\][ \t]{1,8}nvidia-nccl-cu[0-9]{2}[ \t]{0,4}(?:==)?[ \t]{0,4}"
        r"|NCCL(?: version)?[ \t]{0,4}:[ \t]{0,4})"
        r"([0-9]\.[0-9]{1,3}\.[0-9]{1,3})"
    ),
    "cuda_runtime_version": re.compile(
        r"^(?:CUDA runtime version|CUDA used to build PyTorch)[ \t]{0,4}:[ \t]{0,4}([0-9][0-9.]{1,12})"
    ),
    "cpu_vendor": re.compile(r"^(?:Vendor ID|CPU vendor)[ \t]{0,4}:[ \t]{0,40}([A-Za-z]{3,20})"),
}


def looks_like_report(text: str) -> bool:
    """collect_env's banner or its GPU section, or check_env's CUDA and GPU lines."""
    head = text[:200_000]
    if any(mark in head for mark in MARKS):
        return True
    return "CUDA available" in head and bool(re.search(r"^GPU [0-9,]{1,200}: ", head, re.M))


def parse_report(text: str, file: str) -> Parsed:
    """The report's GPUs (index -> name), versions, CPU vendor, and NCCL/engine variables."""
    out = Parsed("environment-report", file)
    gpus: dict[int, str] = {}
    values: dict[str, str] = {}
    env: dict[str, str] = {}
    for no, line in enumerate(clean(text).split("\n"), 1):
        m = GPU_LINE.match(line)
        if m:
            for index in m.group(1).split(","):
                gpus.setdefault(int(index), m.group(2).strip())
            out.at("gpu" if "gpu" not in out.evidence else f"gpu:{no}", no, line)
            continue
        for name, pattern in VALUES.items():
            found = pattern.match(line.strip())
            if found and name not in values:
                values[name] = found.group(1)
                out.at(name, no, line)
        setting = ASSIGNMENT.fullmatch(line.rstrip())
        if setting and is_setting(setting.group(1)):
            env[setting.group(1)] = setting.group(2).strip().strip("\"'")
            out.at(f"env:0:{setting.group(1)}", no, line)
    if not (gpus or values):
        out.notes.append("a report header, but no GPU, driver or NCCL line")
        return out
    out.data = {"gpus": gpus, "values": values, "env": env}
    return out


def report_facts(parsed: Parsed) -> Iterator[Contribution]:
    """The GPU model and count, the versions and CPU vendor as facts, the environment's NCCL settings."""
    data, ev = parsed.data, parsed.evidence
    gpus: dict[int, str] = data.get("gpus") or {}
    if gpus:
        yield Contribution("hardware.gpu", gpus[min(gpus)], ev.get("gpu"))
        yield Contribution("hardware.gpus_per_node", len(gpus), ev.get("gpu"))
    for name, value in (data.get("values") or {}).items():
        yield fact(name, value, ev.get(name))
    if data.get("env"):
        yield from env_facts(data["env"], ev, None)


REPORT = Reader(
    "environment-report",
    looks_like_report,
    parse_report,
    report_facts,
    first_only=True,
    gpu_evidence=True,  # the report asks the driver (nvidia-smi, torch.cuda) for what it prints
    yields=(
        "hardware.gpu",
        "hardware.gpus_per_node",
        *(f"fact:{name}" for name in VALUES),
        *ENV_FACTS,
    ),
)
