"""deployment.yaml: the planned or running deployment (model, hardware, layout, GPUs, accepted findings)."""

from __future__ import annotations

import re

from advisor.errors import AdvisorError
from advisor.inputs.evidence import Parsed
from advisor.yamlio import loads


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
    for no, line in enumerate(text.split("\n"), 1):
        key = line.split(":")[0].strip()
        if key in ("model", "deployment", "tp", "pp", "dp", "ep", "gpus", "accept"):
            out.at(key, no, line)
    return out
