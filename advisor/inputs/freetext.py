"""Free-text answers, in English or German, turned into scenario fields.

"llama 70b in fp8", "zwei RTX Pro 6000", "8x h200 nvl with 4-way bridges", "about 60 users, 8k
context", "kein NVLink", "iommu=pt". Names are fuzzy-matched against the catalogue; when unsure,
the result carries "did you mean" candidates instead of a guess.

An answer to a question is read first as that question's field: where the same words match the
asked field and another (a bare "aus" is an IOMMU and an ACS word), the asked field takes them. A
bare answer that is none of an enum field's choices is not taken: it is returned as `invalid`, for
the caller to say so with the choices. Several numbers as the answer to a number question ("mostly
4k, sometimes 32k") give the largest, and the values read are returned in `ranged`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from advisor.inputs.fields import Field, FieldTable, field_table
from advisor.inputs.letters import fold
from advisor.inputs.quantities import blank as _blank
from advisor.inputs.scenario import SUFFIXES
from advisor.kb.knowledge import Knowledge

PRECISIONS = {
    "nvfp4": "nvfp4",
    "mxfp4": "mxfp4",
    "fp8": "fp8",
    "bf16": "bf16",
    "bfloat16": "bf16",
    "fp16": "fp16",
    "int8": "int8",
    "int4": "int4",
    "awq": "int4",
    "gptq": "int4",
    "w4a16": "int4",
    "q4_k_m": "int4",
    "q4_k_s": "int4",
    "q4_0": "int4",
    "q8_0": "int8",
}
# How a number of each field type is written in free text; tokens keep their k/M suffix. A number
# glued to letters ("fp8", "h200") is part of a name, not a count.
NUMBER = {
    # a sign or a fraction is read with the number (it is refused by name, never read as its last digits:
    # "-5 users" is not 5 users, nor "2,5 Nutzer" 5); a dash between two numbers is a range, not a sign;
    # a number glued to a name by a hyphen ("ConnectX-7", "Gen-5") is part of the name; "3k users" are 3,000
    "count": r"(?<![\w.,])(?<![a-z]-)-?\d+(?:[.,]\d+)?(?!\d)(?:\s?k(?![a-z]))?(?![\s-]?(?:gb|gib|tb)\b)",
    "tokens": r"(?<![\w.])(?<![a-z]-)\d+(?:\.\d+)?\s*[km]?",
    "gbps": r"(?<![\w.])(?<![a-z]-)\d+(?:\.\d+)?",
    "share": r"(?<![\w.])(?:0?[.,]\d{1,4}|\d{1,3}(?:[.,]\d{1,2})?\s?%)",
}
USERS = "workload.concurrent_conversations"
# a question that weighs what it names: what follows "instead of" is an alternative, not ruled out
WEIGHED = re.compile(
    r"\b(instead of|rather than|statt|anstatt|anstelle)\b[^\n]{0,80}\?[^\n]{0,60}"
    r"\b(which|better|smarter|welche\w?|besser)\b"
    r"|\b(which|welche\w?)\b[^\n]{0,40}\b(better|smarter|besser|sinnvoller)\b[^\n]{0,80}"
    r"\b(instead of|rather than|statt|anstatt)\b"
)
# the KV cache named shortly before, no weights between: "for the kv cache with contexts this long, fp8 or bf16?"
KV_NEAR = re.compile(r"\b(?:kv|cache)\b(?:(?!weights|gewicht|model)[^.;!?]){0,60}$")
EITHER = re.compile(r"^\W{0,3}(?:or|oder|vs\.?|versus)\b|\b(?:or|oder|vs\.?|versus)\W{0,3}$")
INSTEAD = re.compile(r"\b(instead of|rather than|statt|anstatt|anstelle von|anstelle)\b")
SUFFIXED = r"(?<![\w.])(?<![a-z]-)\d{1,9}(?:\.\d{1,3})?\s?[km]\b"  # "32k": a token count where no unit says otherwise
# One word may stand between a number and its unit ("100 chat users", "60 gleichzeitige Nutzer").
BETWEEN = r"(?:(?!(?:and|und|or|oder|to|bis|but|aber|per|pro|je|each|a)\b)[a-zäöüß]{1,14}[\s-]+){0,2}"
# "16 GPUs total" over 2 nodes: 8 per node
TOTAL = r"(?<![\w.])(\d{1,5})\s{0,2}(?:gpus|cards|karten)\s{0,2}(?:total|in total|insgesamt|gesamt|overall|in all)\b"
# who is counted: people, whose number is how many there are, not how many at once ("120 Leute")
PEOPLE = (
    r"people|ppl|folks|leute|personen|analysts?|analysten|mitarbeiter\w{0,3}|staff|redakteure?n?|sachbearbeiter\w{0,3}"
    r"|kolleg\w{0,6}|developers?|devs|entwickler\w{0,2}|students?|studierende\w?|anwender\w{0,2}"
)
# weak unit words: a unit of many fields ("tokens"), or who is counted, not how many at once ("analysts");
# the field named with stronger words takes the number ("35 analysts, 12 at once": 12 at once)
WEAK_UNITS = re.compile(rf"^(tokens?|agents?|agenten|callers?|seats?|plätze|{PEOPLE})$")
# Who is counted is no count of conversations unless the sentence says they work at once: "120 Leute"
# is a head count, "fünf, sechs Analysten gleichzeitig" are six at once.
AT_ONCE = re.compile(
    r"\b(at once|at the same (?:time|moment)|at any (?:one|given) (?:time|moment)|simultaneous\w{0,3}|concurrent\w{0,3}"
    r"|in parallel|parallel\w{0,2}|gleichzeitig\w{0,2}"
    r"|zeitgleich\w{0,2}|auf einmal|zur (gleichen|selben) zeit|online|active|aktiv\w{0,2}|busy|peaks?"
    r"|spitzen?\w{0,4})\b"
)
HEADCOUNT = re.compile(rf"^({PEOPLE})$")
# a head count said as the whole ("60 scientists in total", "insgesamt 300"): not how many at once
POPULATION = re.compile(
    r"(?<![\w.])\d{1,7}(?=(?:\s[a-zäöüß]{1,14}){0,2}\s(?:in total|total|insgesamt|overall|in all|all told|im ganzen)\b)"
    r"|(?<=\binsgesamt\s)\d{1,7}|(?<=\bin total\s)\d{1,7}"
)
# "in der Spitze bis 300", "peaks at 300": the most a number field must hold
PEAK = (
    r"\b(?:peak|peaks|spitzen?|at most|up to|bis zu|höchstens|hoechstens|maximal|max|could be|might be|mehr)\b"
    r"\W{1,3}(?:\w{1,12}\W{1,3}){0,2}?(\d{1,9}\s?[km]?)\b"
)
SKIP = (
    "skip",
    "weiter",
    "überspringen",
    "egal",
    "don't know",
    "i don't know",
    "dont know",
    "no idea",
    "weiß nicht",
    "weiß ich nicht",
    "ich weiß nicht",
    "ich weiß es nicht",
    "weiß es nicht",
    "keine ahnung",
    "?",
    "-",
)
SKIPPED = frozenset(fold(s) for s in SKIP)
LONGEST = 20_000  # characters of one line read for facts
NEGATED = re.compile(
    r"\b(?:no|not|kein|keine|keinen|nicht|ohne|without|never|nie|statt|anstatt|instead of|rather than|doesn.?t"
    r"|don.?t|does not|do not|isn.?t|aren.?t)\s{1,2}(?:the\s|die\s|der\s|das\s|nur\s|just\s|have\s|has\s)?$"
)
# a clause that rules out what follows it: "nobody here wants to train anything", "niemand will trainieren"
NEGATED_CLAUSE = re.compile(
    r"\b(?:nobody|no one|noone|niemand|don.?t want to|do not want to|won.?t|will not|not going to|no plans? to"
    r"|never going to|wollen (?:wir )?(?:nicht|kein\w{0,2})|will (?:hier )?keine?r?)\b[^,.;!?]{0,30}$"
)
# said of a value just read, it is not the value wanted: "interaktiv fast nix", "speed per user is secondary"
MINOR = re.compile(
    r"^\W{0,3}(?:is |ist |are |sind )?(?:fast nix|fast nichts|kaum|hardly|barely|not really|eher nicht|secondary"
    r"|zweitrangig|egal|nebensächlich)\b"
)


@dataclass
class Understood:
    """Fields read from one answer, the words that looked like a name but matched nothing surely, and notes.

    `alternatives`: every value read for a fact that was named more than once ("fp8 or bf16");
    `variants`: the catalogue GPUs a family name leaves open ("H100": SXM, PCIe or NVL), the first
    being the one taken."""

    fields: dict[str, Any] = field(default_factory=dict)
    unsure: dict[str, list[str]] = field(default_factory=dict)
    skipped: bool = False
    invalid: str | None = None
    ranged: dict[str, tuple[int, ...]] = field(default_factory=dict)
    alternatives: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    variants: tuple[str, ...] = ()
    held: dict[str, Any] = field(default_factory=dict)  # values outside their usual range, to confirm
    held_why: dict[str, str] = field(default_factory=dict)  # why a value is held where not its range ("bytes")
    gpu_name: Any = None  # the GPU's entity (advisor.inputs.entities.Entity): where it was named
    names: list[str] = field(default_factory=list)  # the catalogue names as said: no number in them is a quantity


def _numbers(text: str) -> str:
    """Number words replaced by digits (advisor/inputs/quantities.py), '8k' kept, '1.000' joined."""
    from advisor.inputs.quantities import digits

    return digits(text)


def _count(value: str) -> int:
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([kKmM]?)", value.strip())
    if not m:
        raise ValueError(value)
    digits, scale = m.group(1), SUFFIXES[m.group(2).lower()]
    if len(digits) > 64:  # beyond every limit: the scenario check refuses it by name, unconverted
        return 10**64
    return int(digits) * scale if "." not in digits else int(float(digits) * scale)


def understand(text: str, kb: Knowledge, expecting: str | None = None) -> Understood:
    """Every scenario field the text states; `expecting` is the fact the last question asked for. A repair
    inside the text ("8x22b, nee warte, 8x7b": knowledge/dialogue.yaml `repair`) replaces, slot by slot,
    what was said before it."""
    said = text.strip()[:LONGEST]
    cut = _repair_cut(said)
    if cut is None:
        return _understand(said, kb, expecting)
    before, after = said[: cut[0]], said[cut[1] :]
    return _merged(_understand(_substituted(before, after), kb, expecting), _understand(after, kb, expecting))


@cache
def _repair() -> re.Pattern[str]:
    rows = _dialogue().get("repair") or {}
    return re.compile("|".join(f"(?:{p})" for p in rows.values()))


def _repair_cut(said: str) -> tuple[int, int] | None:
    """Where the last repair marker after the first words stands, with words after it; else None."""
    found = [m for m in _repair().finditer(said.lower()) if m.start() >= 2 and said[m.end() :].strip(" .,!?")]
    return (found[-1].start(), found[-1].end()) if found else None


def _shape(word: str) -> str:
    return re.sub(r"[0-9]+", "9", re.sub(r"[a-z]+", "a", word.lower()))


def _substituted(before: str, after: str) -> str:
    """`before` with its last word shaped like the repair's first word (a size, a version: 8x22b for 8x7b)
    replaced by that word, so that the name it stood in is read with the repair."""
    first = re.match(r"\W{0,3}([A-Za-z0-9.-]{1,24})", after)
    if not first or not re.search(r"[0-9]", first.group(1)):
        return before
    word = first.group(1).rstrip(".-")
    spans = [m for m in re.finditer(r"[A-Za-z0-9.-]{1,24}", before) if _shape(m.group(0).rstrip(".-")) == _shape(word)]
    if not spans:
        return before
    last = spans[-1]
    return before[: last.start()] + word + before[last.start() + len(last.group(0).rstrip(".-")) :]


def _merged(first: Understood, repaired: Understood) -> Understood:
    """What was said before a repair, with every slot the repair names taken from the repair."""
    for path, value in repaired.fields.items():
        first.fields[path] = value
        for table in (first.alternatives, first.ranged, first.held, first.held_why):
            table.pop(path, None)
    first.alternatives.update(repaired.alternatives)
    first.ranged.update(repaired.ranged)
    first.held.update(repaired.held)
    first.held_why.update(repaired.held_why)
    spoken = {path.rpartition(".")[2] for path in repaired.fields}
    first.unsure = {k: v for k, v in first.unsure.items() if k not in spoken} | repaired.unsure
    if "hardware.gpu" in repaired.fields:
        first.variants, first.gpu_name = repaired.variants, repaired.gpu_name
    first.skipped = first.skipped and repaired.skipped
    first.invalid = repaired.invalid or first.invalid
    return first


def _understand(raw: str, kb: Knowledge, expecting: str | None) -> Understood:
    """understand() of a text without a repair in it."""
    from advisor.inputs.letters import fold
    from advisor.inputs.quantities import blank_ruled_out, upper_of_ranges

    out = Understood()
    lowered = fold(_numbers(raw.lower()))  # "Gespraeche" as "Gespräche": both folded
    said = lowered.strip()
    if said.strip(" .!") in SKIPPED or said in SKIPPED:
        out.skipped = True
        return out
    lowered = blank_ruled_out(upper_of_ranges(lowered.strip().rstrip(" .!")))
    f = out.fields
    _precisions(lowered, out)
    table = field_table(kb.root)
    masked = _names(lowered, kb, out)
    masked = _numbers_with_units(masked, table, out, expecting)
    _values(masked, table, out, expecting)
    if "hardware.gpu" in f:
        _narrow(kb, lowered, out)
    _fraction(lowered, out)
    total = re.search(TOTAL, lowered)
    if total and isinstance(f.get("hardware.nodes"), int) and int(total.group(1)) % f["hardware.nodes"] == 0:
        f["hardware.gpus_per_node"] = int(total.group(1)) // f["hardware.nodes"]
    if expecting == "kv_cache_dtype":
        _kv_answer(out)
    asked = (table.by_fact().get(expecting) or table.by_path().get(expecting)) if expecting else None
    if asked is not None and asked.counted_by:
        asked = table.by_fact().get(asked.counted_by)  # "the server edition, 2 of them": the count
    if asked is not None and asked.path not in f and not out.unsure:
        if not f or asked.type in ("count", "tokens", "share", "gbps"):  # a number no field's words took
            _expected(masked, asked, out)
    elif asked is not None and asked.type in ("count", "tokens"):
        _peak(masked, asked, out)
    return out


def _kv_answer(out: Understood) -> None:
    """A bare precision ("fp8", "fp8 or bf16?") said to the KV-cache question is the cache's."""
    if set(out.fields) == {"precision"}:
        out.fields["kv_cache_dtype"] = out.fields.pop("precision")
        if "precision" in out.alternatives:
            out.alternatives["kv_cache_dtype"] = out.alternatives.pop("precision")


