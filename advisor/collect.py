"""`advisor collect -o DIR`: gather host evidence for `advisor audit` on the customer's GPU host.

Runs each command that exists, with a time limit, and writes its output to a file in DIR; records
every command that is missing, failed or timed out, and why, in DIR/manifest.json. Needs no root to
succeed partially (lspci without root hides ACS lines; dmesg may be restricted), writes nothing
outside DIR, and on a machine without NVIDIA GPUs still writes a bundle that says so. Unless told
not to, every file and the manifest are written through the transcripts' redactor (advisor.redact),
learning from the whole bundle before writing any of it, so a host name a later file gives away is
hidden in the earlier ones too; GPU names, PCI addresses and figures stay as the audit reads them.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import shutil
import subprocess
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from advisor import __version__
from advisor.errors import InputError
from advisor.inputs.evidence.manifest import SCHEMA  # noqa: E402  (the reader and the writer share the id)
from advisor.redact import Redactor

TIMEOUT_S = 30
ENGINE = re.compile(r"(vllm|sglang)", re.I)
KEEP_ENV = re.compile(r"^(CUDA_VISIBLE_DEVICES|NCCL_[A-Z_]+|VLLM_[A-Z_]+)=")
DMESG_KEEP = re.compile(r"(DMAR|IOMMU|iommu|AMD-Vi|Hypervisor detected|NVRM|nvidia|Xid)")

COMMANDS: tuple[tuple[str, list[str]], ...] = (
    ("nvidia-smi-topo.txt", ["nvidia-smi", "topo", "-m"]),
    ("nvidia-smi-topo-p2p-r.txt", ["nvidia-smi", "topo", "-p2p", "r"]),
    ("nvidia-smi-q.txt", ["nvidia-smi", "-q"]),
    (
        "nvidia-smi-query.csv",
        [
            "nvidia-smi",
            "--query-gpu=index,name,memory.total,pci.bus_id,pcie.link.gen.current,pcie.link.width.current",
            "--format=csv",
        ],
    ),
    ("nvidia-smi-nvlink.txt", ["nvidia-smi", "nvlink", "--status"]),
    ("lspci.txt", ["lspci", "-vvv"]),
    ("dmesg.txt", ["dmesg"]),
)


@dataclass
class Step:
    """One command or file read, and how it went."""

    output: str
    command: str
    status: str  # ok | missing | failed | timeout | empty
    detail: str = ""
    seconds: float = 0.0


def _run(argv: list[str]) -> tuple[str, Step]:
    command = " ".join(argv)
    exe = shutil.which(argv[0])
    if exe is None:
        return "", Step("", command, "missing", f"{argv[0]} not found on PATH")
    start = time.monotonic()
    try:
        done = subprocess.run([exe, *argv[1:]], capture_output=True, text=True, timeout=TIMEOUT_S, errors="replace")
    except subprocess.TimeoutExpired:
        return "", Step("", command, "timeout", f"no answer within {TIMEOUT_S} s", time.monotonic() - start)
    except OSError as exc:
        return "", Step("", command, "failed", str(exc), time.monotonic() - start)
    took = round(time.monotonic() - start, 3)
    if done.returncode != 0:
        first = (done.stderr or done.stdout).strip().splitlines()[:1]
        return done.stdout, Step("", command, "failed", f"exit {done.returncode}: {first[0] if first else ''}", took)
    if not done.stdout.strip():
        return "", Step("", command, "empty", "no output", took)
    return done.stdout, Step("", command, "ok", "", took)


def _engines() -> tuple[str, list[str]]:
    """Command lines (and NCCL/CUDA environment) of running vLLM or SGLang processes, from /proc."""
    lines: list[str] = []
    notes: list[str] = []
    proc = Path("/proc")
    if not proc.is_dir():
        return "", ["no /proc on this system"]
    for pid_dir in sorted(proc.glob("[0-9]*"), key=lambda p: int(p.name)):
        try:
            argv = (pid_dir / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        command = " ".join(a.decode("utf-8", "replace") for a in argv if a)
        if not ENGINE.search(command) or "advisor" in command:
            continue
        env = ""
        try:
            pairs = (pid_dir / "environ").read_bytes().split(b"\0")
            env = " ".join(p.decode("utf-8", "replace") for p in pairs if KEEP_ENV.match(p.decode("utf-8", "replace")))
        except OSError:
            notes.append(f"pid {pid_dir.name}: environment not readable without more privileges")
        lines.append(f"{env} {command}".strip())
    return "\n".join(lines) + ("\n" if lines else ""), notes


def collect(out: Path, redact: bool = True) -> dict[str, object]:
    """Write the bundle into `out` (created if needed; must be empty or new) and return its manifest;
    `redact` hides host names, addresses, serials, UUIDs, user names and tokens (see advisor.redact)."""
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise InputError("the output folder exists and is not empty; choose a new one", where=str(out))
    out.mkdir(parents=True, exist_ok=True)
    steps: list[Step] = []
    texts: dict[str, str] = {}

    def save(name: str, text: str, step: Step) -> None:
        step.output = name if text else ""
        if text:
            texts[name] = text
        steps.append(step)

    for name, argv in COMMANDS:
        text, step = _run(argv)
        if name == "dmesg.txt" and text:
            text = "".join(line + "\n" for line in text.splitlines() if DMESG_KEEP.search(line))
            step.detail = "kept only IOMMU, hypervisor and NVIDIA lines"
        if name == "lspci.txt" and text and "ACSCtl" not in text and os.geteuid() != 0:
            step.detail = "run as root to include ACS control lines (ACSCtl)"
        save(name, text, step)
    try:
        cmdline = Path("/proc/cmdline").read_text(encoding="utf-8", errors="replace")
        save("cmdline.txt", cmdline, Step("", "cat /proc/cmdline", "ok"))
    except OSError as exc:
        save("cmdline.txt", "", Step("", "cat /proc/cmdline", "failed", str(exc)))
    engines, notes = _engines()
    save(
        "engine-processes.txt",
        engines,
        Step(
            "",
            "/proc/*/cmdline of vllm or sglang processes",
            "ok" if engines else "empty",
            "; ".join(notes) or ("" if engines else "no engine running"),
        ),
    )
    smi = next(s for s in steps if s.command.startswith("nvidia-smi topo -m"))
    gpus_found = smi.status == "ok"
    manifest: dict[str, object] = {
        "schema": SCHEMA,
        "advisor_version": __version__,
        "collected_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "nvidia_gpus": gpus_found,
        "summary": "NVIDIA GPUs found" if gpus_found else f"no NVIDIA GPU evidence: {smi.detail or smi.status}",
        "redacted": redact,
        "steps": [asdict(s) for s in steps],
    }
    if redact:
        clean = redacted({"files": texts, "steps": manifest["steps"]})
        texts, manifest["steps"] = clean["files"], clean["steps"]
    for name, text in texts.items():
        (out / name).write_text(text, encoding="utf-8")
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return manifest


def redacted(bundle: dict[str, Any]) -> dict[str, Any]:
    """A bundle's texts and steps through one redactor, learning from all of them before replacing any."""
    clean: dict[str, Any] = Redactor().document(bundle)
    return clean
