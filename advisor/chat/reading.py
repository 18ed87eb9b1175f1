"""One line of the chat read as the chat reads it: a command, a quit, pasted evidence, or an utterance
with its act (advisor/inputs/acts.py) and the facts it names (advisor/inputs/freetext.py), with the
open question as a preference. The chat routes by this reading, and the utterance tests read through
it, so there is one way from a line to what it means."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from advisor.inputs.acts import Act, classify
from advisor.inputs.freetext import Understood, understand
from advisor.kb.knowledge import Knowledge

# Only an explicit word typed alone ends the session: a message that merely starts with "q" does not.
LOG_LINE = 40  # characters: a line opening as logs do and this long is machine output, known to a reader or not
QUIT = re.compile(r"^(q|quit|exit|bye|beenden|ende|tschüss)\W*$", re.I)


@dataclass(frozen=True)
class Turn:
    """A line as read: its act ('command', 'quit', 'evidence' or an act of knowledge/dialogue.yaml),
    the text after the act's cue, and what the words name."""

    act: str
    rest: str = ""
    got: Understood | None = None


@cache
def _evidence_line() -> re.Pattern[str]:
    from advisor.kb.paths import knowledge_dir
    from advisor.yamlio import load_file_cached

    return re.compile(load_file_cached(knowledge_dir() / "dialogue.yaml")["evidence_line"], re.I)


def is_evidence(text: str) -> bool:
    """Whether the text is machine output: several lines an audit reader knows, or one line that opens as
    commands and logs do (a reader knows it, or it is as long as a log line)."""
    from advisor.inputs.evidence.registry import READERS

    said = text.strip()
    one_line = "\n" not in said
    if one_line and not _evidence_line().match(said):
        return False
    if one_line and len(said) >= LOG_LINE:
        return True  # a line that opens as logs do, of a log line's length: an audit says what it knows of it
    readers = [r for r in READERS if r.kind not in ("collect-manifest", "deployment")]
    for reader in readers:
        try:
            if reader.recognise(said):
                return True
        except Exception:  # a reader failing on odd text recognises nothing
            continue
    return False


def read(text: str, kb: Knowledge, asked: str | None = None) -> Turn:
    """The reading of one line, with the question `asked` open (its fact's name, or None)."""
    said = text.strip()
    if said.startswith("/"):
        return Turn("command", said)
    if QUIT.match(said):
        return Turn("quit")
    if is_evidence(said):
        return Turn("evidence", said)
    got = understand(said, kb, asked)
    if got.skipped:
        return Turn("dont_know", "", got)
    named = bool(got.fields or got.unsure or got.variants)
    act: Act = classify(said, named, bool(got.alternatives))
    return Turn(act.kind, act.rest, got)