FRACTIONS = {
    "a 3rd": 1 / 3,
    "1 3rd": 1 / 3,
    "2 3rds": 2 / 3,
    "a 4th": 0.25,
    "1 4th": 0.25,
    "half": 0.5,
    "haelfte": 0.5,
    "a third": 1 / 3,
    "ein drittel": 1 / 3,
    "a quarter": 0.25,
    "ein viertel": 0.25,
}


FRACTION = re.compile(rf"\b({'|'.join(FRACTIONS)})\b")


def _fraction(lowered: str, out: Understood) -> None:
    """ "80 people but only about half online": the users a fraction after their number leaves."""
    users = out.fields.get("workload.concurrent_conversations")
    m = FRACTION.search(lowered)
    if isinstance(users, int) and m and users > 3:
        out.fields["workload.concurrent_conversations"] = round(users * FRACTIONS[m.group(1)])


def _peak(masked: str, asked: Field, out: Understood) -> None:
    """ "200 at once, at peak 300": a number after a word of the most, that no field took, raises the
    asked field to it (a planner sizes for the peak)."""
    m = re.search(PEAK, masked)
    if m:
        value = _count(m.group(1))
        if value > out.fields[asked.path]:
            out.ranged[asked.path] = (out.fields[asked.path], value)
            out.fields[asked.path] = value


