"""`advisor collect -o DIR`: gather host evidence for `advisor audit` on the customer's GPU host.

Runs each command that exists, with a time limit, and writes its output to a file in DIR; records
every command that is missing, failed or timed out, and why, in DIR/manifest.json. Needs no root to
succeed partially (lspci without root hides ACS lines; dmesg may be restricted), writes nothing
outside DIR, and on a machine without NVIDIA GPUs still writes a bundle that says so. Unless told
not to, every file and the manifest are written through the transcripts' redactor (advisor.redact),
learning from the whole bundle before writing any of it, so a host name a later file gives away is
hidden in the earlier ones too; GPU names, PCI addresses and figures stay as the audit reads them. What
was hidden is listed by kind and count per file (never the value) in the manifest's `redactions`.
Of a running engine's environment it keeps what is configuration (knowledge/environment.yaml): the
variables NCCL and vLLM document, with their values; other variables of the same families
(NCCL_, VLLM_, SGLANG_, CUDA_, ...) with their values only where the value is a setting (a number, a
switch, a short word); a variable whose name means a credential (HF_TOKEN, VLLM_DB_PW) with its name, its
value hidden by the redactor; nothing else. The manifest lists the names whose values were hidden
(`redacted_names`) and those withheld (`withheld_names`), never a value.

Bounded: each command runs at most TIMEOUT_S, all of them together at most DEADLINE_S, and gives at
most OUTPUT_CAP bytes; each runs in its own process group, which is killed when it ends, so a hung
tool leaves no child behind; an interrupt (SIGINT, SIGTERM, SIGHUP, SIGQUIT) kills the running tool's
group before collect stops (`Interrupted`, nothing written). Every file is written whole or not at all
(advisor.files.write_atomic): a full disk never leaves a truncated manifest. DIR is checked before
anything runs (under /proc, under a file, a name over 255 bytes, read-only, not empty) and every write
is guarded (a full disk): one line, exit 2.
"NVIDIA GPUs found" only when `nvidia-smi topo -m` gave a GPU matrix, never for any output at all.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import re
import selectors
import shutil
import signal
import subprocess
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from advisor import __version__
from advisor.errors import InputError
from advisor.files import pseudo_file, write_atomic
from advisor.inputs.evidence import clean
from advisor.inputs.evidence.manifest import SCHEMA  # noqa: E402  (the reader and the writer share the id)
from advisor.inputs.evidence.topo import looks_like_topo
from advisor.kb.paths import knowledge_dir
from advisor.redact import PLACEHOLDER, Redactor
from advisor.redact.names import strength
from advisor.redact.secrets import FLAG
from advisor.yamlio import load_file_cached

TIMEOUT_S = 30  # one command
DEADLINE_S = 90  # all commands together: seven hung tools once took 210 s
OUTPUT_CAP = 8 * 1024 * 1024  # per command: the audit reads no more of a file (evidence.MAX_TEXT)
NAME_MAX = 255  # bytes in one file or folder name (Linux, macOS)
ENGINE = re.compile(r"(vllm|sglang)", re.I)
_SETTING = re.compile(r"[-+]?[\w.:/,+-]{0,64}")  # a number, a switch, a short word or list of words, a path
_HIDDEN = ("strong", "medium")
MANIFEST = "manifest.json"
_PLACED = re.compile(r"(?<![\w-])(?:" + PLACEHOLDER.pattern + r")(?!\w)")
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


@dataclass
class Limits:
    """How long each command and all of them together may run, and how much output one may give."""

    timeout_s: float = TIMEOUT_S
    deadline_s: float = DEADLINE_S
    cap: int = OUTPUT_CAP
    started: float = 0.0

    def left(self) -> float:
        """Seconds the next command may run: its own limit, or what is left of the overall one."""
        return min(self.timeout_s, self.started + self.deadline_s - time.monotonic())


def _drain(proc: subprocess.Popen[bytes], seconds: float, cap: int) -> tuple[bytes, bytes, str]:
    """A command's stdout (at most `cap` bytes) and stderr, and why it was stopped ('' if it ended)."""
    assert proc.stdout is not None and proc.stderr is not None
    out, err = bytearray(), bytearray()
    end = time.monotonic() + seconds
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ, out)
        sel.register(proc.stderr, selectors.EVENT_READ, err)
        while sel.get_map():
            left = end - time.monotonic()
            if left <= 0:
                return bytes(out), bytes(err), "timeout"
            for key, _ in sel.select(min(left, 1.0)):
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    sel.unregister(key.fileobj)
                    continue
                buf = key.data
                buf += chunk[: max(0, cap - len(buf))] if buf is out else chunk[:4096]
                if buf is out and len(out) >= cap:
                    return bytes(out), bytes(err), "cap"
    return bytes(out), bytes(err), ""


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """End the command and every process it started (its own process group): none is left behind."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=5)
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()


class Interrupted(BaseException):
    """collect was stopped by a signal; the running tool's process group was killed first."""

    def __init__(self, signo: int) -> None:
        super().__init__(signo)
        self.signo = signo


