"""The CUDA versions a host prints: `nvcc --version` (the toolkit that builds kernels and extensions) and
the banner of `nvidia-smi` ("CUDA Version: 12.2": the newest CUDA the driver supports, not a toolkit that
is installed). Each is given as text and as CUDA's own number (major * 1000 + minor * 10, as CUDA_VERSION
writes 12.8 as 12080), so that rules compare them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from advisor.inputs.evidence import Parsed, clean
from advisor.inputs.evidence.reader import Contribution, Reader, fact

NVCC_BANNER = re.compile(r"^[ \t]{0,8}nvcc: NVIDIA \(R\) Cuda compiler driver", re.M)
NVCC_RELEASE = re.compile(r"^[ \t]{0,8}Cuda compilation tools, release ([0-9]{1,2})\.([0-9]{1,2})\b")
SMI_CUDA = re.compile(
    r"Driver Version:?[ \t]{0,4}[0-9][0-9.]{1,20}[ \t]{1,40}CUDA Version:?[ \t]{0,4}([0-9]{1,2})\.([0-9]{1,2})"
)


def number(major: str, minor: str) -> int:
    """CUDA's version number: 12.8 is 12080."""
    return int(major) * 1000 + int(minor) * 10


def looks_like_nvcc(text: str) -> bool:
    """nvcc --version: its banner and the release line."""
    return bool(NVCC_BANNER.search(text)) and "compilation tools, release" in text


def parse_nvcc(text: str, file: str) -> Parsed:
    """The toolkit's release (major, minor)."""
    out = Parsed("nvcc-version", file)
    for no, line in enumerate(clean(text).split("\n"), 1):
        m = NVCC_RELEASE.match(line)
        if m:
            out.data = {"major": m.group(1), "minor": m.group(2)}
            out.at("release", no, line)
            break
    else:
        out.notes.append("no 'Cuda compilation tools, release' line found")
    return out


def nvcc_facts(parsed: Parsed) -> Iterator[Contribution]:
    """The toolkit's version, as text and as CUDA's number."""
    data, where = parsed.data, parsed.evidence.get("release")
    if data:
        yield fact("cuda_toolkit_version", f"{data['major']}.{data['minor']}", where)
        yield fact("cuda_toolkit_number", number(data["major"], data["minor"]), where)
        yield fact("cuda_toolkit_major", int(data["major"]), where)


def driver_cuda(text: str, parsed: Parsed) -> dict[str, str]:
    """The banner's CUDA Version (major, minor), its line kept as `driver_cuda`; {} where there is none."""
    for no, line in enumerate(clean(text).split("\n"), 1):
        m = SMI_CUDA.search(line) if "CUDA Version" in line else None
        if m:
            parsed.at("driver_cuda", no, line)
            return {"major": m.group(1), "minor": m.group(2)}
    return {}


def driver_cuda_facts(parsed: Parsed) -> Iterator[Contribution]:
    """The newest CUDA the driver supports, as text and as CUDA's number."""
    cuda, where = parsed.data.get("cuda") or {}, parsed.evidence.get("driver_cuda")
    if cuda:
        yield fact("driver_cuda_version", f"{cuda['major']}.{cuda['minor']}", where)
        yield fact("driver_cuda_number", number(cuda["major"], cuda["minor"]), where)
        yield fact("driver_cuda_major", int(cuda["major"]), where)


NVCC = Reader(
    "nvcc-version",
    looks_like_nvcc,
    parse_nvcc,
    nvcc_facts,
    yields=("fact:cuda_toolkit_version", "fact:cuda_toolkit_number", "fact:cuda_toolkit_major"),
)
