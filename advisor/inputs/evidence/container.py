"""Containers that run GPU work, whatever the image: a `docker run` / `podman run` / `nerdctl run` line,
a compose service, a Kubernetes pod asking for `nvidia.com/gpu`; what they give the processes inside of
shared memory (the size of /dev/shm, the host's IPC namespace) and of GPUs.

Guarantees: a size the definition writes is read with its unit (b, k, m, g; a number alone is bytes for
docker, as its reference says); a container that writes none gets its runtime's default, 64 MiB, and the
fact says it is the default (`container_shm_default`), never that the user chose it. A line is read on
its own (shell continuations joined first); nothing spans lines.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from advisor.inputs.evidence import Parsed, clean
from advisor.inputs.evidence.reader import Contribution, Reader, fact

RUN = re.compile(r"\b(docker|podman|nerdctl)[ \t]{1,8}(?:container[ \t]{1,8})?run\b")
GPU_FLAG = re.compile(
    r"--gpus(?:=|[ \t]{1,8})[\"']?([^ \t\n\"']{1,80})|--runtime[= ]nvidia|--device[= ]nvidia\.com/gpu"
)
SHM_FLAG = re.compile(r"--shm-size(?:=|[ \t]{1,8})[\"']?([0-9.]{1,12}[A-Za-z]{0,3})")
IPC_FLAG = re.compile(r"--ipc(?:=|[ \t]{1,8})[\"']?([a-z:0-9_-]{1,80})")
COMPOSE_SHM = re.compile(r"^[ \t]{1,40}shm_size[ \t]{0,4}:[ \t]{0,4}[\"']?([0-9.]{1,12}[A-Za-z]{0,3})")
COMPOSE_IPC = re.compile(r"^[ \t]{1,40}ipc[ \t]{0,4}:[ \t]{0,4}[\"']?([a-z:0-9_-]{1,80})")
COMPOSE_GPU = re.compile(
    r"^[ \t]{1,40}(?:-[ \t]{1,8})?(?:driver[ \t]{0,4}:[ \t]{0,4}[\"']?nvidia"
    r"|capabilities[ \t]{0,4}:[^\n]{0,80}gpu|runtime[ \t]{0,4}:[ \t]{0,4}nvidia)"
)
POD_GPU = re.compile(r"nvidia\.com/gpu[\"']?[ \t]{0,4}:[ \t]{0,4}[\"']?([0-9]{1,4})")
POD_SHM = re.compile(r"mountPath[ \t]{0,4}:[ \t]{0,4}[\"']?/dev/shm\b")
# a run whose command is one of the driver's or CUDA's own checks starts no NCCL or engine work: its
# /dev/shm does not matter (`docker run --gpus all IMAGE nvidia-smi`, the toolkit's own smoke test)
ONE_SHOT = re.compile(r"[ \t](?:nvidia-smi|nvcc|deviceQuery|bandwidthTest)(?:[ \t][^\n]{0,200})?$")
DEFAULT_SHM_MIB = 64.0  # Docker's, Podman's and a Kubernetes pod's /dev/shm when nothing sets it
UNITS = {"": 1 / 2**20, "b": 1 / 2**20, "k": 1 / 1024, "kb": 1 / 1024, "m": 1.0, "mb": 1.0, "g": 1024.0, "gb": 1024.0}


def mib(size: str) -> float | None:
    """A docker size (`16g`, `10.24gb`, `512m`, `67108864`) in MiB; None where it is not one."""
    m = re.fullmatch(r"([0-9]{1,12}(?:\.[0-9]{1,6})?)([A-Za-z]{0,3})", size.strip())
    if not m or m.group(2).lower() not in UNITS:
        return None
    return float(m.group(1)) * UNITS[m.group(2).lower()]


def looks_like_container(text: str) -> bool:
    """A container run with GPUs, a compose service with a GPU, or a pod that asks for nvidia.com/gpu."""
    if RUN.search(text) and GPU_FLAG.search(text):
        return True
    lines = text.split("\n")
    if "services:" in text and any(COMPOSE_GPU.match(x) for x in lines):
        return True
    return "nvidia.com/gpu" in text and bool(POD_GPU.search(text))


def _logical_lines(text: str) -> Iterator[tuple[int, str]]:
    start, buffer = 0, ""
    for no, line in enumerate(text.split("\n"), 1):
        if not buffer:
            start = no
        stripped = line.rstrip()
        if stripped.endswith("\\"):
            buffer += stripped[:-1] + " "
            continue
        yield start, buffer + line
        buffer = ""
    if buffer:
        yield start, buffer


def _runs(text: str, out: Parsed) -> list[dict[str, object]]:
    found: list[dict[str, object]] = []
    for no, line in _logical_lines(text):
        run = RUN.search(line)
        gpus = GPU_FLAG.search(line, run.end()) if run else None
        if not run or not gpus:
            continue
        # --runtime=nvidia alone names no GPUs: the image's NVIDIA_VISIBLE_DEVICES decides, unknown here
        item: dict[str, object] = {"how": run.group(1) + " run", "gpus": gpus.group(1) or ""}
        shm, ipc = SHM_FLAG.search(line, run.end()), IPC_FLAG.search(line, run.end())
        if shm:
            item["shm"] = shm.group(1)
        if ipc:
            item["ipc"] = ipc.group(1)
        item["one_shot"] = bool(ONE_SHOT.search(line.rstrip(), gpus.end()))
        found.append(item)
        out.at(f"container:{len(found) - 1}", no, line)
    return found


def _definition(text: str, out: Parsed) -> list[dict[str, object]]:
    """A compose file or pod manifest as one container: its GPU request, shm size or /dev/shm mount, IPC."""
    item: dict[str, object] = {}
    first = 0
    for no, line in enumerate(text.split("\n"), 1):
        for key, pattern in (("shm", COMPOSE_SHM), ("ipc", COMPOSE_IPC)):
            m = pattern.match(line)
            if m and key not in item:
                item[key] = m.group(1)
                out.at(f"container:0:{key}", no, line)
        if POD_SHM.search(line):
            item["shm_mount"] = True
            out.at("container:0:shm", no, line)
        gpu = POD_GPU.search(line)
        if (gpu or COMPOSE_GPU.match(line)) and not first:
            first = no
            item["gpus"] = gpu.group(1) if gpu else "all"
            item["how"] = "kubernetes pod" if gpu else "compose service"
            out.at("container:0", no, line)
    return [item] if first else []


def parse_container(text: str, file: str) -> Parsed:
    """Every GPU container run of the text, or the one container a compose file or pod manifest defines."""
    out = Parsed("container", file)
    text = clean(text)
    found = _runs(text, out) or _definition(text, out)
    if not found:
        out.notes.append("names GPUs for a container but no run line or definition could be read")
    out.data = {"containers": found} if found else {}
    return out


def container_facts(parsed: Parsed) -> Iterator[Contribution]:
    """The first container's shared memory and GPUs: /dev/shm in MiB (the runtime's default where nothing
    sets it, and said so), whether it shares the host's IPC namespace, how many GPUs it asks for."""
    items = parsed.data.get("containers") or []
    if not items:
        return
    item, where = items[0], parsed.evidence.get("container:0")
    ipc_host = str(item.get("ipc", "")) == "host"
    yield fact("container_ipc_host", ipc_host, parsed.evidence.get("container:0:ipc") or where)
    size = mib(str(item["shm"])) if item.get("shm") else None
    if size is not None:
        yield fact("container_shm_mib", round(size, 1), parsed.evidence.get("container:0:shm") or where)
        yield fact("container_shm_default", False, parsed.evidence.get("container:0:shm") or where)
    elif not item.get("shm_mount") and not ipc_host:
        yield fact("container_shm_mib", DEFAULT_SHM_MIB, where)
        yield fact("container_shm_default", True, where)
    gpus = str(item.get("gpus", ""))
    count = re.search(r"[0-9]{1,4}", gpus)
    if gpus:
        yield fact("container_all_gpus", "all" in gpus, where)
    if count and "device=" not in gpus:
        yield fact("container_gpus", int(count.group(0)), where)
    elif "device=" in gpus:
        yield fact("container_gpus", len(gpus.split("=", 1)[1].split(",")), where)
    yield fact("container_runtime", str(item.get("how", "")), where)
    yield fact("container_one_shot_check", bool(item.get("one_shot")), where)


CONTAINER = Reader(
    "container",
    looks_like_container,
    parse_container,
    container_facts,
    first_only=True,
    yields=(
        "fact:container_ipc_host",
        "fact:container_shm_mib",
        "fact:container_shm_default",
        "fact:container_all_gpus",
        "fact:container_gpus",
        "fact:container_one_shot_check",
        "fact:container_runtime",
    ),
)