_RUNNING: set[int] = set()  # the process groups of the tools running now
_SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT")


def _interrupted(signo: int, _frame: Any) -> None:
    """End every running tool's process group, then stop collect."""
    for pgid in list(_RUNNING):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)
    raise Interrupted(signo)


@contextlib.contextmanager
def _signals_end_the_tools() -> Any:
    """While collect runs, each of _SIGNALS ends the running tools before it stops collect (main thread only:
    Python sets handlers there)."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    saved = {}
    for name in _SIGNALS:
        signo = getattr(signal, name, None)
        if signo is not None:
            saved[signo] = signal.signal(signo, _interrupted)
    try:
        yield
    finally:
        for signo, handler in saved.items():
            signal.signal(signo, handler)


def _run(argv: list[str], limits: Limits | None = None) -> tuple[str, Step]:
    limits = limits or Limits(started=time.monotonic())
    command = " ".join(argv)
    exe = shutil.which(argv[0])
    if exe is None:
        return "", Step("", command, "missing", f"{argv[0]} not found on PATH")
    seconds = limits.left()
    if seconds <= 0:
        return "", Step("", command, "timeout", f"not run: the {limits.deadline_s:g} s for all commands were spent")
    start = time.monotonic()
    try:
        proc = subprocess.Popen(
            [exe, *argv[1:]],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # its own process group, so that a hung tool's children are ended with it
        )
    except OSError as exc:
        return "", Step("", command, "failed", str(exc), time.monotonic() - start)
    _RUNNING.add(proc.pid)
    try:
        raw, raw_err, stopped = _drain(proc, seconds, limits.cap)
        if not stopped:  # its output ended: let it exit on its own before its group is ended
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=max(0.1, min(5.0, seconds - (time.monotonic() - start))))
    finally:
        _stop(proc)
        _RUNNING.discard(proc.pid)
    took = round(time.monotonic() - start, 3)
    stdout = raw.decode("utf-8", errors="replace")
    if stopped == "timeout":
        return "", Step("", command, "timeout", f"no answer within {seconds:.0f} s; stopped", took)
    detail = f"output cut at {limits.cap // (1024 * 1024)} MiB; the command was stopped" if stopped == "cap" else ""
    if proc.returncode not in (0, None) and not stopped:
        first = (raw_err or raw).decode("utf-8", errors="replace").strip().splitlines()[:1]
        return stdout, Step("", command, "failed", f"exit {proc.returncode}: {first[0][:300] if first else ''}", took)
    if not stdout.strip():
        return "", Step("", command, "empty", "no output", took)
    return stdout, Step("", command, "ok", detail, took)


@dataclass
class EngineEnvironment:
    """What of the engines' processes is collected: their lines, the names whose values the redactor hides,
    the names withheld, and notes."""

    text: str = ""
    redacted: list[str] = field(default_factory=list)
    withheld: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _environment_table() -> tuple[tuple[str, ...], frozenset[str]]:
    """The variable families and the documented variables (knowledge/environment.yaml)."""
    data = load_file_cached(knowledge_dir() / "environment.yaml")
    documented = frozenset(n for names in data["documented"].values() for n in names)
    return tuple(data["prefixes"]), documented


def kept(pair: str, found: EngineEnvironment) -> str | None:
    """One NAME=VALUE of an engine's environment as collect writes it, or None when it is not collected."""
    name, _, value = pair.partition("=")
    prefixes, documented = _environment_table()
    if strength(name) in _HIDDEN:
        found.redacted.append(name)
        return pair  # its value is hidden by the redactor, its name stays: the ticket shows it was set
    if name in documented:
        return pair
    if not name.startswith(prefixes):
        return None
    if _SETTING.fullmatch(value):
        return pair
    found.withheld.append(name)
    return f"{name}=<withheld: not a documented setting>"


