"""Failure signatures: the line patterns of knowledge/failures.yaml, checked to run in linear time.

A signature is a regular expression that must start with a literal word (at least four letters or
digits, so a search skips ahead to it), may use only bounded repeats (`{m,n}`, `?`; never `*` or `+`)
of single characters or classes, never `.` or `\\s` (which would run over a line end), and no group
that repeats. Each match attempt then costs at most the pattern's bounded length, and a search over
a file is linear in its size; the audit reads at most one match per line (see `matching_lines`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

MAX_REPEAT = 400
_LEAD = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_ :/'-]{3}")
_UNBOUNDED = re.compile(r"(?<!\\)(?:\\\\)*[*+]")
_CLASS = re.compile(r"\[(?:\\.|[^\]\\\n]){0,200}\]")
_UNESCAPED_DOT = re.compile(r"(?<!\\)(?:\\\\)*\.")
_BOUND = re.compile(r"\{(\d{1,4})?,?(\d{1,4})?\}")


def problem(pattern: str) -> str | None:
    """Why a pattern could run in more than linear time, or None if it cannot."""
    if not _LEAD.match(pattern):
        return "must start with a literal word of at least four characters"
    if _UNBOUNDED.search(pattern):
        return "uses an unbounded repeat (* or +); use {m,n}"
    outside = _CLASS.sub("", pattern)  # '.' inside a class [...] is a plain dot
    if _UNESCAPED_DOT.search(outside):
        return "uses '.', which runs over line ends; use [^\\n]"
    if re.search(r"(?<!\\)(?:\\\\)*\\[sS]", pattern):
        return "uses \\s or \\S, which run over line ends; use a space or [^\\n ]"
    if re.search(r"\)\s*(?:[?*+]|\{)", pattern):
        return "repeats a group; repeat single characters or classes only"
    for m in _BOUND.finditer(pattern):
        high = m.group(2) or m.group(1)
        if high is None or int(high) > MAX_REPEAT:
            return f"repeat {m.group(0)} is not bounded by {MAX_REPEAT}"
    try:
        re.compile(pattern)
    except re.error as exc:
        return f"is not a regular expression: {exc}"
    return None


def compiled(patterns: tuple[str, ...]) -> re.Pattern[str]:
    """The patterns as one expression (any of them); each must have passed `problem`."""
    return re.compile("|".join(f"(?:{p})" for p in patterns))


def matching_lines(pattern: re.Pattern[str], text: str) -> Iterator[tuple[int, str, int]]:
    """Each line where `pattern` matches, as (1-based number, text, column of the match): one search per
    matching line at most, resumed after the line it matched on, so a line of a million matches costs one."""
    at, line, pos = 0, 1, 0
    while True:
        m = pattern.search(text, pos)
        if m is None:
            return
        line += text.count("\n", at, m.start())
        start = text.rfind("\n", 0, m.start()) + 1
        end = text.find("\n", m.end())
        yield line, text[start : end if end >= 0 else len(text)], m.start() - start
        if end < 0:
            return
        at, pos, line = end + 1, end + 1, line + 1