def _precisions(lowered: str, out: Understood) -> None:
    """The weights' and the KV cache's precisions named ("fp8 kv cache", "the KV cache is FP8 too");
    a precision named twice is kept as alternatives ("fp8 or bf16?")."""
    said: dict[str, list[str]] = {}
    for m in re.finditer(r"\b(" + "|".join(PRECISIONS) + r")\b", lowered):
        before, after = lowered[max(0, m.start() - 30) : m.start()], lowered[m.end() : m.end() + 20]
        kv_before = bool(re.search(r"\b(?:kv|cache)(?:[ :-]{0,3}cache)?\b(?:\W{1,3}\w{1,10}){0,3}?\W{1,4}$", before))
        # "for the kv cache with contexts this long, fp8 or bf16?": the KV cache's alternatives
        kv_before = kv_before or bool(
            KV_NEAR.search(lowered[max(0, m.start() - 60) : m.start()])
            and EITHER.search(after[:8] + "|" + before[-8:])
            and not re.match(r"\W{0,3}(?:weights|gewichte)", after)
        )
        kv_after = re.match(
            r"[ -]{0,2}(?:(?:for|für|fuer|on|in|im|beim|the|den|der|die|das)[ -]{1,2}){0,2}(?:kv|cache)\b", after
        )
        path = "kv_cache_dtype" if kv_before or kv_after else "precision"
        if NEGATED.search(before[-16:]):
            continue  # "fp8 statt bf16": the one ruled out is no value said
        value = PRECISIONS[m.group(1)]
        if value not in said.setdefault(path, []):
            said[path].append(value)
    for path, values in said.items():
        out.fields[path] = values[0]
        if len(values) > 1:
            out.alternatives[path] = tuple(values)
    if "precision" not in said:
        for row in _dialogue()["widths"]:
            if re.search(row["words"], lowered):  # "4 bit": int4, nvfp4 or mxfp4? asked, not taken
                out.unsure["precision"] = list(row["precisions"])
                break


