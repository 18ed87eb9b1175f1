"""The evidence readers, and reading files: what each file is, by its content, and what it holds.

Guarantees: a file no reader knows, or one a reader fails on, gets a note, never an error; every
reader is one `Reader` declaration in its own module and one line of READERS (see reader.py). The
order of READERS is the audit's precedence: where two readers contribute to the same target, the
earlier one wins (the plan first), after which come the contributions a reader marks `fallback`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from advisor.inputs.evidence import (
    MAX_TEXT,
    InputFile,
    Parsed,
    deployment,
    kernel,
    launch,
    manifest,
    nccl,
    smi,
    topo,
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
    kernel.CMDLINE,
    kernel.DMESG,
    kernel.LSPCI,
    launch.LAUNCH,
    nccl.ALLREDUCE,
    nccl.P2P_TEST,
    nccl.LOG,
)


def read_text(path: Path, note: list[str]) -> str | None:
    """A file's text, or None with a note when it is empty, binary or too large."""
    try:
        size = path.stat().st_size
        if size == 0:
            note.append("empty file")
            return None
        with path.open("rb") as fh:
            raw = fh.read(MAX_TEXT + 1)
    except OSError as exc:
        note.append(f"cannot read: {exc.strerror or exc}")
        return None
    if len(raw) > MAX_TEXT:
        note.append(
            f"larger than {MAX_TEXT // (1024 * 1024)} MiB: only the first {MAX_TEXT // (1024 * 1024)} MiB were read"
        )
        raw = raw[:MAX_TEXT]
    head = raw[:8192]
    if b"\x00" in head:
        note.append("binary data, not a text output; skipped")
        return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("utf-8", errors="replace")
        if text.count("\ufffd") > len(text) // 10:
            note.append("not a text file (undecodable bytes); skipped")
            return None
        note.append("not valid UTF-8; read with replacement characters")
        return text


def collect_files(paths: Iterable[Path]) -> list[Path]:
    """Files named, and the files inside folders named, in a stable order."""
    files: list[Path] = []
    for p in paths:
        if p.is_dir():
            files += sorted(f for f in p.rglob("*") if f.is_file() and not any(part in SKIP_NAMES for part in f.parts))
        else:
            files.append(p)
    return files


def parse_files(paths: Iterable[Path], readers: Sequence[Reader] = READERS) -> tuple[list[InputFile], list[Parsed]]:
    """Recognise and parse every file with `readers`; a file no reader knows gets a note, never an error."""
    inputs: list[InputFile] = []
    parsed: list[Parsed] = []
    for path in collect_files(paths):
        item = InputFile(str(path))
        inputs.append(item)
        if not path.exists():
            item.notes.append("no such file")
            continue
        text = read_text(path, item.notes)
        if text is None:
            continue
        for reader in readers:
            try:
                if not reader.recognise(text):
                    continue
                result = reader.parse(text, str(path))
            except (ValueError, KeyError, IndexError, TypeError, RecursionError) as exc:
                item.notes.append(f"{reader.kind}: could not be read ({type(exc).__name__}: {exc})")
                continue
            item.notes += [f"{reader.kind}: {n}" for n in result.notes]
            if result.data:
                item.kinds.append(reader.kind)
                parsed.append(result)
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
