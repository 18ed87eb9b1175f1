"""Failure signatures: the line patterns of knowledge/failures.yaml, checked to run in linear time.

A signature is a regular expression that must start with a literal word (at least four letters or
digits, so a search skips ahead to it), may use only bounded repeats (`{m,n}`, `?`; never `*` or `+`)
of single characters or classes, never `.` or `\\s` (which would run over a line end), and no group
that repeats. Each match attempt then costs at most the pattern's bounded length, and a search over
a file is linear in its size; the audit reads at most one match per line (see `matching_lines`).

A message of knowledge/messages.yaml becomes such a pattern by `from_format`: its format string's literal
pieces are kept, its conversions (printf's %d, %s, %zu, ...; Python's {expr} and %(name)s) become bounded
gaps of anything but a line end. Every pattern has an `anchor`, a literal text each match contains, which
a search finds first (str.find) before it tries the pattern on that line alone.
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


# printf conversions (C: %d, %-8s, %.*s, %zu, %llx, %p, glibc's %m; Python: %(name)s; Go: %v, %+v, %q, %w,
# %T) and Python format fields ({x}, {x!r:>8})
_CONVERSION = re.compile(
    r"%(?:\([A-Za-z_]{1,40}\))?[-+ #0']{0,4}(?:[0-9]{1,3}|\*)?(?:\.(?:[0-9]{1,3}|\*))?"
    r"(?:hh|h|ll|l|L|q|j|z|t|I64|I32|PRI[a-z0-9]{1,6})?[diouxXeEfFgGaAcsSpnrvqwTm]"
    r"|\{[^{}\n]{0,120}\}"
)
_REGEX_META = frozenset("\\.^$*+?{}[]|()")
NUMBER_CONVERSIONS = frozenset("diouxXeEfFgGaAcp")
GAP_NUMBER = 40  # a number, a pointer or one character printed for a conversion
GAP_TEXT = 200  # a string printed for %s or {expr}
MIN_LITERAL = 12  # literal characters a message's pattern must hold to say something of its own
PREFIX_LITERAL = 48  # literal characters after which a message's pattern stops: a cut line still matches


def _escaped(text: str) -> str:
    return "".join("\\" + c if c in _REGEX_META else c for c in text)


def literal_pieces(fmt: str) -> list[tuple[str, str]]:
    """The format as (literal text, conversion after it) pairs; '%%', '{{' and '}}' are literal."""
    out: list[tuple[str, str]] = []
    at = 0
    for m in _CONVERSION.finditer(fmt.replace("%%", "\0").replace("{{", "\1").replace("}}", "\2")):
        out.append((fmt_literal(fmt, at, m.start()), m.group(0)))
        at = m.end()
    out.append((fmt_literal(fmt, at, len(fmt)), ""))
    return out


def fmt_literal(fmt: str, start: int, end: int) -> str:
    """The literal text of fmt[start:end] with the doubled '%%', '{{', '}}' made single."""
    masked = fmt.replace("%%", "\0").replace("{{", "\1").replace("}}", "\2")
    return masked[start:end].replace("\0", "%").replace("\1", "{").replace("\2", "}")


def from_format(fmt: str, shows: int = 0) -> str | None:
    """A line pattern for a message's format string, or None where it holds fewer than MIN_LITERAL literal
    characters (it would match too much). It starts at the first literal word of four characters, joins
    the literal pieces by gaps, and stops once it holds PREFIX_LITERAL literal characters (a line cut
    short still matches), at two conversions in a row (nothing marks where one ends), or before a second
    free-text gap. A number's gap cannot hold the character after it, so it ends in one place; the one
    free-text gap may end in many, which bounds each try at GAP_TEXT times the rest of the pattern.
    `shows` (1 = the first): the line of a message printed over several lines that the pattern reads,
    where its first line is the first line of other messages too."""
    if shows:
        lines = fmt.splitlines()
        return _line_pattern(lines[shows - 1].strip()) if shows <= len(lines) else None
    for line in fmt.splitlines():  # a message printed over several lines: its first line that says enough
        found = _line_pattern(line.strip())
        if found is not None:
            return found
    return None


def with_value(fmt: str, at: int, value: str) -> str | None:
    """The pattern of the format's first line with `value` printed for its `at`-th conversion (1-based),
    kept until the value's end: the line of one branch of the source's code. None where the format has
    no such conversion or the value leaves no room before the pattern's bound."""
    line = fmt.splitlines()[0].strip() if fmt.strip() else ""
    pieces = literal_pieces(line)
    if not 0 < at < len(pieces):
        return None
    masked = [(t.replace("%", "%%"), c) for t, c in pieces]
    text, _ = masked[at - 1]
    joined = "".join(t + c for t, c in masked[: at - 1]) + text + value.replace("%", "%%")
    rest = "".join(t + c for t, c in masked[at:])
    through = sum(len(t) for t, _ in pieces[:at]) + len(value)
    return _line_pattern(joined + rest, prefix=max(PREFIX_LITERAL, through + 4))


def _line_pattern(fmt: str, prefix: int = PREFIX_LITERAL) -> str | None:
    pieces = literal_pieces(fmt)
    parts: list[str] = []
    held, free = 0, False
    for i, (text, conversion) in enumerate(pieces):
        if not parts:
            lead = _LEAD.search(text)
            if lead is None:
                continue  # nothing here can lead a pattern: start at the next piece
            text = text[lead.start() :]
        text = text[: prefix - held]  # what a cut line still shows
        parts.append(_escaped(text))
        held += len(text)
        after = pieces[i + 1][0] if i + 1 < len(pieces) else ""
        if held >= prefix or not conversion or not after:
            break
        number = conversion.startswith("%") and conversion[-1] in NUMBER_CONVERSIONS
        if number:
            stop = "\\" + after[0] if after[0] in "\\]^-[" else after[0]
            parts.append(f"[^\\n{stop}]{{0,{GAP_NUMBER}}}")
        elif free:
            break
        else:
            free = True
            parts.append(f"[^\\n]{{0,{GAP_TEXT}}}")
    if held < MIN_LITERAL:
        return None
    return "".join(parts)


def anchor(pattern: str) -> str:
    """The literal text every match of `pattern` starts with (a signature starts with a literal word): the
    characters before its first metacharacter, less the last one where a repeat follows it."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern) and not pattern[i + 1].isalnum():
            out.append(pattern[i + 1])
            i += 2
            continue
        if c in _REGEX_META:
            if c in "?*{" and out:
                out.pop()  # the character before a repeat may be missing from a match
            break
        out.append(c)
        i += 1
    return "".join(out)


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
