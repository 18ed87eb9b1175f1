"""The evidence readers, and reading files: what each file is, by its content, and what it holds.

Guarantees: a file no reader knows, or one a reader fails on, gets a note, never an error; every
reader is one line of READERS (its kind, how it recognises a text, how it parses it).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from advisor.inputs.evidence import MAX_TEXT, InputFile, Parsed
from advisor.inputs.evidence import deployment, kernel, launch, manifest, nccl, smi, topo

SKIP_NAMES = {".git", "__pycache__", ".venv"}

READERS: tuple[tuple[str, Any, Any], ...] = (
    ("collect-manifest", manifest.looks_like_manifest, manifest.parse_manifest),
    ("deployment", deployment.looks_like_deployment, deployment.parse_deployment),
    ("nvidia-smi-topo", topo.looks_like_topo, topo.parse_topo),
    ("nvidia-smi-p2p", topo.looks_like_p2p, topo.parse_p2p),
    ("nvidia-smi-q", smi.looks_like_query, smi.parse_query),
    ("nvidia-smi-csv", smi.looks_like_csv, smi.parse_csv),
    ("nvidia-smi-nvlink", smi.looks_like_nvlink, smi.parse_nvlink),
    ("cmdline", kernel.looks_like_cmdline, kernel.parse_cmdline),
    ("dmesg", kernel.looks_like_dmesg, kernel.parse_dmesg),
    ("lspci", kernel.looks_like_lspci, kernel.parse_lspci),
    ("launch", launch.looks_like_launch, launch.parse_launch),
    ("nccl-tests", nccl.looks_like_allreduce, nccl.parse_allreduce),
    ("p2p-bandwidth-test", nccl.looks_like_p2p_test, nccl.parse_p2p_test),
    ("engine-log", nccl.looks_like_log, nccl.parse_log),
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
        note.append(f"larger than {MAX_TEXT // (1024 * 1024)} MiB: only the first {MAX_TEXT // (1024 * 1024)} MiB were read")
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
            files += sorted(
                f for f in p.rglob("*") if f.is_file() and not any(part in SKIP_NAMES for part in f.parts)
            )
        else:
            files.append(p)
    return files


def parse_files(paths: Iterable[Path]) -> tuple[list[InputFile], list[Parsed]]:
    """Recognise and parse every file; a file no reader knows gets a note, never an error."""
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
        for kind, detect, parse in READERS:
            try:
                if not detect(text):
                    continue
                result = parse(text, str(path))
            except (ValueError, KeyError, IndexError, TypeError, RecursionError) as exc:
                item.notes.append(f"{kind}: could not be read ({type(exc).__name__}: {exc})")
                continue
            item.notes += [f"{kind}: {n}" for n in result.notes]
            if result.data:
                item.kinds.append(kind)
                parsed.append(result)
        if not item.kinds and not any("skipped" in n or "empty" in n for n in item.notes):
            item.notes.append("not recognised as any known output")
    return inputs, parsed
