"""Linear time by construction (issue #25): every regular expression of the advisor, in its code and in its
knowledge base, is checked from its structure for repeats that can backtrack super-linearly, and the
evidence readers' and the redactor's patterns for any that can run over a line end. A pattern added with
a nested or overlapping unbounded repeat fails here before any input is slow.

How patterns are found: compiled patterns held by every module (also inside rule tables), the literal
patterns of `re.search(...)`-style calls in the source (with how they are used: a `match` or `fullmatch`
is tried once, everything else is searched), and the patterns of knowledge/ (field words, questions,
failure signatures, the chat's strings)."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
from pathlib import Path
from typing import Any

import pytest

import advisor
from advisor.chat.strings import _table
from advisor.inputs.fields import field_table
from advisor.kb.knowledge import load
from advisor.redact import secrets
from advisor.regex_safety import problems, spans_lines

PACKAGE = Path(advisor.__file__).parent
SEARCHING = ("search", "finditer", "findall", "sub", "subn", "split")
ONCE = ("match", "fullmatch")
READERS = ("advisor.inputs.evidence", "advisor.redact", "advisor/inputs/evidence", "advisor/redact")


def _objects(obj: Any, depth: int = 0) -> list[re.Pattern[str]]:
    """The compiled patterns an object holds (a pattern, a table of them, a rule with one in a slot)."""
    if depth > 3:
        return []
    if isinstance(obj, re.Pattern):
        return [obj]
    if isinstance(obj, (list, tuple, set, frozenset)):
        return [p for x in obj for p in _objects(x, depth + 1)]
    if isinstance(obj, dict):
        return [p for x in obj.values() for p in _objects(x, depth + 1)]
    slots = getattr(type(obj), "__slots__", None)
    if isinstance(slots, (list, tuple)) and not isinstance(obj, type):
        return [p for s in slots for p in _objects(getattr(obj, s, None), depth + 1)]
    return []


def _usage(source: str, name: str) -> bool:
    """Whether the module searches with the pattern called `name` (True unless only matched once)."""
    used = set(re.findall(rf"\b{re.escape(name)}\.(\w{{1,12}})\(", source))
    return not used or bool(used - set(ONCE))


def _compiled() -> list[tuple[str, str, int, bool]]:
    """(where, pattern, flags, searched) of every compiled pattern a module holds."""
    out = []
    for info in pkgutil.walk_packages(advisor.__path__, "advisor."):
        if info.name.endswith("__main__") or info.name.startswith("advisor.tui"):
            continue
        module = importlib.import_module(info.name)
        source = Path(module.__file__ or "").read_text(encoding="utf-8")
        for name, value in vars(module).items():
            for p in _objects(value):
                if isinstance(p.pattern, str):
                    out.append((f"{info.name}.{name}", p.pattern, p.flags, _usage(source, name)))
    pattern, _table = secrets._command_pattern()
    out.append(("advisor.redact.secrets._command_pattern", pattern.pattern, pattern.flags, True))
    return out


def _literals() -> list[tuple[str, str, int, bool]]:
    """(where, pattern, flags, searched) of every literal pattern passed to a function of `re`."""
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name.startswith("generated"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args):
                continue
            if not (isinstance(node.func.value, ast.Name) and node.func.value.id == "re"):
                continue
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                where = f"{path.relative_to(PACKAGE.parent)}:{node.lineno}"
                out.append((where, first.value, _flags(node), node.func.attr not in ONCE))
    return out


def _flags(call: ast.Call) -> int:
    """The flags a call passes (re.M, re.I | re.S, flags=re.X): the last positional argument or `flags`."""
    given = [k.value for k in call.keywords if k.arg == "flags"]
    candidates = given or [a for a in call.args[1:] if isinstance(a, (ast.Attribute, ast.BinOp))]
    flags = 0
    for node in candidates[-1:]:
        for part in ast.walk(node):
            if isinstance(part, ast.Attribute) and isinstance(part.value, ast.Name) and part.value.id == "re":
                flags |= int(getattr(re, part.attr, 0))
    return flags


def _knowledge() -> list[tuple[str, str, int, bool]]:
    """(where, pattern, flags, searched) of the knowledge base's patterns."""
    out = []
    for f in field_table().fields:
        out += [(f"fields.yaml {f.fact} {value}", pattern, re.I, False) for value, pattern in f.values]
        if f.unit_words:
            out.append((f"fields.yaml {f.fact} unit_words", f.unit_words, re.I, True))
    kb = load()
    for q in kb.questions.values():
        out += [(f"questions.yaml {q.id} {lang}", p, re.I, True) for lang, p in q.asked.texts.items() if p]
    for failure in kb.failures.values():
        out += [(f"failures.yaml {failure.id}", p, 0, True) for p in failure.signature]
    from advisor.chat.reading import _evidence_line
    from advisor.inputs.acts import table

    rows, _lang = table()
    for row in rows:
        out += [(f"dialogue.yaml {row.kind}", p.pattern, re.I, True) for p in (*row.cues, *row.weak)]
    out.append(("dialogue.yaml evidence_line", _evidence_line().pattern, re.I, False))
    for key, texts in _table()["strings"].items():
        if key.endswith("_pattern"):
            out += [(f"chat strings {key} {lang}", p, re.I, True) for lang, p in texts.items()]
    return out


