"""The JSON Schemas (draft 2020-12) of every document the advisor writes, shipped in advisor/schemas/.

Each `schema:` id the advisor emits has one file here; shared pieces (a finding, a citation, a
figure's trace) are in common.schema.json and referenced by its `$id`, so a validator needs all of
them loaded (`all_schemas`). docs/schemas.md lists the ids and what each document holds.
"""

from __future__ import annotations

import json
from importlib.resources import files
from importlib.resources.abc import Traversable
from typing import Any

FILES = {
    "advisor.recommendation/1": "recommendation.schema.json",
    "advisor.audit/1": "audit.schema.json",
    "advisor.audit-fleet/1": "audit-fleet.schema.json",
    "advisor.sizing/1": "sizing.schema.json",
    "advisor.collect/1": "collect.schema.json",
    "advisor.transcript/1": "transcript.schema.json",
}
COMMON = "common.schema.json"


def folder() -> Traversable:
    """The folder of the schema files inside the installed package."""
    return files("advisor") / "schemas"


def _read(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((folder() / name).read_text(encoding="utf-8"))
    return data


def load(schema_id: str) -> dict[str, Any]:
    """The JSON Schema of a document's `schema:` id, e.g. 'advisor.audit/1'."""
    if schema_id not in FILES:
        raise KeyError(f"no schema for {schema_id!r}; known: {', '.join(FILES)}")
    return _read(FILES[schema_id])


def all_schemas() -> list[dict[str, Any]]:
    """Every schema, the shared pieces included: what a validator's registry needs to resolve `$ref`s."""
    return [_read(COMMON), *(_read(name) for name in FILES.values())]