def _values(lowered: str, table: FieldTable, out: Understood, expecting: str | None) -> None:
    """The enum and yes/no fields whose words the text holds; the asked field keeps words it shares
    with another field, and words that two other fields share are taken by neither (a bare "aus").
    A field whose words name two of its values keeps both as alternatives ("TP or PP", "SXM or NVL")."""
    matched: dict[str, tuple[Any, tuple[int, int]]] = {}
    for fld in table.fields:
        hits = _hits(fld, lowered)
        if hits:
            matched[fld.path] = hits[0]
            if len(hits) > 1 and fld.type == "enum":
                out.alternatives[fld.path] = tuple(v for v, _s in sorted(hits, key=lambda h: h[1]))
    asked = (table.by_fact().get(expecting) or table.by_path().get(expecting)) if expecting else None
    if asked is not None and asked.path in matched:
        matched = _asked_keeps(matched, asked.path)
    spans = [span for _value, span in matched.values()]
    for path, (value, span) in matched.items():
        if (asked is not None and path == asked.path) or spans.count(span) == 1:
            out.fields[path] = value
    for path in [p for p in out.alternatives if p in matched and p not in out.fields]:
        del out.alternatives[path]


def _asked_keeps(matched: dict[str, tuple[Any, tuple[int, int]]], path: str) -> dict[str, tuple[Any, tuple[int, int]]]:
    """The matches left where the asked field's words stand: no other field reads them."""
    start, end = matched[path][1]
    return {p: (v, span) for p, (v, span) in matched.items() if p == path or span[1] <= start or span[0] >= end}


