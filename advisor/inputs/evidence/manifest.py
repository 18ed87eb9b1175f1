"""manifest.json of `advisor collect`: which commands were missing or failed on the host."""

from __future__ import annotations

import json
from collections.abc import Iterator

from advisor.inputs.evidence import Parsed
from advisor.inputs.evidence.reader import Contribution, Reader

SCHEMA = "advisor.collect/1"


def looks_like_manifest(text: str) -> bool:
    """The manifest.json that `advisor collect` writes."""
    return f'"schema": "{SCHEMA}"' in text


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
