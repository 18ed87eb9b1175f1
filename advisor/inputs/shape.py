"""Typed shapes of the input records, checked on load with the exact path of a bad value.

Guarantees: `check(spec, value, path)` returns the value (a bounded int, a finite float, a bounded
text, a list or mapping of checked values) or raises InputError whose message starts with the dotted
path of the first bad value and says what was expected and what was found ("deployment.tp: expected
an integer from 1 to 1,024, got 'abc'"). No number is converted before its size is known, so a
400-digit integer or a 5,000-character text costs no arithmetic; NaN and infinities are refused.

The advisor's own small validator rather than msgspec or pydantic: on the answer path they cost
11-16 ms (msgspec) and 67-86 ms (pydantic) of imports against a cold `recommend` target of 0.15 s
that the median already nearly uses; and the scenario's forms (8k, 90%, 1,024) need custom parsing
either way.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from advisor.errors import InputError
from advisor.fuzzy import closest

MAX_DIGITS = 30  # a count with more digits is beyond every limit below; refused unread


def shown(value: Any) -> str:
    """A value as a message shows it: short, on one line, never a 400-digit number in full."""
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, int):
        digits = len(str(abs(value))) if abs(value) < 10**MAX_DIGITS else None
        return f"{value:,}" if digits is not None else "a number of more than 30 digits"
    if isinstance(value, str):
        if len(value) > 60:
            return f"a text of {len(value):,} characters"
        return repr(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, (list, tuple)):
        return f"a list of {len(value)}"
    kind = type(value).__name__  # datetime is imported only where a date is read (Day)
    if kind == "datetime":
        return f"the timestamp {value.isoformat()}"
    if kind == "date":
        return f"the date {value.isoformat()}"
    return f"a {type(value).__name__}"


def _fail(path: str, expected: str, value: Any, where: str | None) -> InputError:
    return InputError(f"{path}: expected {expected}, got {shown(value)}", where=where)


class Spec:
    """One typed shape: `check` returns the value or raises InputError naming the path."""

    def describe(self) -> str:
        """What the shape expects, in words ('an integer from 1 to 1,024')."""
        raise NotImplementedError

    def check(self, value: Any, path: str, where: str | None = None) -> Any:
        """The checked value, or InputError with `path`."""
        raise NotImplementedError


class Int(Spec):
    """A whole number from `lo` to `hi`; `text=True` also reads '8', '1,024' (not '1.5', not 'abc')."""

    def __init__(self, lo: int, hi: int, text: bool = False, what: str = "an integer") -> None:
        self.lo, self.hi, self.text, self.what = lo, hi, text, what

    def describe(self) -> str:
        """What the shape expects."""
        return f"{self.what} from {self.lo:,} to {self.hi:,}"

    def check(self, value: Any, path: str, where: str | None = None) -> int:
        """The whole number, or InputError."""
        number = value
        if isinstance(value, str) and self.text:
            digits = value.replace(",", "").replace("_", "").strip()
            if digits.lstrip("-").isdigit() and len(digits) <= MAX_DIGITS:
                number = int(digits)
        if isinstance(number, float) and math.isfinite(number) and number == int(number):
            number = int(number)
        if isinstance(number, bool) or not isinstance(number, int) or not self.lo <= number <= self.hi:
            raise _fail(path, self.describe(), value, where)
        return number


class Real(Spec):
    """A finite number above `lo` (or from it, with `closed`) and at most `hi`."""

    def __init__(self, lo: float, hi: float, closed: bool = True, what: str = "a number") -> None:
        self.lo, self.hi, self.closed, self.what = lo, hi, closed, what

    def describe(self) -> str:
        """What the shape expects."""
        low = f"from {self.lo:g}" if self.closed else f"above {self.lo:g}"
        return f"{self.what} {low} and at most {self.hi:g}"

    def check(self, value: Any, path: str, where: str | None = None) -> float:
        """The number, or InputError."""
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise _fail(path, self.describe(), value, where)
        if isinstance(value, int) and abs(value) > 10**MAX_DIGITS:
            raise _fail(path, self.describe(), value, where)
        number = float(value)
        low_ok = number >= self.lo if self.closed else number > self.lo
        if not math.isfinite(number) or not low_ok or number > self.hi:
            raise _fail(path, self.describe(), value, where)
        return number


class Str(Spec):
    """A text of 1 to `longest` characters without control characters."""

    def __init__(self, longest: int = 256, what: str = "a text") -> None:
        self.longest, self.what = longest, what

    def describe(self) -> str:
        """What the shape expects."""
        return f"{self.what} of at most {self.longest:,} characters"

    def check(self, value: Any, path: str, where: str | None = None) -> str:
        """The text, or InputError."""
        if not isinstance(value, str) or not value.strip() or len(value) > self.longest:
            raise _fail(path, self.describe(), value, where)
        if any(ord(c) < 32 and c not in "\t" for c in value):
            raise InputError(f"{path}: contains a control character (such as NUL or a line break)", where=where)
        return value


class Flag(Spec):
    """true or false (JSON's and YAML's booleans only)."""

    def describe(self) -> str:
        """What the shape expects."""
        return "true or false"

    def check(self, value: Any, path: str, where: str | None = None) -> bool:
        """The boolean, or InputError."""
        if not isinstance(value, bool):
            raise _fail(path, self.describe(), value, where)
        return value


class Day(Spec):
    """A calendar day: a YAML date, or an ISO date text (2026-12-31); a timestamp counts as its day."""

    def describe(self) -> str:
        """What the shape expects."""
        return "a date like 2026-12-31"

    def check(self, value: Any, path: str, where: str | None = None) -> Any:
        """The day (a datetime.date), or InputError."""
        import datetime as dt

        if isinstance(value, dt.datetime):
            return value.date()
        if isinstance(value, dt.date):
            return value
        if isinstance(value, str) and len(value) <= 40:
            try:
                return dt.date.fromisoformat(value.strip())
            except ValueError:
                pass
        raise _fail(path, self.describe(), value, where)


class Either(Spec):
    """One of a few exact words, or a value of `other` (deployment.ep: 'all' or a number)."""

    def __init__(self, words: tuple[str, ...], other: Spec) -> None:
        self.words, self.other = words, other

    def describe(self) -> str:
        """What the shape expects."""
        return " or ".join([*(repr(w) for w in self.words), self.other.describe()])

    def check(self, value: Any, path: str, where: str | None = None) -> Any:
        """The word or the other shape's value, or InputError."""
        if isinstance(value, str) and value.strip().lower() in self.words:
            return value.strip().lower()
        try:
            return self.other.check(value, path, where)
        except InputError:
            raise _fail(path, self.describe(), value, where) from None


