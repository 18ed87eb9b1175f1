"""Limits on a layout a user names (`--layout`, the chat's "why not tp=0"), checked before the engine.

Guarantees: `check_layout_text` refuses a number too long to be a layout before any conversion, and
`check_layout_shape` a text that is more than degrees (`tp=4,pp=2`, `TP4xPP2`): a sign, a fraction, an
unknown key, a key given twice or anything else left over is named, never read as a nearby number;
`check_layout` refuses a degree below 1 or past its limit (TP at most 1,024, PP at most the model's
layers, replicas and EP at most the largest cluster the advisor plans for, EP at most the model's
experts) and EP on a dense model,
each with one line naming the limit; so the engine never divides by zero or searches an absurd space.
"""

from __future__ import annotations

import re
from typing import Any

from advisor.errors import InputError

MAX_TP = 1024
MAX_LAYOUT_GPUS = 65536  # knowledge/settings.yaml max_total_gpus, where no knowledge base is at hand
LAYOUT_NUMBER = re.compile(r"(replicas|dp|tp|pp|ep)[ \t]{0,64}(?:=[ \t]{0,64})?(\d{1,1000})", re.I)
NAMES = {"dp": "replicas"}
# one degree as a user writes it: a key, then `=` or nothing, then what should be a number (ASCII digits)
LAYOUT_ITEM = re.compile(r"(replicas|dp|tp|pp|ep)\s*(?:=\s*)?([^\s,;x×*]*)", re.I)
LAYOUT_SEPARATOR = re.compile(r"[\s,;x×*]*")


def check_layout_text(text: str, total: int, where: str) -> None:
    """InputError when a layout text holds a degree written with more digits than any limit has."""
    for key, number in LAYOUT_NUMBER.findall(text[:1000]):
        if len(number) > len(str(total)):
            name = NAMES.get(key.lower(), key.lower())
            raise InputError(f"{name} must be from 1 to {total:,}, not a number of {len(number)} digits", where=where)


def check_layout_shape(text: str, where: str) -> None:
    """InputError naming what is wrong when a layout text is not a list of degrees such as tp=4,pp=2."""
    hint = "write it like tp=4,pp=2 or replicas=2,tp=2"
    at, seen = LAYOUT_SEPARATOR.match(text).end(), set()  # type: ignore[union-attr]
    while at < len(text):
        item = LAYOUT_ITEM.match(text, at)
        if item is None:
            rest = text[at : at + 40]
            raise InputError(
                f"cannot read layout {text[:60]!r}: {rest!r} is not one of replicas, tp, pp, ep", where=where, hint=hint
            )
        key, number = NAMES.get(item.group(1).lower(), item.group(1).lower()), item.group(2)
        if not re.fullmatch(r"[0-9]+", number):
            what = "a whole number of 1 or more" if re.fullmatch(r"[+-]?[0-9.,eE]+", number) else "a number"
            raise InputError(f"{key} must be {what}, not {number[:40]!r}", where=where, hint=hint)
        if key in seen:
            raise InputError(f"{key} is given twice in layout {text[:60]!r}", where=where, hint=hint)
        seen.add(key)
        at = LAYOUT_SEPARATOR.match(text, item.end()).end()  # type: ignore[union-attr]


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
    config = (model.config or {}) if model is not None else {}
    experts = config.get("num_experts") or config.get("num_local_experts") or config.get("n_routed_experts")
    if isinstance(experts, int) and ep > experts:
        raise InputError(
            f"ep must be from 1 to {experts:,} (the model has {experts:,} experts), not {ep:,}", where=where
        )
