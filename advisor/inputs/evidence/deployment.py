"""deployment.yaml: the planned or running deployment (model, hardware, layout, GPUs, accepted findings)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping

from advisor.errors import AdvisorError
from advisor.inputs.evidence import Parsed
from advisor.inputs.evidence.reader import Contribution, Reader
from advisor.yamlio import loads

SETTINGS = ("model", "precision", "kv_cache_dtype", "engine")
SECTIONS = ("hardware", "workload", "deployment")


def looks_like_deployment(text: str) -> bool:
    """A YAML mapping with the deployment's own top-level keys, not a compose file or a manifest."""
    return bool(re.search(r"^(deployment|model|hardware|accept)\s*:", text, re.M)) and not re.search(
        r"^(services|apiVersion)\s*:", text, re.M
    )


def parse_deployment(text: str, file: str) -> Parsed:
    """The deployment mapping, with the line of each top-level key."""
    out = Parsed("deployment", file)
    try:
        data = loads(text, file)
    except AdvisorError as exc:
        out.notes.append(exc.one_line())
        return out
    if not isinstance(data, dict):
        out.notes.append("not a YAML mapping")
        return out
    out.data = dict(data)
    for key in SECTIONS:
        if data.get(key) is not None and not isinstance(data[key], Mapping):
            out.notes.append(f"{key}: not a mapping; ignored")
    for no, line in enumerate(text.split("\n"), 1):
        key = line.split(":")[0].strip()
        if key in ("model", "deployment", "tp", "pp", "dp", "ep", "gpus", "accept"):
            out.at(key, no, line)
    return out


def deployment_facts(parsed: Parsed) -> Iterator[Contribution]:
    """The plan's own word: its model, precision, KV cache, engine, and its hardware, workload and
    deployment sections whole (they fill the scenario first; the host's outputs only fill the gaps)."""
    for key, value in parsed.data.items():
        if key in SETTINGS:
            yield Contribution(key, value)
        elif key in SECTIONS and isinstance(value or {}, Mapping):
            yield Contribution(key, dict(value or {}))


DEPLOYMENT = Reader(
    "deployment",
    looks_like_deployment,
    parse_deployment,
    deployment_facts,
    first_only=True,
    yields=(*SETTINGS, *SECTIONS),
)