def _hits(fld: Field, lowered: str) -> list[tuple[Any, tuple[int, int]]]:
    """Each value of the field whose words the text holds, with where (once per value)."""
    hits: list[tuple[Any, tuple[int, int]]] = []
    for value, pattern in fld.values:
        for m in re.finditer(pattern, lowered):
            before = lowered[max(0, m.start() - 40) : m.start()]
            if (
                NEGATED.search(before[-14:])
                or NEGATED_CLAUSE.search(before)
                or MINOR.search(lowered[m.end() : m.end() + 24])
            ):
                continue  # "kein iommu=pt", "no nvlink bridge": the value is ruled out, not said
            if all(v != value for v, _s in hits):
                hits.append((value, m.span()))
            break
    return hits


def _value(kind: str, text: str) -> int | float:
    if kind == "gbps":
        return float(text)
    if kind == "share":
        share = float(text.rstrip(" %").replace(",", "."))
        return share / 100 if text.endswith("%") else share
    if kind == "count":
        number = text.strip().replace(",", ".")
        if number.endswith("k"):  # "3k users": thousands of people, not 1,024s
            return int(float(number.rstrip(" k")) * 1000)
        if re.fullmatch(r"-\d{1,64}", number):
            return int(number)
        if re.fullmatch(r"-?\d{1,64}\.\d{1,12}", number):
            return float(number)  # not a whole number: the scenario check says so
    return _count(text)


def _numbers_with_units(lowered: str, table: FieldTable, out: Understood, expecting: str | None = None) -> str:
    """Numbers with their fields' words ("60 users", "8k context", "users: 60", "prompts ~1k"), where
    two fields' words could take one number the longer words win ("batched tokens 16k" is not the
    context); then numbers written with k or M for the field that takes them ("mostly 4k, sometimes
    32k": the largest, the values kept as a range). The text is returned with every number read
    blanked, so that no other field, nor the open question, reads it again."""
    found = out.fields
    taken: list[tuple[int, int]] = []
    ranked = sorted(_unit_matches(lowered, table), key=lambda c: (bool(WEAK_UNITS.match(c[3].group("u"))), c[0], -c[1]))
    for _rank, _length, fld, m in ranked:
        span = m.span("n")
        if fld.path in found or any(span[0] < e and s < span[1] for s, e in taken):
            continue
        taken.append(span)
        if fld.path == USERS and HEADCOUNT.match(m.group("u")) and not _at_once(lowered, span, expecting):
            continue  # a head count: blanked, so that no other field reads it as its own
        found[fld.path] = _value(fld.type, m.group("n"))
    for start, end in taken:
        lowered = lowered[:start] + " " * (end - start) + lowered[end:]
    for fld in table.fields:
        for value, pattern in fld.named:
            if fld.path not in found and re.search(pattern, lowered):
                found[fld.path] = float(value) if fld.type == "gbps" else value
        if fld.suffixed and fld.path not in found:
            said = re.findall(SUFFIXED, lowered)
            if said:
                values = tuple(sorted({_count(n) for n in said}))
                found[fld.path] = values[-1]
                if len(values) > 1:
                    out.ranged[fld.path] = values
                lowered = re.sub(SUFFIXED, _blank, lowered)
    return lowered


