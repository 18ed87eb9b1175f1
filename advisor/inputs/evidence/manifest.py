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
    for step in data.get("steps", []):
        if step.get("status") not in ("ok",):
            out.notes.append(f"{step.get('command')}: {step.get('status')} ({step.get('detail')})")
    out.data = {
        "nvidia_gpus": data.get("nvidia_gpus"),
        "summary": data.get("summary"),
        "steps": len(data.get("steps", [])),
    }
    return out


def manifest_facts(parsed: Parsed) -> Iterator[Contribution]:
    """None: the manifest speaks of the collection, not of the host (the audit reports it as a problem)."""
    yield from ()


MANIFEST = Reader("collect-manifest", looks_like_manifest, parse_manifest, manifest_facts, yields=())
