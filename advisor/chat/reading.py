"""One line of the chat read as the chat reads it: a command, a quit, pasted evidence, or an utterance
with its act (advisor/inputs/acts.py) and the facts it names (advisor/inputs/freetext.py), with the
open question as a preference. The chat routes by this reading, and the utterance tests read through
it, so there is one way from a line to what it means."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from advisor.chat.replies import knowledge_answer
from advisor.inputs.acts import Act, classify
from advisor.inputs.freetext import Understood, understand
from advisor.kb.knowledge import Knowledge

# Only an explicit word typed alone ends the session: a message that merely starts with "q" does not.
HEDGE = re.compile(  # a value said as a guess: "maybe 50", "5?", "gefühlt hundert"
    r"\b(maybe|perhaps|probably|likely|roughly|around|about|approx\w{0,6}|vielleicht|wahrscheinlich|etwa"
    r"|ungefähr|ungefaehr|rund|ca|circa|so um|gefühlt|gefuehlt|geschätzt|geschaetzt|schätze|schaetze|i guess"
    r"|i think|i.?d say|würde sagen)\b|\d\s?\?"
)
# a tag that turns a statement into a question only for form: "we'd like fp8, that works, no?"
TAG = re.compile(
    r"(?:,|\s)\s{0,2}(?:no|right|correct|yes|ok|oder|gell|ne|nicht wahr|stimmt.?s|richtig)\s{0,2}\?\s{0,3}$", re.I
)
LAYOUT_WORDS = re.compile(
    r"\b(tp|pp|dp|ep|tensor|pipeline|replica\w{0,2}|replikat\w{0,2}|cop(y|ies)|kopie\w{0,2}|data.?parallel\w{0,4}"
    r"|one card|eine karte|one gpu|split\w{0,3}|single card|on (one|1)|auf (einer|1)|einzelne\w{0,2} karte"
    r"|per (card|gpu|node|box|spark)|(je|pro) (karte|gpu|knoten)|(each|every|jede[rsn]?) (card|gpu|karte)"
    r"|own (copy|model|instance)|eigene[sn]? (kopie|modell|replikat|instanz))\b"
)
MACHINE_TOKEN = re.compile(r"--\w|\w=\S|\[\w|\d:\d|\w/\w|\w\.py\b|0x[0-9a-f]")  # "vllm keeps dying" is prose
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
    if one_line and (not _evidence_line().match(said) or said.endswith("?")):
        return False  # "vllm or sglang for this setup?" asks; machine output does not end with a question
    if one_line and len(said) >= LOG_LINE and MACHINE_TOKEN.search(said):
        return True  # a line that opens as logs do, of a log line's length: an audit says what it knows of it
    readers = [r for r in READERS if r.kind not in ("collect-manifest", "deployment")]
    for reader in readers:
        try:
            if reader.recognise(said):
                return True
        except Exception:  # a reader failing on odd text recognises nothing
            continue
    return False


def caption(text: str) -> str:
    """The customer's own words above a paste ("this is from the test guest, vllm with TP 2:"): the
    leading lines before the first that opens or reads as machine output."""
    words = []
    for line in text.strip().split("\n"):
        said = line.strip()
        if not said or _evidence_line().match(said) or said[:1] in "|+=-":
            break
        if MACHINE_TOKEN.search(said) and not said.endswith(":"):  # "... beim Start mit NCCL_DEBUG=INFO:" introduces
            break
        words.append(said)
    return " ".join(words)


def read(text: str, kb: Knowledge, asked: str | None = None) -> Turn:
    """The reading of one line, with the question `asked` open (its fact's name, or None)."""
    said = text.strip()
    if said.startswith("/"):
        return Turn("command", said)
    if QUIT.match(said):
        return Turn("quit")
    # "vllm serve Zeile für die 405B bitte" is a request that opens with the command's name, no output
    request = "\n" not in said and classify(said, False).kind.startswith("request_")
    if not request and is_evidence(said):
        return Turn("evidence", said)
    got = understand(said, kb, asked)
    if got.skipped:
        return Turn("dont_know", "", got)
    named = bool(got.fields or got.unsure or got.variants)
    stated = TAG.sub(".", said) if got.fields else said
    catalogue = "model" in got.fields or "hardware.gpu" in got.fields
    act: Act = classify(stated, named, bool(got.alternatives), _asked_only(said, got, kb, asked), catalogue)
    return _refined(act, said, got, kb, asked)


def _refined(act: Act, said: str, got: Understood, kb: Knowledge, asked: str | None) -> Turn:
    """The act as the line's other parts show it: an answer before a closing question, a question the
    knowledge base answers, a why-not that names hardware rather than a layout."""
    if act.kind in ("general", "question") or (act.kind == "hypothetical" and act.asked):
        answered = _stated_first(said, kb, asked)
        if answered is not None:  # "bf16 ideally. does that even fit?": the answer, and a question after it
            return Turn("answer", said, answered)
    if act.kind == "hypothetical" and act.asked and got.held:
        return Turn("answer", said, got)  # "a context of ~32 tokens?": a value said unsure, asked back
    if act.kind in ("hypothetical", "compare") and act.asked and knowledge_answer(said, kb, "en") is not None:
        return Turn("concept", act.rest, got)  # "ACS, is that in the VM or on the host?": answered
    if act.kind == "why_not" and not _names_layout(act.rest):
        if got.fields:
            return Turn("hypothetical", act.rest, got)  # "why not two L40S instead of four L4?": tried
        if re.search(r"\b(card|gpu|karte|server|box|option|model|modell|variant|variante)\w{0,2}\b", act.rest):
            return Turn("why", act.rest, got)  # "why that one and not the cheaper cards?": the choice explained
    return Turn(act.kind, act.rest, got)


def _stated_first(said: str, kb: Knowledge, asked: str | None) -> Understood | None:
    """What the sentences around a question state, where they state anything: before a closing
    question ("bf16 ideally. does that even fit?") or after an opening one ("was haben andere so? bei
    uns steht ne workstation mit zwei 4090")."""
    parts = re.split(r"(?<=[.!;?])\s{1,3}", said.strip())
    head = " ".join(p for p in parts if not p.rstrip().endswith("?"))
    if len(parts) < 2 or not head:
        return None
    got = understand(head, kb, asked)
    return got if got.fields else None


def _asked_only(said: str, got: Understood, kb: Knowledge, asked: str | None) -> bool:
    """Whether the line leaves the open question unanswered: it names no value of it, or only that
    value, unhedged (a bare "no" beside "no idea")."""
    if asked is None:
        return False
    from advisor.inputs.fields import field_table

    row = field_table(None).by_fact().get(asked)
    if row is None:
        return False
    if row.path not in got.fields:
        return True
    if len(said.split()) <= 2:
        return False  # "unbekannt", "not sure": one of the question's own choices, said as the answer
    if _stated_apart(said, kb, row.path):
        return False  # "Laut IT: Llama 3.3 70B. Mehr weiß ich nicht.": the answer, then what is not known
    return set(got.fields) == {row.path} and HEDGE.search(said.lower()) is None


def _stated_apart(said: str, kb: Knowledge, path: str) -> bool:
    """Whether the sentences before the last state the field's value, without a question or a
    don't-know of their own: what the last sentence does not know is something else."""
    parts = re.split(r"(?<=[.!;])\s{1,3}", said.strip())
    head = " ".join(parts[:-1])
    if len(parts) < 2 or "?" in head or classify(head, True).kind == "dont_know":
        return False
    return path in understand(head, kb).fields


def _names_layout(text: str) -> bool:
    """Whether a why-not names a layout (a degree, replicas, one card), not other hardware."""
    return bool(LAYOUT_WORDS.search(text))