def _at_once(text: str, span: tuple[int, int], expecting: str | None) -> bool:
    """Whether the head count at `span` counts people at once: a word of it stands by this number with no
    other number between ("fünf, sechs Analysten gleichzeitig"), or the line answers the question of the
    users; never a number said as the whole ("insgesamt 300 Mitarbeiter, davon gleichzeitig 25": 25), nor
    where the sentence asks how many of them are ("wie viele davon gleichzeitig")."""
    start, end = _sentence_bounds(text, span)
    sentence = text[start:end]
    if any(m.start() == span[0] for m in POPULATION.finditer(text, start, end)):
        return False
    if re.search(r"\b(how many|wie ?viele)\b", sentence):
        return False
    said = _said_at_once(text)
    # the answer to the users' question, unless another number is the one said of at once ("35
    # radiologists, at peak a dozen of them at the same time": 12)
    return span in said or (expecting in ("users", USERS) and not said)


AT_ONCE_NUMBER = re.compile(r"(?<![\w.,-])\d{1,7}(?![\w.,]?\d)(?![a-z])(?!\s?(?:gb|gib|tb|%))")


CLAUSE_MARK = re.compile(r"[,:()–—]|\s-\s")  # a clause ends between a word of at once and a number


def _said_at_once(text: str) -> list[tuple[int, int]]:
    """The numbers of the text said of at once: each word of at once binds the nearest number of its
    sentence with no other number between, one of its own clause first ("35 radiologists, at peak a dozen
    of them at the same time": 12; "120 Kollegen, gleichzeitig vielleicht 20": 20); never a number said
    as the whole."""
    whole = {m.start() for m in POPULATION.finditer(text)}
    numbers = [m.span() for m in AT_ONCE_NUMBER.finditer(text) if m.start() not in whole]
    out: list[tuple[int, int]] = []
    for cue in AT_ONCE.finditer(text):
        start, end = _sentence_bounds(text, cue.span())
        before = [n for n in numbers if start <= n[0] and n[1] <= cue.start()]
        after = [n for n in numbers if cue.end() <= n[0] and n[1] <= end]
        near = [n for n in (before[-1:] + after[:1]) if not re.search(r"\d", _gap(text, n, cue.span()))]
        if near:
            best = min(
                near,
                key=lambda n: (bool(CLAUSE_MARK.search(_gap(text, n, cue.span()))), len(_gap(text, n, cue.span()))),
            )
            if best not in out:
                out.append(best)
    return out


def _gap(text: str, a: tuple[int, int], b: tuple[int, int]) -> str:
    """The text between two spans."""
    return text[a[1] : b[0]] if a[1] <= b[0] else text[b[1] : a[0]]


def _sentence_bounds(text: str, span: tuple[int, int]) -> tuple[int, int]:
    """Where the sentence of `text` around `span` starts and ends."""
    start = max(text.rfind(mark, 0, span[0]) for mark in ".;!?") + 1
    ends = [i for i in (text.find(mark, span[1]) for mark in ".;!?") if i >= 0]
    return start, min(ends) if ends else len(text)


def _unit_matches(lowered: str, table: FieldTable) -> list[tuple[int, int, Field, re.Match[str]]]:
    """Every number beside a field's words: (0 for number-then-words, 1 for words-then-number, the
    length of the words, the field, the match)."""
    out = []
    for fld in table.fields:
        if not fld.unit_words:
            continue
        for m in re.finditer(
            rf"(?P<n>{NUMBER[fld.type]})[\s-]{{0,3}}{BETWEEN}(?P<u>{fld.unit_words})(?!['’]s\b)", lowered
        ):
            out.append((0, len(m.group("u")), fld, m))
        if fld.either_side:
            tail = r"\b" if fld.type == "tokens" else ""
            words = r"(?:\W{1,3}[a-zäöüß]{1,14}){0,3}?\W{1,3}"  # "gleichzeitig vielleicht etwa 20"
            for m in re.finditer(rf"(?P<u>{fld.unit_words}){words}(?P<n>{NUMBER[fld.type]}){tail}", lowered):
                out.append((1, len(m.group("u")), fld, m))
    return out


