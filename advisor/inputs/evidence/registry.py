"""The evidence readers, and reading files: what each file is, by its content, and what it holds.

Guarantees: a file no reader knows, or one a reader fails on, gets a note, never an error; every
reader is one `Reader` declaration in its own module and one line of READERS (see reader.py). The
order of READERS is the audit's precedence: where two readers contribute to the same target, the
earlier one wins (the plan first), after which come the contributions a reader marks `fallback`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from advisor.files import FileProblem, decode, not_regular, read_limited
from advisor.inputs.evidence import (
    MAX_TEXT,
    InputFile,
    Parsed,
    clean,
    container,
    deployment,
    engineargs,
    environment,
    failures,
    ibstat,
    kernel,
    launch,
    limits,
    manifest,
    nccl,
    nvbandwidth,
    ollama,
    ray,
    rdma,
    report,
    smi,
    smitable,
    toolkit,
    topo,
    unquoted,
)
from advisor.inputs.evidence.reader import Contribution, Reader

SKIP_NAMES = {".git", "__pycache__", ".venv"}

READERS: tuple[Reader, ...] = (
    manifest.MANIFEST,
    deployment.DEPLOYMENT,
    topo.TOPO,
    topo.P2P,
    smi.QUERY,
    smi.CSV,
    smi.NVLINK,
    smitable.TABLE,
    smitable.LISTING,
    report.REPORT,
    ollama.OLLAMA,
    kernel.CMDLINE,
    kernel.DMESG,
    kernel.LSPCI,
    launch.LAUNCH,
    engineargs.ARGS,
    environment.ENVIRONMENT,
    environment.LAUNCHER_ENV,
    container.CONTAINER,
    nccl.ALLREDUCE,
    nccl.P2P_TEST,
    nvbandwidth.NVBANDWIDTH,
    ibstat.IBSTAT,
    toolkit.NVCC,
    ray.RAY_STATUS,
    rdma.SHOW_GIDS,
    rdma.DEVINFO,
    rdma.IBDEV2NETDEV,
    limits.LIMITS,
    nccl.LOG,
    failures.FAILURES,
)


def read_text(path: Path, note: list[str]) -> str | None:
    """A file's text, or None with a note when it is empty, binary, not a regular file or unreadable;
    at most MAX_TEXT bytes are read (advisor.files), with ANSI colours, CR line ends and NULs cleaned."""
    try:
        got = read_limited(path, MAX_TEXT)
    except FileProblem as exc:
        note.append(str(exc))
        return None
    note += got.notes
    if not got.data:
        note.append("empty file")
        return None
    text, notes = decode(got.data)
    note += notes
    if text is None:
        return None
    text = clean(text)
    plain = unquoted(text)
    if plain is None:
        return text
    note.append("read as a quoted paste: one '>' taken off each line")
    return plain


def advisor_output(text: str) -> str | None:
    """Why a file is a report (this advisor's or another tool's SARIF), not evidence; None for evidence.
    A report saved into a bundle quotes the findings it judged, so reading it back would judge them twice."""
    head = text[:4096]
    if re.search(r'"\$schema"[ \t]*:[ \t]*"[^"\n]{0,300}sarif', head, re.I) or (
        re.search(r'"version"[ \t]*:[ \t]*"2\.1\.0"', head) and re.search(r'"runs"[ \t]*:', head)
    ):
        return "a SARIF report, not host evidence; skipped"
    found = re.search(r'"schema"[ \t]*:[ \t]*"(advisor\.[a-z-]{1,40}/\d{1,4})"', head)
    if found and found.group(1) != f"{manifest.SCHEMA}":
        return f"an advisor report ({found.group(1)}), not host evidence; skipped"
    first = next((line for line in head.split("\n") if line.strip()), "")
    if re.match(r"^(?:# )?Audit: [^\n×]{1,80} × [^\n]{1,200}$", first):
        return "an advisor audit report, not host evidence; skipped"
    return None


@dataclass
class Entry:
    """A file the walk found, or a file or folder it could not use (with the reason)."""

    path: Path
    problem: str | None = None


def walk(paths: Iterable[Path]) -> list[Entry]:
    """Files named, and the regular files inside folders named, in a stable order; a folder that cannot
    be listed, and anything that is not a regular file, becomes an entry with its problem (never skipped)."""
    entries: list[Entry] = []
    for p in paths:
        if not p.is_dir():
            entries.append(Entry(p))
            continue
        found: list[Entry] = []

        def unreadable(exc: OSError, found: list[Entry] = found, top: Path = p) -> None:
            where = Path(exc.filename) if exc.filename else top
            found.append(Entry(where, f"folder cannot be read: {exc.strerror or exc}"))

        for root, dirs, names in os.walk(p, onerror=unreadable):  # symlinked folders are not followed: no loops
            dirs[:] = sorted(d for d in dirs if d not in SKIP_NAMES)
            for name in names:
                f = Path(root) / name
                try:
                    kind = not_regular(f.stat().st_mode)
                except OSError as exc:  # removed while listed, or a dangling link
                    found.append(Entry(f, f"cannot read: {exc.strerror or exc}"))
                    continue
                found.append(Entry(f, f"{kind}, not a regular file; not read" if kind else None))
        entries += sorted(found, key=lambda e: str(e.path))
    return entries


def collect_files(paths: Iterable[Path]) -> list[Path]:
    """Files named, and the regular files inside folders named, in a stable order."""
    return [e.path for e in walk(paths) if e.problem is None]


def parse_files(paths: Iterable[Path], readers: Sequence[Reader] = READERS) -> tuple[list[InputFile], list[Parsed]]:
    """Recognise and parse every file with `readers`; a file no reader knows gets a note, never an error,
    and a file or folder that could not be read is named in its `problems`."""
    inputs: list[InputFile] = []
    parsed: list[Parsed] = []
    for entry in walk(paths):
        path = entry.path
        item = InputFile(str(path))
        inputs.append(item)
        if entry.problem:
            item.notes.append(entry.problem)
            item.problems.append(entry.problem)
            continue
        if not path.exists() and not path.is_symlink():
            item.notes.append("no such file")
            item.problems.append("no such file")
            continue
        lost: list[str] = []
        text = read_text(path, lost)
        item.notes += lost
        item.problems += [n for n in lost if not n.startswith(("empty", "read as", "changed", "not valid"))]
        if text is None:
            continue
        skip = advisor_output(text)
        if skip:
            item.notes.append(skip)
            continue
        unread: list[str] = []  # readers that knew the file's kind but read nothing from it
        for reader in readers:
            try:
                if not reader.recognise(text):
                    continue
                result = reader.parse(text, str(path))
                if result.data:
                    list(reader.facts(result))  # what the audit will take: a reader that fails here fails now
            # a reader that fails on a hostile file costs that file, never the audit (see the module doc)
            except Exception as exc:
                problem = f"{reader.kind}: could not be read ({type(exc).__name__}: {str(exc)[:200]})"
                item.notes.append(problem)
                item.problems.append(problem)
                continue
            item.notes += [f"{reader.kind}: {n}" for n in result.notes]
            if result.data:
                item.kinds.append(reader.kind)
                parsed.append(result)
            else:
                unread.append(f"{reader.kind}: " + ("; ".join(result.notes[:3]) or "nothing could be read"))
        if not item.kinds and unread and not item.problems:
            item.problems.append("looks like " + " / ".join(unread))
        if not item.kinds and not any("skipped" in n or "empty" in n for n in item.notes):
            item.notes.append("not recognised as any known output")
    return inputs, parsed


def contributions(parsed: Sequence[Parsed], readers: Sequence[Reader] = READERS) -> Iterator[Contribution]:
    """What the parsed files contribute, in precedence order: readers in registry order, files in the
    order given, fallbacks last; a `first_only` reader stops at its first file that contributes anything."""
    fallbacks: list[Contribution] = []
    for reader in readers:
        for p in parsed:
            if p.kind != reader.kind:
                continue
            found = list(reader.facts(p))
            yield from (c for c in found if not c.fallback)
            fallbacks += [c for c in found if c.fallback]
            if found and reader.first_only:
                break
    yield from fallbacks
