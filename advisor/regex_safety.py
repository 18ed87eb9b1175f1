"""Which regular expressions could take more than linear time, found from their structure, not by timing.

A backtracking engine (Python's `re`) is super-linear only through an unbounded repeat (`*`, `+`,
`{m,}`) that can be tried in more than one way: nested in another repeat whose next round can start with
what it matches (`(a+)+`, `(\\w+\\s?)*`), next to another repeat of overlapping characters (`\\d+\\.?\\d*`),
or leading a pattern that a search restarts at every position of a long run (`[a-z]+@` on a line of
letters: each start scans to the end). `problems(pattern)` names each such repeat; a pattern whose
repeats are all bounded (`{m,n}`), or unbounded only where none of the three can happen, is linear.

`spans_lines(pattern)` says whether a pattern can match a line end (a class holding `\\n`, `\\s`, a
negated class without `\\n`, `.` under DOTALL): what the evidence readers and the redactor must not do.

Character sets are compared on a sample alphabet (ASCII and a few characters beyond it), which is exact
for the sets these patterns use.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from re import _constants as c  # type: ignore[attr-defined]
from re import _parser as sre  # type: ignore[attr-defined]
from typing import Any

UNBOUNDED = c.MAXREPEAT
_SAMPLE = [chr(i) for i in range(128)] + list("éßüÄ€£“”„»«•…\u00a0\u2028\u2009中한")
_REPEATS = (c.MAX_REPEAT, c.MIN_REPEAT, getattr(c, "POSSESSIVE_REPEAT", c.MAX_REPEAT))


@dataclass(frozen=True)
class Problem:
    """One repeat that can backtrack super-linearly, and why."""

    pattern: str
    why: str

    def __str__(self) -> str:
        return f"{self.why}: {self.pattern!r}"


def _chars(op: Any, av: Any, flags: int) -> frozenset[str]:
    """The sample characters one single-character node matches."""
    if op is c.LITERAL:
        return frozenset(ch for ch in _SAMPLE if _same(ch, chr(av), flags))
    if op is c.NOT_LITERAL:
        return frozenset(ch for ch in _SAMPLE if not _same(ch, chr(av), flags))
    if op is c.ANY:
        return frozenset(ch for ch in _SAMPLE if ch != "\n" or flags & re.DOTALL)
    if op is c.IN:
        return _class(av, flags)
    return frozenset()


def _same(a: str, b: str, flags: int) -> bool:
    return a == b or bool(flags & re.IGNORECASE) and a.lower() == b.lower()


def _class(items: list[Any], flags: int) -> frozenset[str]:
    negate = bool(items) and items[0][0] is c.NEGATE
    out = set()
    for ch in _SAMPLE:
        hit = any(_in(ch, op, av, flags) for op, av in items if op is not c.NEGATE)
        if hit != negate:
            out.add(ch)
    return frozenset(out)


def _in(ch: str, op: Any, av: Any, flags: int) -> bool:
    if op is c.LITERAL:
        return _same(ch, chr(av), flags)
    if op is c.RANGE:
        lo, hi = av
        return lo <= ord(ch) <= hi or bool(flags & re.IGNORECASE) and lo <= ord(ch.swapcase()[:1] or ch) <= hi
    if op is c.CATEGORY:
        return _category(ch, av)
    return False


_CATEGORIES = {
    "CATEGORY_DIGIT": lambda ch: ch.isdigit(),
    "CATEGORY_NOT_DIGIT": lambda ch: not ch.isdigit(),
    "CATEGORY_SPACE": lambda ch: ch.isspace(),
    "CATEGORY_NOT_SPACE": lambda ch: not ch.isspace(),
    "CATEGORY_WORD": lambda ch: ch.isalnum() or ch == "_",
    "CATEGORY_NOT_WORD": lambda ch: not (ch.isalnum() or ch == "_"),
}


def _category(ch: str, av: Any) -> bool:
    test = _CATEGORIES.get(str(av).replace("UNI_", "").replace("LOC_", ""))
    return bool(test and test(ch))


def _items(sub: Any) -> list[tuple[Any, Any]]:
    return list(sub.data if hasattr(sub, "data") else sub)


def _width(items: list[tuple[Any, Any]]) -> tuple[int, int]:
    lo, hi = 0, 0
    for op, av in items:
        a, b = _item_width(op, av)
        lo, hi = lo + a, min(UNBOUNDED, hi + b)
    return lo, hi


def _item_width(op: Any, av: Any) -> tuple[int, int]:
    if op in (c.LITERAL, c.NOT_LITERAL, c.ANY, c.IN):
        return 1, 1
    if op in _REPEATS:
        lo, hi, sub = av
        a, b = _width(_items(sub))
        return lo * a, UNBOUNDED if hi == UNBOUNDED and b else min(UNBOUNDED, hi * b)
    if op is c.SUBPATTERN:
        return _width(_items(av[-1]))
    if op is getattr(c, "ATOMIC_GROUP", None):
        return _width(_items(av))
    if op is c.BRANCH:
        widths = [_width(_items(b)) for b in av[1]]
        return min(w[0] for w in widths), max(w[1] for w in widths)
    if op is c.GROUPREF:
        return 0, UNBOUNDED
    return 0, 0  # assertions and anchors


def _first(items: list[tuple[Any, Any]], flags: int) -> frozenset[str]:
    """The characters a sequence may start with."""
    out: set[str] = set()
    for op, av in items:
        out |= _item_first(op, av, flags)
        if _item_width(op, av)[0] > 0:
            break
    return frozenset(out)


def _item_first(op: Any, av: Any, flags: int) -> frozenset[str]:
    if op in (c.LITERAL, c.NOT_LITERAL, c.ANY, c.IN):
        return _chars(op, av, flags)
    if op in _REPEATS:
        return _first(_items(av[2]), flags)
    if op is c.SUBPATTERN:
        return _first(_items(av[-1]), _flags(av, flags))
    if op is c.BRANCH:
        return frozenset().union(*(_first(_items(b), flags) for b in av[1]))
    return frozenset()


def _flags(av: Any, flags: int) -> int:
    add, remove = (av[1], av[2]) if len(av) == 4 else (0, 0)
    return (flags | add) & ~remove


def _tails(items: list[tuple[Any, Any]], flags: int) -> list[tuple[frozenset[str], bool]]:
    """The variable repeats a sequence can end with (only optional items after them), as (characters,
    unbounded): where one round of an enclosing repeat can stop inside them."""
    out: list[tuple[frozenset[str], bool]] = []
    for op, av in reversed(items):
        lo, hi = _item_width(op, av)
        if op in _REPEATS and hi > lo:
            out.append((_all(_items(av[2]), flags), av[1] == UNBOUNDED))
        elif op is c.SUBPATTERN:
            out += _tails(_items(av[-1]), _flags(av, flags))
        elif op is c.BRANCH:
            for b in av[1]:
                out += _tails(_items(b), flags)
        if lo > 0:
            break
    return out


def _all(items: list[tuple[Any, Any]], flags: int) -> frozenset[str]:
    """Every character a sequence may match anywhere."""
    out: set[str] = set()
    for op, av in items:
        if op in (c.LITERAL, c.NOT_LITERAL, c.ANY, c.IN):
            out |= _chars(op, av, flags)
        elif op in _REPEATS:
            out |= _all(_items(av[2]), flags)
        elif op is c.SUBPATTERN:
            out |= _all(_items(av[-1]), _flags(av, flags))
        elif op is c.BRANCH:
            for b in av[1]:
                out |= _all(_items(b), flags)
    return frozenset(out)


class _Checker:
    def __init__(self, pattern: str, flags: int) -> None:
        self.pattern, self.flags = pattern, flags
        self.found: list[Problem] = []

    def problem(self, why: str) -> None:
        self.found.append(Problem(self.pattern, why))

    def walk(self, items: list[tuple[Any, Any]], flags: int) -> None:
        """Check every repeat of a sequence and of what it holds."""
        for i, (op, av) in enumerate(items):
            if op in _REPEATS:
                self.repeat(items, i, flags)
            elif op is c.SUBPATTERN:
                self.walk(_items(av[-1]), _flags(av, flags))
            elif op is getattr(c, "ATOMIC_GROUP", None):
                continue  # no backtracking into it
            elif op is c.BRANCH:
                for b in av[1]:
                    self.walk(_items(b), flags)
            elif op in (c.ASSERT, c.ASSERT_NOT):
                self.walk(_items(av[1]), flags)

    def repeat(self, items: list[tuple[Any, Any]], i: int, flags: int) -> None:
        op, (lo, hi, sub) = items[i]
        body = _items(sub)
        blo, bhi = _width(body)
        if hi == UNBOUNDED and bhi > 0 and (bhi > blo or hi > lo):
            self.neighbours(items, i, _all(body, flags), flags)
        if hi > 1 and bhi > 0:
            first = _first(body, flags)
            tails = _tails(body, flags)
            if (hi == UNBOUNDED or any(t[1] for t in tails)) and any(chars & first for chars, _u in tails):
                self.problem("an unbounded repeat nested in another that can restart with what it matches")
        self.walk(body, flags)

    def neighbours(self, items: list[tuple[Any, Any]], i: int, chars: frozenset[str], flags: int) -> None:
        """An unbounded repeat followed, past items that can match nothing, by a variable repeat that can
        start with what it matches: the split between them can be tried in many ways."""
        for op, av in items[i + 1 :]:
            lo, hi = _item_width(op, av)
            if op in _REPEATS and hi > lo and chars & _first(_items(av[2]), flags):
                self.problem("an unbounded repeat next to another repeat of overlapping characters")
                return
            if op is c.SUBPATTERN and hi > lo and chars & _first(_items(av[-1]), _flags(av, flags)):
                inner = _items(av[-1])
                if any(o in _REPEATS for o, _a in inner[:1]):
                    self.problem("an unbounded repeat next to another repeat of overlapping characters")
                    return
            if lo > 0:
                return


def problems(pattern: str | re.Pattern[str], flags: int = 0, search: bool = True) -> list[Problem]:
    """The repeats of `pattern` that can backtrack super-linearly (empty: linear by construction);
    `search`: the pattern is searched for (search, finditer, findall, sub, split), not matched once."""
    text = pattern.pattern if isinstance(pattern, re.Pattern) else pattern
    flags |= pattern.flags if isinstance(pattern, re.Pattern) else 0
    if isinstance(text, bytes):
        return []
    parsed = sre.parse(text, flags)
    checker = _Checker(text, parsed.state.flags)
    items = _items(parsed)
    checker.walk(items, parsed.state.flags)
    if search:
        _restarts(checker, items, parsed.state.flags)
    return checker.found


def _restarts(checker: _Checker, items: list[tuple[Any, Any]], flags: int) -> None:
    """A search tries the pattern at every place it can start: an unbounded repeat that can run over the
    next such place, and fail after it, is scanned again from there (`what.*all` on a line of "what"s).
    A start guarded by a look-behind, \\b or a MULTILINE ^ cannot lie inside a run of the characters the
    guard excludes; a single ^ or \\A allows one start only."""
    start = _starts(items, flags)
    if start is None:
        return
    first, excluded = start
    for chars, can_fail in _unbounded(items, flags, ()):
        if can_fail and chars & first and not chars <= excluded:
            checker.problem("an unbounded repeat a search restarts inside (it can run over the next start)")
            return


def _starts(items: list[tuple[Any, Any]], flags: int) -> tuple[frozenset[str], frozenset[str]] | None:
    """Where a search can start the pattern: (its first characters, the characters a guard keeps from
    standing before a start); None where it can start only once."""
    excluded: frozenset[str] = frozenset()
    for op, av in items[:3]:
        if op is c.AT:
            if av in (c.AT_BEGINNING_STRING,) or (av is c.AT_BEGINNING and not flags & re.MULTILINE):
                return None
            if av is c.AT_BEGINNING:
                excluded |= frozenset(ch for ch in _SAMPLE if ch != "\n")
            elif av is c.AT_BOUNDARY:
                excluded |= frozenset(ch for ch in _SAMPLE if ch.isalnum() or ch == "_")
        elif op is c.ASSERT_NOT and av[0] < 0:
            excluded |= _first(_items(av[1]), flags)
    return _first(items, flags), excluded


def _unbounded(
    items: list[tuple[Any, Any]], flags: int, after: tuple[list[tuple[Any, Any]], ...]
) -> list[tuple[frozenset[str], bool]]:
    """Every unbounded repeat, with its characters and whether something that can fail follows it
    (in its own sequence or the enclosing ones, `after`)."""
    out: list[tuple[frozenset[str], bool]] = []
    for i, (op, av) in enumerate(items):
        rest = (items[i + 1 :], *after)
        if op in _REPEATS:
            lo, hi, sub = av
            body = _items(sub)
            if hi == UNBOUNDED and _width(body)[1] > 0:
                out.append((_all(body, flags), any(_can_fail(r) for r in rest)))
            out += _unbounded(body, flags, rest)
        elif op is c.SUBPATTERN:
            out += _unbounded(_items(av[-1]), _flags(av, flags), rest)
        elif op is c.BRANCH:
            for b in av[1]:
                out += _unbounded(_items(b), flags, rest)
    return out


def _can_fail(rest: list[tuple[Any, Any]]) -> bool:
    """Whether what follows can fail to match (something required, or an assertion)."""
    return any(_item_width(op, av)[0] > 0 or op in (c.ASSERT, c.ASSERT_NOT, c.AT) for op, av in rest)


def spans_lines(pattern: str | re.Pattern[str], flags: int = 0) -> bool:
    """Whether `pattern` can match text on both sides of a line end (a repeat of a class holding `\\n`,
    or a line end with more to match after it); a line end that only ends a match does not count."""
    text = pattern.pattern if isinstance(pattern, re.Pattern) else pattern
    flags |= pattern.flags if isinstance(pattern, re.Pattern) else 0
    if isinstance(text, bytes):
        return False
    parsed = sre.parse(text, flags)
    return _newline(_items(parsed), parsed.state.flags, ())


def _newline(items: list[tuple[Any, Any]], flags: int, after: tuple[list[tuple[Any, Any]], ...]) -> bool:
    for i, (op, av) in enumerate(items):
        rest = (items[i + 1 :], *after)
        if op in (c.LITERAL, c.NOT_LITERAL, c.ANY, c.IN):
            if "\n" in _chars(op, av, flags) and any(_width(r)[0] > 0 for r in rest):
                return True
        elif op in _REPEATS:
            body = _items(av[2])
            if av[1] > 1 and "\n" in _all(body, flags):
                return True
            if _newline(body, flags, rest):
                return True
        elif op is c.SUBPATTERN and _newline(_items(av[-1]), _flags(av, flags), rest):
            return True
        elif op is c.BRANCH and any(_newline(_items(b), flags, rest) for b in av[1]):
            return True
    return False
