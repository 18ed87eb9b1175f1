"""Known failures in any evidence: the signatures of knowledge/failures.yaml matched line by line.

Guarantees: every catalogued failure whose signature matches a line of a file becomes the evidence
fact `failure_ID` with that line (the first match per failure and file); the patterns are checked to
run in linear time when the catalogue loads (advisor.kb.signatures), and each file is searched once
per failure, resuming after each matching line.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from advisor.inputs.evidence import Parsed
from advisor.inputs.evidence.reader import Contribution, Reader, fact
from advisor.kb.knowledge import load_failures
from advisor.kb.signatures import compiled, matching_lines, problem

KIND = "known-failure"
SHOWN = 300  # the evidence text a finding quotes (Parsed.at); a longer line is quoted from just before its match


@cache
def _catalogue(root: Path | None = None) -> tuple[tuple[str, re.Pattern[str]], ...]:
    """Each failure's fact and its signature as one pattern; a pattern that could be slow is left out
    (the knowledge base refuses it when it loads, with file and line)."""
    out = []
    for failure in load_failures(root):
        if failure.signature and not any(problem(p) for p in failure.signature):
            out.append((failure.fact, compiled(failure.signature)))
    return tuple(out)


def recognise(text: str) -> bool:
    """Whether any catalogued failure's signature stands in the text (parse then passes over comments)."""
    return any(pattern.search(text) for _fact, pattern in _catalogue())


def parse(text: str, file: str) -> Parsed:
    """The first line of each failure's signature in the file; a comment line (a capture's header, a
    pasted note starting with '#') only quotes a signature and is passed over."""
    out = Parsed(KIND, file)
    for name, pattern in _catalogue():
        for lineno, line, column in matching_lines(pattern, text):
            if line.lstrip().startswith("#"):
                continue
            out.data[name] = True
            out.at(name, lineno, line if len(line) <= SHOWN else "..." + line[max(0, column - 80) :])
            break
    return out


def facts(p: Parsed) -> list[Contribution]:
    """One fact per failure matched, with its line."""
    return [fact(name, True, p.evidence.get(name)) for name in p.data]


def _yields() -> tuple[str, ...]:
    return tuple("fact:" + name for name, _p in _catalogue())


FAILURES = Reader(KIND, recognise, parse, facts, yields=_yields())
