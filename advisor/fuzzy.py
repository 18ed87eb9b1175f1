"""Closest-name suggestions for "did you mean ...", shared by every error message."""

from __future__ import annotations

from collections.abc import Iterable


def closest(name: str, choices: Iterable[str], limit: int = 3) -> str | None:
    """A hint naming up to `limit` choices closest to `name`, or None when nothing is close."""
    from rapidfuzz import fuzz, process, utils

    pool = list(choices)
    if not pool:
        return None
    found = process.extract(
        name, pool, scorer=fuzz.WRatio, processor=utils.default_process, limit=limit, score_cutoff=60
    )
    if not found:
        return None
    return "did you mean " + ", ".join(repr(match) for match, _score, _idx in found) + "?"
