"""Limits on a layout a user names (`--layout`, the chat's "why not tp=0"), checked before the engine.

Guarantees: `check_layout_text` refuses a number too long to be a layout before any conversion;
`check_layout` refuses a degree below 1 or past its limit (TP at most 1,024, PP at most the model's
layers, replicas and EP at most the largest cluster the advisor plans for) and EP on a dense model,
each with one line naming the limit; so the engine never divides by zero or searches an absurd space.
"""

from __future__ import annotations

import re
from typing import Any

from advisor.errors import InputError

MAX_TP = 1024
MAX_LAYOUT_GPUS = 65536  # knowledge/settings.yaml max_total_gpus, where no knowledge base is at hand
LAYOUT_NUMBER = re.compile(r"(replicas|dp|tp|pp|ep)\s*=?\s*(\d+)", re.I)
NAMES = {"dp": "replicas"}


def check_layout_text(text: str, total: int, where: str) -> None:
    """InputError when a layout text holds a degree written with more digits than any limit has."""
    for key, number in LAYOUT_NUMBER.findall(text[:1000]):
        if len(number) > len(str(total)):
            name = NAMES.get(key.lower(), key.lower())
            raise InputError(f"{name} must be from 1 to {total:,}, not a number of {len(number)} digits", where=where)


def check_layout(replicas: int, tp: int, pp: int, ep: int, model: Any, total: int, where: str) -> None:
    """InputError naming the limit when a degree of the layout is out of range for `model` (None: the
    limits that hold for every model)."""
    layers = int(((model.config or {}) if model is not None else {}).get("num_hidden_layers") or MAX_TP)
    for name, value, top, why in (
        ("tp", tp, MAX_TP, ""),
        ("pp", pp, min(layers, MAX_TP), f" (the model has {layers} layers)" if layers < MAX_TP else ""),
        ("replicas", replicas, total, ""),
        ("ep", ep, total, ""),
    ):
        if not 1 <= value <= top:
            raise InputError(f"{name} must be from 1 to {top:,}{why}, not {value:,}", where=where)
    if ep > 1 and model is not None and model.kind != "moe":
        raise InputError(
            f"ep={ep} needs a mixture-of-experts model; {model.name} is dense", where=where, hint="leave ep out"
        )