class Items(Spec):
    """A list of at most `longest` items of one shape; `unique` refuses repeats."""

    def __init__(self, item: Spec, longest: int = 1024, unique: bool = False) -> None:
        self.item, self.longest, self.unique = item, longest, unique

    def describe(self) -> str:
        """What the shape expects."""
        return f"a list of at most {self.longest:,} items, each {self.item.describe()}"

    def check(self, value: Any, path: str, where: str | None = None) -> list[Any]:
        """The checked list, or InputError naming the first bad item (path[i])."""
        if not isinstance(value, (list, tuple)) or len(value) > self.longest:
            raise _fail(path, self.describe(), value, where)
        out = [self.item.check(v, f"{path}[{i}]", where) for i, v in enumerate(value)]
        if self.unique:
            seen: set[Any] = set()
            for i, v in enumerate(out):
                if v in seen:
                    raise InputError(f"{path}[{i}]: {shown(v)} is listed twice", where=where)
                seen.add(v)
        return out


class Record(Spec):
    """A mapping with known keys, each of its own shape; an unknown key is refused with the closest
    known name unless `open` (then it is kept unchecked, for the caller to note)."""

    def __init__(
        self, fields: Mapping[str, Spec], open: bool = False, what: str = "a mapping", required: tuple[str, ...] = ()
    ) -> None:
        self.fields, self.open, self.what, self.required = fields, open, what, required

    def describe(self) -> str:
        """What the shape expects."""
        return f"{self.what} of {', '.join(self.fields)}"

    def check(self, value: Any, path: str, where: str | None = None) -> dict[str, Any]:
        """The checked mapping (None values dropped), or InputError naming the bad key's path."""
        if not isinstance(value, Mapping):
            raise _fail(path, self.describe(), value, where)
        out: dict[str, Any] = {}
        for key, item in value.items():
            name = str(key)
            at = f"{path}.{name}" if path else name
            spec = self.fields.get(name)
            if spec is None:
                if self.open:
                    out[name] = item
                    continue
                hint = closest(name, list(self.fields))
                raise InputError(f"unknown field {at!r}", where=where, hint=hint)
            if item is not None:
                out[name] = spec.check(item, at, where)
        for name in self.required:
            if name not in out:
                raise InputError(f"{path + '.' if path else ''}{name}: missing", where=where)
        return out


def check(spec: Spec, value: Any, path: str, where: str | None = None) -> Any:
    """`spec.check`: the value in its checked form, or InputError naming `path`."""
    return spec.check(value, path, where)
