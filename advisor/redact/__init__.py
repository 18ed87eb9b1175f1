"""Redaction of what a transcript or a bundle must not carry: secrets (by the name that holds them, by
their structure, by their randomness; advisor.redact.secrets) and identifiers (host names, addresses, MACs,
GUIDs, UUIDs, serials, user names, e-mail addresses; advisor.redact.identifiers).

Guarantees: each distinct value maps to one stable placeholder (host-1, secret-2, ...) for the life of one
Redactor, numbered in the order the values first appear; a value learned anywhere is replaced everywhere
(`document` learns from every string of a transcript before it replaces any, so a host named in a later
turn is hidden in earlier ones too), but never inside a known-safe word: the catalogue's models, GPUs,
engines and flags, a model's name by its shape, versions and digests are never masked. A secret too short
or too common to stand alone ("admin" as a password) is hidden where it stands and not looked for
elsewhere. Redaction is linear in the text's length by construction: no pattern can match a line end,
every repeat is bounded, each pattern is led by its first character class, a pattern runs only on a text
holding one of its needles, each distinct match is judged once, and the values learned so far are found
again by one compiled pattern.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from advisor.redact import identifiers, secrets
from advisor.redact.identifiers import KEEP, PLACEHOLDER, worth
from advisor.redact.vocabulary import SafeNames, public_host

__all__ = ["KEEP", "PLACEHOLDER", "Redactor", "default_safe"]

_PRIORITY = {"secret": 0}
_RUN = re.compile(r"[A-Za-z0-9_.:%+/=@~-]{1,4096}")
_PATTERN_VALUES = 2000
_SIBLING = re.compile(r"([A-Za-z][A-Za-z0-9]{0,30}-(?:[A-Za-z0-9]{1,30}-){0,4}[A-Za-z]{0,8})\d{1,6}")  # stem, number
_NODE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9]{0,62}(?:-[A-Za-z0-9]{1,62}){0,8}")  # a DNS label, letter first
_SAFE: list[SafeNames] = []


def default_safe() -> SafeNames:
    """The known-safe names of the installed knowledge base (loaded once per process)."""
    if not _SAFE:
        from advisor.kb import cache

        kb, _rules, _hashes, _hit = cache.load()
        _SAFE.append(SafeNames.of(kb))
    return _SAFE[0]


class Redactor:
    """Replaces sensitive values with placeholders that stay the same for the same value."""

    def __init__(self, safe: SafeNames | None = None) -> None:
        self.safe = safe or default_safe()
        self.mapping: dict[str, str] = {}
        self.counts: dict[str, int] = {}
        self._local: set[str] = set()  # hidden where they stand, not looked for elsewhere
        self._index: _Index | None = None
        self.steps = 0  # regex scans and values handled: proportional to the work, for the linear-time test

    def placeholder(self, kind: str, value: str) -> str:
        """The placeholder of one value, allocating the next number of its kind for a new one."""
        if value not in self.mapping:
            self.counts[kind] = self.counts.get(kind, 0) + 1
            self.mapping[value] = f"{kind}-{self.counts[kind]}"
            if not self._spreads(kind, value):
                self._local.add(value)
            self._index = None
            first = value.split(".", 1)[0]
            if kind == "host" and first != value and _NODE_NAME.fullmatch(first) and any(c.isdigit() for c in first):
                # gpu-a17.cluster.example.org: the bare gpu-a17 in prose too (a numbered node name only)
                if worth(first):
                    self.placeholder(kind, first)
        return self.mapping[value]

    def _spreads(self, kind: str, value: str) -> bool:
        """Whether a value is distinctive enough to be looked for in every other text."""
        if not worth(value) or self.safe.word(value) or value.strip().lower() in secrets.not_values():
            return False  # a switch or placeholder (true, changeme) hidden under one name is not sought elsewhere
        return kind != "secret" or len(value) >= 6

    def _found(self, text: str) -> list[tuple[int, int, str]]:
        """(start, end, kind) of every value to hide in `text`, in the order they stand."""
        found = [(a, b, "secret") for a, b in secrets.find(text, self.safe) if b - a >= 3]
        found += identifiers.find(text, self.safe)
        self.steps += 16 + len(found)
        found.sort(key=lambda f: (f[0], _PRIORITY.get(f[2], 1), -f[1]))
        return found

    def learn(self, text: str) -> None:
        """Allocate placeholders for the sensitive values in `text` without changing it."""
        for start, end, kind in _disjoint(self._found(text)):
            self.placeholder(kind, text[start:end])

    def text(self, text: str) -> str:
        """`text` with every sensitive value replaced; a value learned anywhere is replaced everywhere."""
        spans = [(s, -e, self.placeholder(kind, text[s:e])) for s, e, kind in _disjoint(self._found(text))]
        spans += [(s, -e, name) for s, e, name in self._sibling_spans(text)]
        spans += [(s, -e, name) for s, e, name in self._known_spans(text)]
        if not spans:
            return text
        self.steps += len(spans)
        spans.sort()
        out, at = [], 0
        for start, minus_end, name in spans:
            if start < at:
                continue  # inside a longer value already replaced
            out += [text[at:start], name]
            at = -minus_end
        out.append(text[at:])
        return "".join(out)

    def _sibling_spans(self, text: str) -> list[tuple[int, int, str]]:
        """Numbered node names next to a learned one: with gpu-a17 known, a bare gpu-a18 in prose is its
        sibling (the same stem with a dash, then other digits)."""
        stems = sorted(
            {
                m.group(1)
                for v, name in self.mapping.items()
                if name.startswith("host-") and v not in self._local
                for m in [_SIBLING.fullmatch(v)]
                if m
            }
        )
        if not stems:
            return []
        self.steps += 1
        pattern = re.compile(r"(?<![\w.-])(?:" + "|".join(map(re.escape, stems)) + r")\d{1,6}(?![\w-])")
        out = []
        for m in pattern.finditer(text):
            if not self._inside_safe_word(text, m.start(), m.end()):
                out.append((m.start(), m.end(), self.placeholder("host", m.group(0))))
        return out

    def _known_spans(self, text: str) -> list[tuple[int, int, str]]:
        """Where the values learned so far occur as whole words of `text` (a host named bare in prose),
        except inside a known-safe word (a model's name holding a learned value)."""
        if self._index is None:
            self._index = _Index({v: n for v, n in self.mapping.items() if v not in self._local})
        index, mapping, out = self._index, self.mapping, []
        if index.pattern is not None:
            for m in index.pattern.finditer(text):
                out.append((m.start(), m.end(), mapping[m.group(0)]))
            self.steps += 1 + len(out)
        else:
            out = self._looked_up(text, index)
        for value in index.odd:
            at = text.find(value)
            while at != -1:
                self.steps += 1
                out.append((at, at + len(value), mapping[value]))
                at = text.find(value, at + len(value))
        return [s for s in out if not self._inside_safe_word(text, s[0], s[1])]

    def _inside_safe_word(self, text: str, start: int, end: int) -> bool:
        if not identifiers.inside_longer_word(text, start, end):
            return False
        word = identifiers.word_at(text, start)
        if len(word) <= end - start:
            return False
        head = word.split("/", 1)[0].lower()
        if "/" in word and (head in identifiers.PUBLIC_HOSTS or public_host(head)):
            return True  # ghcr.io/berriai/litellm:main-...: a public image or repository, not the user litellm
        return self.safe.word(word)

    def _looked_up(self, text: str, index: _Index) -> list[tuple[int, int, str]]:
        """Known values found word by word (more values than one pattern holds): each distinct word once."""
        out: list[tuple[int, int, str]] = []
        memo: dict[str, list[tuple[int, int, str]]] = {}
        for run in _RUN.finditer(text) if index.first else ():
            self.steps += 1
            word = run.group(0)
            found = memo.get(word)
            if found is None:
                found = self._word_spans(word, index)
                if len(memo) < 100_000:
                    memo[word] = found
            at = run.start()
            out += [(at + a, at + b, name) for a, b, name in found]
        return out

    def _word_spans(self, word: str, index: _Index) -> list[tuple[int, int, str]]:
        """(start, end, placeholder) of the known values inside one word, longest first at each cut."""
        out = []
        marks = [m.start() for m in _CUT.finditer(word)]
        ends = {*marks, len(word)}
        for i, a in enumerate([0, *(m + 1 for m in marks)]):
            lengths = index.first.get(word[a : marks[i] if i < len(marks) else len(word)])
            for length in lengths or ():
                self.steps += 1
                if a + length in ends and word[a : a + length] in self.mapping:
                    out.append((a, a + length, self.mapping[word[a : a + length]]))
                    break
        return out

    def value(self, data: Any) -> Any:
        """Redact every string inside a JSON-like value."""
        if isinstance(data, str):
            return self.text(data)
        if isinstance(data, dict):
            return {k: self.value(v) for k, v in data.items()}
        if isinstance(data, (list, tuple)):
            return [self.value(v) for v in data]
        return data

    def document(self, data: Any) -> Any:
        """Redact a whole transcript: learn from every string first, so what a later turn gives away is
        hidden in the earlier turns as well."""
        for s in _strings(data):
            self.learn(s)
        return self.value(data)


def _disjoint(found: list[tuple[int, int, str]]) -> Iterator[tuple[int, int, str]]:
    """The spans that do not start inside an earlier, longer one (sorted by start, longest first)."""
    at = -1
    for start, end, kind in found:
        if start < at:
            continue
        at = end
        yield start, end, kind


_CUT = re.compile(r"[.:%+/=@~]")


class _Index:
    """The learned values arranged for lookup: for each first piece, the lengths of the values that start
    with it (longest first); the odd ones, found by plain search."""

    def __init__(self, mapping: dict[str, str]) -> None:
        lengths: dict[str, set[int]] = {}
        self.odd: list[str] = []
        for value in mapping:
            if _RUN.fullmatch(value) and len(value) <= 512:
                lengths.setdefault(_CUT.split(value, 1)[0], set()).add(len(value))
            else:
                self.odd.append(value)
        self.first: dict[str, tuple[int, ...]] = {k: tuple(sorted(v, reverse=True)) for k, v in lengths.items()}
        odd = set(self.odd)
        clean = sorted((v for v in mapping if v not in odd), key=lambda v: (-len(v), v))
        self.pattern: re.Pattern[str] | None = None
        if clean and len(clean) <= _PATTERN_VALUES:
            branches = (re.escape(v[0]) + f"(?<![A-Za-z0-9_-]{re.escape(v[0])})" + re.escape(v[1:]) for v in clean)
            self.pattern = re.compile("(?:" + "|".join(branches) + ")(?![A-Za-z0-9_-])")


def _strings(data: Any) -> Iterator[str]:
    if isinstance(data, str):
        yield data
    elif isinstance(data, dict):
        for v in data.values():
            yield from _strings(v)
    elif isinstance(data, (list, tuple)):
        for v in data:
            yield from _strings(v)
