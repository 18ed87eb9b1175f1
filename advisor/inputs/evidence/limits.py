"""A process's resource limits: `/proc/PID/limits` and the shell's `ulimit -a` (or `ulimit -l` alone).

The kernel prints /proc/PID/limits from lnames[] in fs/proc/base.c (proc_pid_limits): a header
"Limit  Soft Limit  Hard Limit  Units", then one line per limit, "Max locked memory  65536  65536
bytes", a value being a number or "unlimited". bash's ulimit builtin prints "max locked memory
(kbytes, -l) 64" for -a and the bare value for one limit. The locked-memory limit (RLIMIT_MEMLOCK)
is what RDMA verbs, NCCL's InfiniBand transport and MPI pin their queues and buffers under; a daemon
(slurmd, a container runtime) passes its own to every job it starts.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from advisor.inputs.evidence import Parsed, clean
from advisor.inputs.evidence.reader import Contribution, Reader, fact

PROC_HEADER = re.compile(r"^Limit[ \t]{2,40}Soft Limit[ \t]{2,40}Hard Limit[ \t]{2,40}Units")
PROC_MEMLOCK = re.compile(r"^Max locked memory[ \t]{1,40}([0-9]{1,20}|unlimited)[ \t]{1,40}([0-9]{1,20}|unlimited)")
SHELL_MEMLOCK = re.compile(r"^max locked memory[ \t]{1,40}\(kbytes, -l\)[ \t]{1,40}([0-9]{1,20}|unlimited)[ \t]*$")
ULIMIT_L = re.compile(r"(?:^|[$#>][ \t]{0,4})ulimit[ \t]{1,8}-[a-zA-Z]{0,4}l[a-zA-Z]{0,4}[ \t]*$")
VALUE = re.compile(r"^[ \t]{0,8}([0-9]{1,20}|unlimited)[ \t]*$")


def looks_like_limits(text: str) -> bool:
    """/proc/PID/limits, `ulimit -a`, or a `ulimit -l` prompt line with its value."""
    if "locked memory" not in text and "ulimit" not in text:
        return False
    lines = clean(text).split("\n")
    if any(PROC_MEMLOCK.match(line) or SHELL_MEMLOCK.match(line) for line in lines):
        return True
    return any(ULIMIT_L.search(a) and VALUE.match(b) for a, b in zip(lines, lines[1:], strict=False))


def _kib(value: str, unit_bytes: int) -> float | None:
    return None if value == "unlimited" else int(value) * unit_bytes / 1024


def parse_limits(text: str, file: str) -> Parsed:
    """The soft locked-memory limit (KiB; None for unlimited) and the line that shows it."""
    out = Parsed("limits", file)
    lines = clean(text).split("\n")
    soft: float | None = None
    found = False
    for no, line in enumerate(lines, 1):
        if PROC_HEADER.match(line):
            out.at("header", no, line)
        if m := PROC_MEMLOCK.match(line):
            soft = _kib(m.group(1), 1)
        elif m := SHELL_MEMLOCK.match(line):
            soft = _kib(m.group(1), 1024)
        elif no > 1 and ULIMIT_L.search(lines[no - 2]) and (v := VALUE.match(line)):
            soft = _kib(v.group(1), 1024)
        else:
            continue
        found = True
        out.at("memlock", no, line)
    if not found:
        out.notes.append("no locked-memory limit found")
        return out
    out.data = {"memlock_kib": soft}
    return out


def limits_facts(parsed: Parsed) -> Iterator[Contribution]:
    """Whether the soft locked-memory limit is unlimited, and where not, its size in KiB."""
    if "memlock_kib" not in parsed.data:
        return
    kib, ev = parsed.data["memlock_kib"], parsed.evidence.get("memlock")
    yield fact("memlock_unlimited", kib is None, ev)
    if kib is not None:
        yield fact("memlock_limit_kib", kib, ev)


LIMITS = Reader(
    "limits",
    looks_like_limits,
    parse_limits,
    limits_facts,
    yields=("fact:memlock_unlimited", "fact:memlock_limit_kib"),
)