def _names(lowered: str, kb: Knowledge, out: Understood) -> str:
    """The model and the GPU (with a count) named in the text, fuzzy-matched with their digits kept
    (advisor/inputs/entities.py); two of a kind are alternatives ("H100 NVL or RTX PRO 6000?"). The
    text is returned with the names blanked, so that no count reads the "6000" of "RTX PRO 6000" or the
    "235" of "Qwen3-235B"."""
    from advisor.inputs import entities

    text = entities.spaced(lowered)
    masked = lowered  # the same letters as `text`, with '-' and '/' kept for the field words ("fine-tune")
    for kind, key in (("gpu", "hardware.gpu"), ("model", "model")):
        found = entities.distinct(kb, entities.find_all(kb, kind, text), text)
        if len(found) == 1 and WEIGHED.search(text):  # "A instead of two Bs? which one is smarter": both weighed
            weighed = entities.distinct(kb, entities.find_all(kb, kind, INSTEAD.sub(_blank, text)), text)
            found = weighed if len(weighed) > 1 else found
        if not found:
            for number in _unsure(kind, text, lowered, kb, out):  # "RTX 6000": no count of 6,000 nodes
                masked = re.sub(rf"(?<![\w]){number}(?![\w])", " " * len(number), masked)
            continue
        for e in found:
            out.names.append(masked[e.start : e.end].strip())
            masked = masked[: e.start] + " " * (e.end - e.start) + masked[e.end :]
        first = min(found, key=lambda e: e.start)
        if kind == "gpu" and entities.another_name(first, text):
            out.unsure["gpu"] = [item_id_name(kb, kind, first.id)]  # "A10G": the A10? asked, not taken
            continue
        out.fields[key] = item_id_name(kb, kind, first.id)
        if len(found) > 1:
            out.alternatives[key] = tuple(item_id_name(kb, kind, e.id) for e in sorted(found, key=lambda e: e.start))
        if kind == "gpu":
            span = _gpu_count(text, first, out)
            if span is not None:  # the count is read: no other field, nor the open question, reads it again
                masked = masked[: span[0]] + " " * (span[1] - span[0]) + masked[span[1] :]
            out.variants = (first.id,)
            out.gpu_name = first
    return masked


def _unsure(kind: str, text: str, lowered: str, kb: Knowledge, out: Understood) -> set[str]:
    """Names that a word may mean where none was matched surely: a model family ("qwen"), or a card's
    number with a word of its name ("RTX 6000": the Ada or a PRO 6000); the numbers that belong to
    those names are returned."""
    if kind == "model" and re.search(r"\b(l+ama|qwen|mistral|mixtral|deepseek|gpt|gemma|phi)", lowered):
        _unsure_model(text, kb, out)
    elif kind == "gpu":
        words = set(re.findall(r"[a-z0-9]+", text))
        numbers = {w for w in words if w.isdigit() and len(w) >= 3}
        ids = []
        for name, item_id in kb.names_of("gpu").items():
            tokens = set(name.split())
            if tokens & numbers and tokens - numbers & words and item_id not in ids:
                ids.append(item_id)
        if 1 < len(ids) <= 5:
            out.unsure["gpu"] = [kb.gpus[i].name for i in ids]
            return {n for n in numbers if any(n in name.split() for name, i in kb.names_of("gpu").items() if i in ids)}
    return set()


def _gpu_count(text: str, found: Any, out: Understood) -> tuple[int, int] | None:
    """The GPUs counted next to the name: '8x H100', 'H100 x 8'; 'an L4', 'eine einzelne A100': one. A
    machine's name counts machines ('two DGX A100': 2 nodes of 8), as does a name followed by a word for
    machines ('two H200 nodes'); a rack's count is no count of GPUs."""
    from advisor.inputs import entities

    counted = entities.count_before(text, found)
    count, span = counted if counted is not None else (None, None)
    before = text[max(0, found.start - 24) : found.start]
    after = text[found.end : found.end + 40]
    system = _system(text[max(0, found.start - 8) : found.end])
    one = re.search(r"\b(?:an?|single|a single|one|eine?[nr]?|einzelne[nr]?|1)\s{1,2}(?:nvidia\s)?$", before)
    if re.match(_dialogue()["holder_words"], after):
        return span
    if system is not None or re.match(_dialogue()["machine_words"], after):
        if count is not None and count > 1:  # "a DGX H100" is one machine, the default
            out.fields.setdefault("hardware.nodes", count)
        if system is not None and (system > 1 and (count is not None or one) or system == 1 and one and count is None):
            out.fields.setdefault("hardware.gpus_per_node", system)  # "two DGX Sparks": two nodes, of one each
        return span
    if count is not None:
        out.fields.setdefault("hardware.gpus_per_node", count)
    elif one:
        out.fields.setdefault("hardware.gpus_per_node", 1)
    return span


def _system(name: str) -> int | None:
    """The GPUs of a whole machine named (knowledge/dialogue.yaml systems), or None for a card."""
    for row in _dialogue()["systems"]:
        if re.search(row["words"], name):
            return int(row["gpus"])
    return None


def _dialogue() -> dict[str, Any]:
    from advisor.inputs.acts import document

    return document()


