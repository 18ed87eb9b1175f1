"""deployment.yaml: the planned or running deployment (model, hardware, layout, GPUs, accepted findings).

Guarantees: a file the reader recognises is checked against one typed record (DEPLOYMENT_SHAPE); a
value of the wrong type or beyond its limit raises InputError naming the file and the value's path
("deployment.tp: expected an integer from 1 to 1,024, got 'abc'"), so the audit stops with one line
instead of auditing a wrong plan. `hardware:` and `workload:` must be mappings; their fields are read
by the scenario's own parsers, and a bad one is noted and left for the audit's "cannot evaluate the
deployment" (the host checks still run). An unknown top-level key is kept out and noted.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from advisor.errors import AdvisorError, InputError
from advisor.fuzzy import closest
from advisor.inputs.evidence import Parsed
from advisor.inputs.evidence.reader import ALL_RANKS, Contribution, Reader
from advisor.inputs.fields import field_table
from advisor.inputs.shape import Day, Either, Int, Items, Record, Str
from advisor.yamlio import loads

SETTINGS = ("model", "precision", "kv_cache_dtype", "engine")
SECTIONS = ("hardware", "workload", "deployment")
MAX_GPUS = 65536  # knowledge/settings.yaml max_total_gpus
LAYOUT_SHAPE = Record(
    {
        "engine": Str(64),
        "tp": Int(1, 1024),
        "pp": Int(1, 1024),
        "dp": Int(1, MAX_GPUS),
        "ep": Either((ALL_RANKS,), Int(1, MAX_GPUS)),
        "gpus": Items(Int(0, 1023, what="a GPU index"), 1024, unique=True),
    },
    what="a mapping",
)
ACCEPT_SHAPE = Items(Record({"rule": Str(128), "reason": Str(2000), "expires": Day()}, required=("rule",)), 256)
DEPLOYMENT_SHAPE = Record(
    {
        "model": Str(1024),
        "precision": Str(64),
        "kv_cache_dtype": Str(64),
        "engine": Str(64),
        "deployment": LAYOUT_SHAPE,
        "accept": ACCEPT_SHAPE,
    },
    open=True,
)


def _section(section: str, value: Any, file: str, notes: list[str]) -> dict[str, Any]:
    """A `hardware:` or `workload:` section checked by the scenario's own field parsers: a good value
    in its parsed form (gpus_per_node: "8" is 8); a bad one noted and kept as written, so that the
    audit says "cannot evaluate the deployment" with the same message and still runs the host checks."""
    from advisor.inputs.scenario import parser_of

    if not isinstance(value, Mapping):
        raise InputError(f"{section}: expected a mapping of fields, got {type(value).__name__}", where=file)
    by_key = {f.key: f for f in field_table().fields if f.section == section}
    out = dict(value)
    for key, item in value.items():
        field = by_key.get(str(key))
        if field is None:
            hint = closest(str(key)[:64], list(by_key))
            notes.append(f"unknown field '{section}.{str(key)[:60]}'" + (f" ({hint})" if hint else ""))
        elif item is not None:
            try:
                out[key] = parser_of(field)(item, f"{section}.{key}")
            except InputError as exc:
                notes.append(exc.one_line())
    return out


def checked(data: Mapping[str, Any], file: str) -> tuple[dict[str, Any], list[str]]:
    """The deployment mapping checked against its record, and a note per unknown top-level key."""
    notes: list[str] = []
    try:
        out = DEPLOYMENT_SHAPE.check(data, "", file)
        for section in ("hardware", "workload"):
            if data.get(section) is not None:
                out[section] = _section(section, data[section], file, notes)
    except InputError as exc:
        if exc.where == file or exc.where is None:
            raise InputError(exc.message, where=file, hint=exc.hint) from None
        raise InputError(f"{exc.where}: {exc.message}", where=file, hint=exc.hint) from None
    known = {*DEPLOYMENT_SHAPE.fields, "hardware", "workload"}
    for key in [k for k in out if k not in known]:
        hint = closest(str(key), sorted(known))
        notes.append(f"unknown key {str(key)[:60]!r} ignored" + (f" ({hint})" if hint else ""))
        del out[key]
    return out, notes


def looks_like_deployment(text: str) -> bool:
    """A YAML mapping with the deployment's own top-level keys, not a compose file or a manifest."""
    return bool(re.search(r"^(deployment|model|hardware|accept)[ \t]*:", text, re.M)) and not re.search(
        r"^(services|apiVersion)[ \t]*:", text, re.M
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
    out.data, notes = checked(data, file)
    out.notes += notes
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
