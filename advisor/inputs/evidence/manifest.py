"""manifest.json of `advisor collect`: which commands were missing or failed on the host, and which
folders are host bundles (each holds the manifest collect wrote), so that a folder of several hosts is
never read as one host."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from advisor.files import FileProblem, read_limited
from advisor.inputs.evidence import Parsed
from advisor.inputs.evidence.reader import Contribution, Reader

SCHEMA = "advisor.collect/1"
NAME = "manifest.json"  # what collect names it
HEAD = 4096  # the schema line is the manifest's second line: no need to read a large file to know it


def looks_like_manifest(text: str) -> bool:
    """The manifest.json that `advisor collect` writes."""
    return f'"schema": "{SCHEMA}"' in text


def is_bundle(folder: Path) -> bool:
    """Whether `folder` holds, at its top, the manifest `advisor collect` writes (a host bundle)."""
    try:
        head = read_limited(folder / NAME, HEAD).data.decode("utf-8", errors="replace")
    except (FileProblem, OSError):
        return False
    return looks_like_manifest(head)


def host_bundles(folder: Path) -> list[Path]:
    """The host bundles directly inside `folder` (its sub-folders holding a collect manifest), by name;
    none when `folder` is itself a bundle (its sub-folders are then part of that one host)."""
    if not folder.is_dir() or is_bundle(folder):
        return []
    try:
        inner = sorted(p for p in folder.iterdir() if p.is_dir() and not p.is_symlink())
    except OSError:
        return []
    return [p for p in inner if is_bundle(p)]


def parse_manifest(text: str, file: str) -> Parsed:
    """The collect manifest: which commands were missing or failed, as notes for the audit report."""
    out = Parsed("collect-manifest", file)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        out.notes.append(f"unreadable manifest: {exc}")
        return out
    if not isinstance(data, dict):
        out.notes.append(f"not a manifest: a JSON {type(data).__name__}, not an object")
        return out
    steps = data.get("steps")
    if not isinstance(steps, list):
        out.notes.append("steps: not a list; ignored")
        steps = []
    for step in steps:
        if not isinstance(step, dict):
            out.notes.append(f"steps: an entry is a {type(step).__name__}, not an object; ignored")
        elif step.get("status") != "ok":
            out.notes.append(f"{step.get('command')}: {step.get('status')} ({step.get('detail')})")
    gpus = data.get("nvidia_gpus")
    for lineno, line in enumerate(text.split("\n")[:200], 1):  # collect writes the summary near the top
        if '"summary"' in line:
            out.at("summary", lineno, line)
            break
    out.data = {
        "nvidia_gpus": gpus if isinstance(gpus, bool) else None,
        "summary": str(data.get("summary"))[:300],
        "steps": len(steps),
    }
    return out


def manifest_facts(parsed: Parsed) -> Iterator[Contribution]:
    """None: the manifest speaks of the collection, not of the host (the audit reports it as a problem)."""
    yield from ()


MANIFEST = Reader("collect-manifest", looks_like_manifest, parse_manifest, manifest_facts, yields=())