def _unsure_model(text: str, kb: Knowledge, out: Understood) -> None:
    from rapidfuzz import fuzz, process

    index = kb.names_of("model")
    found = process.extract(text, list(index), scorer=fuzz.token_set_ratio, limit=3, score_cutoff=60)
    out.unsure["model"] = list(dict.fromkeys(kb.models[index[m]].name for m, _s, _i in found))


def _narrow(kb: Knowledge, lowered: str, out: Understood) -> None:
    """The GPU variants a family name leaves open, given the NVLink the text states."""
    from advisor.inputs import entities

    found = out.gpu_name
    if found is None:
        return
    nvlink = out.fields.get("hardware.nvlink")
    ids = entities.variants(kb, found, entities.spaced(lowered), str(nvlink) if nvlink else None)
    if ids and ids[0] != found.id:
        out.fields["hardware.gpu"] = item_id_name(kb, "gpu", ids[0])
    out.variants = ids


def item_id_name(kb: Knowledge, kind: str, item_id: str) -> str:
    """The catalogue name for an id, as scenarios spell it."""
    return kb.gpus[item_id].name if kind == "gpu" else kb.models[item_id].name


YES = r"(yes|yeah|yep|yup|ja|jo|jap|jawohl|sure|klar|correct|richtig|genau|indeed|affirmative|y|j)"
NO = r"(no|nope|nah|nein|nee|ne|nö|noe|n|not really|eher nicht|leider nicht|negative)"


def _expected(lowered: str, asked: Field, out: Understood) -> None:
    """An answer to the question just asked, about the field `asked`, where the words name no field:
    the one number it holds ("60", "8k is plenty for them", "so um die 50"), a yes or no that opens it
    ("yes, it works"), or the one choice of the field it names."""
    said = lowered.strip(" .!,;")
    if asked.type in ("count", "tokens", "share", "gbps"):
        _expected_number(said, asked, out)
        return
    yes = re.match(rf"{YES}\b", said)
    no = re.match(rf"{NO}\b", said)
    path = asked.path
    if asked.type == "bool" and (yes or no):
        out.fields[path] = bool(yes)
    elif asked.yes_no and (yes or no):
        out.fields[path] = asked.yes_no[0] if yes else asked.yes_no[1]
    elif no and "none" in asked.choices:
        out.fields[path] = "none"  # "nö" to "are the cards joined by NVLink?"
    elif asked.type == "enum" and said:
        _expected_choice(said, asked, out)
    elif asked.bare and said and len(said.split()) <= 2 and not said.endswith("?"):
        out.fields[path] = said  # a bare name ("fp8", "w8a8"); a sentence is no value of the field


def _expected_choice(said: str, asked: Field, out: Understood) -> None:
    """The one choice of an enum question an answer names; a short answer naming none is said to be none."""
    named = [c for c in asked.choices if re.search(rf"(?<![\w-]){re.escape(c)}(?![\w-])", said)]
    if len(named) == 1:
        out.fields[asked.path] = named[0]
    elif len(said.split()) <= 2:
        out.invalid = said  # a word that is none of the choices: said so, with the choices


def _expected_number(said: str, asked: Field, out: Understood) -> None:
    """The number an answer to a number question holds; several give the largest, kept as a range."""
    # a number standing as one: after a space, a bracket, "~" or ":", never inside "{0}" or "%d"
    path = asked.path
    if path == USERS:
        said = POPULATION.sub(_blank, said)  # "60 in total, 15 at once": 15
    several = re.findall(r"(?<![^\s(~:=])(\d+(?:\.\d+)?\s*[km]?)(?![\w}%])(?![\s-]?(?:gb|gib|tb)\b)", said)
    if path == USERS and len(several) > 1:
        at_once = [said[s:e] for s, e in _said_at_once(said)]
        several = at_once or several  # "20 associates, realistically 5 or 6 at the same moment": 6
    if asked.type in ("share", "gbps"):
        rates = re.findall(r"(?<![^\s(~:=])(\d+(?:\.\d+)?)\s?(?:g|gb|gbit|gig|gbps|%)?(?![\w}%])", said)
        marked = re.findall(r"(?<![^\s(~:=])(\d+(?:\.\d+)?)\s?(?:g|gb|gbit|gig|gbps|%)(?![\w}%])", said)
        if len(rates) == 1 or len(marked) == 1:  # "die zwei ... 200G": the one with a rate's unit
            out.fields[path] = float((marked or rates)[0])
        return
    if len(several) == 1:
        out.fields[path] = _count(several[0])
    elif not several and re.match(r"(?:nur |only |just )?(?:ein|eine|einer|einen|einem|one|a single|single)\b", said):
        out.fields[path] = 1  # "ein Knoten", "just one"
    elif len(several) > 1:
        values = tuple(sorted({_count(n) for n in several}))
        out.fields[path] = values[-1]
        out.ranged[path] = values