def _engines() -> EngineEnvironment:
    """Command lines and configuration environment of running vLLM or SGLang processes, from /proc."""
    found = EngineEnvironment()
    proc = Path("/proc")
    if not proc.is_dir():
        found.notes.append("no /proc on this system")
        return found
    lines: list[str] = []
    for pid_dir in sorted(proc.glob("[0-9]*"), key=lambda p: int(p.name)):
        try:
            argv = (pid_dir / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        command = " ".join(a.decode("utf-8", "replace") for a in argv if a)
        if not ENGINE.search(command) or "advisor" in command:
            continue
        found.redacted += [m.group(2) for m in FLAG.finditer(command) if strength(m.group(2)) in _HIDDEN]
        env = ""
        try:
            pairs = [p.decode("utf-8", "replace") for p in (pid_dir / "environ").read_bytes().split(b"\0") if p]
            env = " ".join(k for k in (kept(p, found) for p in pairs) if k is not None)
        except OSError:
            found.notes.append(f"pid {pid_dir.name}: environment not readable without more privileges")
        lines.append(f"{env} {command}".strip())
    found.text = "\n".join(lines) + ("\n" if lines else "")
    found.redacted = sorted(set(found.redacted))
    found.withheld = sorted(set(found.withheld))
    return found


def check_output(out: Path) -> None:
    """Refuse, with one line, an output folder that cannot be made or written: with a control character
    in its name, under /proc, /sys or /dev, under a file, with a name too long, in a read-only place, or
    a non-empty folder."""
    where = repr(str(out))[1:-1]  # a control character is shown, not written to the terminal
    if any(ord(c) < 32 or c == "\x7f" for c in str(out)) or not str(out):
        # the system refuses a NUL in a path; a line break or an escape code makes a name no shell copes with
        raise InputError("an output path may not be empty or hold control characters (such as NUL)", where=where)
    if pseudo_file(out):
        raise InputError("a kernel pseudo-file system (/proc, /sys, /dev) cannot hold a bundle", where=where)
    long = next((part for part in out.parts if len(os.fsencode(part)) > NAME_MAX), None)
    if long is not None:
        raise InputError(f"a name in the path is longer than {NAME_MAX} bytes ({len(os.fsencode(long))})", where=where)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        what = "is a file, not a folder" if not out.is_dir() else "exists and is not empty"
        raise InputError(f"the output folder {what}; choose a new one", where=where)
    above = next((p for p in out.absolute().parents if p.exists()), None)
    if above is not None and not above.is_dir():
        raise InputError(f"{above} is a file: no folder can be made under it", where=where)


def _made(out: Path) -> None:
    """The output folder, made; one line for what the system refused (read-only, no space, ...)."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".advisor-write-test"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise InputError(f"cannot write the bundle here: {exc.strerror or exc}", where=str(out)) from None


def _write(path: Path, text: str) -> None:
    """Write one file of the bundle whole or not at all; a full disk or a vanished folder is one line, not
    a traceback, and leaves no partial file."""
    try:
        write_atomic(path, text)
    except OSError as exc:
        raise InputError(f"cannot write {path.name}: {exc.strerror or exc}", where=str(path.parent)) from None


def gpus_found(step: Step, text: str) -> bool:
    """Whether `nvidia-smi topo -m` answered with a GPU matrix (random bytes or an error page do not count)."""
    return step.status == "ok" and looks_like_topo(clean(text))


@dataclass
class Gathered:
    """What the commands gave: each step, the texts to write by file name, and whether GPUs answered."""

    steps: list[Step] = field(default_factory=list)
    texts: dict[str, str] = field(default_factory=dict)
    gpus: bool = False

    def save(self, name: str, text: str, step: Step) -> None:
        """Keep one command's output (if any) under `name`, and its step."""
        step.output = name if text else ""
        if text:
            self.texts[name] = text
        self.steps.append(step)


def _gather(commands: tuple[tuple[str, list[str]], ...], limits: Limits) -> Gathered:
    """Run every command under the limits, trimming dmesg to the lines the audit reads."""
    got = Gathered()
    for name, argv in commands:
        text, step = _run(argv, limits)
        if argv[:3] == ["nvidia-smi", "topo", "-m"]:
            got.gpus = gpus_found(step, text)
            if step.status == "ok" and not got.gpus:
                step.status, step.detail = "failed", "the output is not a GPU matrix (topo -m)"
        if name == "dmesg.txt" and text:
            text = "".join(line + "\n" for line in text.splitlines() if DMESG_KEEP.search(line))
            step.detail = "kept only IOMMU, hypervisor and NVIDIA lines"
        if name == "lspci.txt" and text and "ACSCtl" not in text and os.geteuid() != 0:
            step.detail = "run as root to include ACS control lines (ACSCtl)"
        got.save(name, text, step)
    try:
        cmdline = Path("/proc/cmdline").read_text(encoding="utf-8", errors="replace")
        got.save("cmdline.txt", cmdline, Step("", "cat /proc/cmdline", "ok"))
    except OSError as exc:
        got.save("cmdline.txt", "", Step("", "cat /proc/cmdline", "failed", str(exc)))
    return got


def collect(
    out: Path,
    limits: Limits | None = None,
    commands: tuple[tuple[str, list[str]], ...] = COMMANDS,
    redact: bool = True,
) -> dict[str, object]:
    """Write the bundle into `out` (created if needed; must be empty or new) and return its manifest;
    InputError with one line when `out` cannot be made or written, `Interrupted` when a signal stopped it
    (the running tool ended first, nothing written). Every command runs under its own limit and all of
    them under one deadline (`limits`); `redact` hides host names, addresses, serials, UUIDs, user names,
    tokens and passwords (see advisor.redact)."""
    check_output(out)
    _made(out)
    limits = limits or Limits()
    limits.started = time.monotonic()
    with _signals_end_the_tools():
        got = _gather(commands, limits)
        engines = _engines()
    got.save(
        "engine-processes.txt",
        engines.text,
        Step(
            "",
            "/proc/*/cmdline and configuration environment of vllm or sglang processes",
            "ok" if engines.text else "empty",
            "; ".join(engines.notes) or ("" if engines.text else "no engine running"),
        ),
    )
    smi = next((s for s in got.steps if s.command.startswith("nvidia-smi topo -m")), Step("", "nvidia-smi", "missing"))
    manifest: dict[str, object] = {
        "schema": SCHEMA,
        "advisor_version": __version__,
        "collected_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "nvidia_gpus": got.gpus,
        "summary": "NVIDIA GPUs found" if got.gpus else f"no NVIDIA GPU evidence: {smi.detail or smi.status}",
        "redacted": redact,
        "redactions": {},
        "redacted_names": {"engine-processes.txt": engines.redacted} if redact and engines.redacted else {},
        "withheld_names": {"engine-processes.txt": engines.withheld} if engines.withheld else {},
        "steps": [asdict(s) for s in got.steps],
    }
    texts = got.texts
    if redact:
        said = {"summary": manifest["summary"], "steps": manifest["steps"]}
        texts, said, manifest["redactions"] = redacted_with_counts(texts, said, MANIFEST)
        manifest.update(said)
    for name, text in texts.items():
        _write(out / name, text)
    _write(out / MANIFEST, json.dumps(manifest, indent=2) + "\n")
    return manifest


def redacted(bundle: dict[str, Any]) -> dict[str, Any]:
    """A bundle's texts and steps through one redactor, learning from all of them before replacing any."""
    clean: dict[str, Any] = Redactor().document(bundle)
    return clean


def redacted_with_counts(
    files: dict[str, str], said: dict[str, Any], said_name: str
) -> tuple[dict[str, str], dict[str, Any], dict[str, dict[str, int]]]:
    """The files and what the manifest says (`said`, counted as `said_name`) through one redactor, and
    what it hid in each: {file: {kind: count}}, kinds as the placeholders name them (secret, host, ...).
    A placeholder the original already held is not counted; files with nothing hidden are left out."""
    redactor = Redactor()
    clean: dict[str, Any] = redactor.document({"files": files, "said": said})
    placed = set(redactor.mapping.values())
    counts: dict[str, dict[str, int]] = {}
    before = {**files, said_name: json.dumps(said)}
    after = {**clean["files"], said_name: json.dumps(clean["said"])}
    for name, text in after.items():
        kinds: dict[str, int] = {}
        for sign, where in ((1, text), (-1, before[name])):
            for m in _PLACED.finditer(where):
                if m.group(0) in placed:
                    kind = m.group(0).rsplit("-", 1)[0]
                    kinds[kind] = kinds.get(kind, 0) + sign
        kinds = {k: n for k, n in sorted(kinds.items()) if n > 0}
        if kinds:
            counts[name] = kinds
    return clean["files"], clean["said"], counts


def redaction_summary(manifest: dict[str, Any]) -> str:
    """One line for the person who ran collect: what was hidden, by kind and count per file, never a value."""
    if not manifest.get("redacted"):
        return "not redacted (--no-redact): check every file before you send the bundle"
    counts: dict[str, dict[str, int]] = manifest.get("redactions") or {}
    if not counts:
        return "redacted: nothing to hide was found"
    parts = [f"{name} ({', '.join(f'{n} {kind}' for kind, n in kinds.items())})" for name, kinds in counts.items()]
    return "redacted: " + "; ".join(parts)