def _all_patterns() -> list[tuple[str, str, int, bool]]:
    compiled = _compiled()
    held = {(p, f) for _w, p, f, _s in compiled}
    # a literal compiled into a module's pattern is judged there, by how the module uses it
    literals = [x for x in _literals() if (x[1], x[2]) not in held and not any(x[1] == p for p, _f in held)]
    return compiled + literals + _knowledge()


ALL = _all_patterns()


def test_the_patterns_are_found_everywhere_they_live():
    wheres = " ".join(w for w, *_ in ALL)
    for place in (
        "advisor.redact.secrets",
        "advisor.inputs.evidence",
        "questions.yaml",
        "dialogue.yaml",
        "failures.yaml",
        "fields.yaml",
    ):
        assert place in wheres
    assert len(ALL) > 300


@pytest.mark.parametrize(("where", "pattern", "flags", "searched"), ALL, ids=[w for w, *_ in ALL])
def test_no_pattern_can_backtrack_super_linearly(where, pattern, flags, searched):
    found = problems(pattern, flags, search=searched)
    assert not found, f"{where}: {found[0]}"


READER_PATTERNS = [a for a in ALL if a[0].startswith(READERS)]


@pytest.mark.parametrize(
    ("where", "pattern", "flags", "searched"), READER_PATTERNS, ids=[w for w, *_ in READER_PATTERNS]
)
def test_no_reader_pattern_runs_over_a_line_end(where, pattern, flags, searched):
    assert not spans_lines(pattern, flags), f"{where}: {pattern!r} can match across a line end"


@pytest.mark.parametrize(
    "pattern",
    [
        r"(a+)+b",  # nested: exponential
        r"(\w+\s?)*x",
        r"\d+\.?\d*x",  # neighbours of overlapping characters: quadratic
        r"[a-z]+@",  # restarted inside every run of letters
        r"(?m)^\s*foo",  # \s runs over the blank lines a MULTILINE ^ restarts at
        r"\bwhat\b.*\ball",  # .* runs over the next "what"
        r"(?:\S+[ \t]+)*?(?:NV\d+|SYS)",
    ],
)
def test_the_checker_names_the_patterns_that_are_slow(pattern):
    assert problems(pattern)


@pytest.mark.parametrize(
    "pattern",
    [
        r"^\s*foo",  # one start only
        r"(?m)^[ \t]*foo",  # a line's own spaces only
        r"\b\w+@",  # \w cannot cross the \b that starts it
        r"[a-z](?<![a-z][a-z])[a-z]+@",  # led by its class, guarded by a look-behind
        r"\"[^\"]*\"",
        r"\d+(,\d+)*",  # each round starts with a comma
        r"foo.*",  # ends with the repeat: the first try succeeds
        r"x(?:[ \t]{1,4}(?:is|ist)){0,3}[ \t]{0,4}y",  # bounded
    ],
)
def test_the_checker_passes_patterns_that_are_linear(pattern):
    assert not problems(pattern)


def test_line_ends_are_told_apart():
    assert spans_lines(r"\s+x") and spans_lines(r"[^,]{1,9}") and spans_lines(r"(?s)a.b")
    assert not spans_lines(r"[ \t]+x") and not spans_lines(r"[|;&\n]|$") and not spans_lines(r"[^,\n]{1,9}")
