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
from typing import Any

from advisor.inputs.fields import Field, FieldTable, field_table
from advisor.inputs.scenario import SUFFIXES
from advisor.kb.knowledge import Knowledge

WORDS = {
    "one": 1,
    "a": 1,
    "an": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "twelve": 12,
    "sixteen": 16,
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "hundred": 100,
    "ein": 1,
    "eine": 1,
    "einer": 1,
    "eins": 1,
    "zwei": 2,
    "drei": 3,
    "vier": 4,
    "fünf": 5,
    "sechs": 6,
    "sieben": 7,
    "acht": 8,
    "neun": 9,
    "zehn": 10,
    "zwölf": 12,
    "sechzehn": 16,
    "zwanzig": 20,
    "dreißig": 30,
    "vierzig": 40,
    "fünfzig": 50,
    "sechzig": 60,
    "hundert": 100,
}
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
}
# How a number of each field type is written in free text; tokens keep their k/M suffix. A number
# glued to letters ("fp8", "h200") is part of a name, not a count.
NUMBER = {
    # a sign or a fraction is read with the number (it is refused by name, never read as its last digits:
    # "-5 users" is not 5 users, nor "2,5 Nutzer" 5); a dash between two numbers is a range, not a sign
    "count": r"(?<![\w.,])-?\d+(?:[.,]\d+)?",
    "tokens": r"(?<![\w.])\d+(?:\.\d+)?\s*[km]?",
    "gbps": r"(?<![\w.])\d+(?:\.\d+)?",
}
# One word may stand between a number and its unit ("100 chat users", "60 gleichzeitige Nutzer").
BETWEEN = r"(?:[a-zäöüß]+[\s-]+)?"
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
GPUS = r"(gpus?|cards?|karten?|grafikkarten?|x|×)"


@dataclass
class Understood:
    """Fields read from one answer, the words that looked like a name but matched nothing surely, and notes."""

    fields: dict[str, Any] = field(default_factory=dict)
    unsure: dict[str, list[str]] = field(default_factory=dict)
    skipped: bool = False
    invalid: str | None = None
    ranged: dict[str, tuple[int, ...]] = field(default_factory=dict)


def _numbers(text: str) -> str:
    """Number words replaced by digits, '8k' kept, '1.000' (German thousands) joined."""
    text = re.sub(r"(?<=\d)[.,](?=\d{3}\b)", "", text)
    out = []
    for token in re.split(r"(\W+)", text):
        out.append(str(WORDS[token.lower()]) if token.lower() in WORDS and token.lower() not in ("a", "an") else token)
    return "".join(out)


def _count(value: str) -> int:
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([kKmM]?)", value.strip())
    if not m:
        raise ValueError(value)
    digits, scale = m.group(1), SUFFIXES[m.group(2).lower()]
    if len(digits) > 64:  # beyond every limit: the scenario check refuses it by name, unconverted
        return 10**64
    return int(digits) * scale if "." not in digits else int(float(digits) * scale)


def understand(text: str, kb: Knowledge, expecting: str | None = None) -> Understood:
    """Every scenario field the text states; `expecting` is the fact the last question asked for."""
    out = Understood()
    raw = text.strip()
    lowered = _numbers(raw.lower())
    said = re.sub(r"\bweiss\b", "weiß", lowered).strip()  # "ss" where the keyboard has no ß
    if said.strip(" .!") in SKIP or said in SKIP:
        out.skipped = True
        return out
    lowered = lowered.strip().rstrip(" .!")
    f = out.fields

    table = field_table(kb.root)
    lowered = _numbers_with_units(lowered, table, f)
    for m in re.finditer(r"\b(" + "|".join(PRECISIONS) + r")\b", lowered):
        before, after = lowered[max(0, m.start() - 16) : m.start()], lowered[m.end() : m.end() + 12]
        kv_before = re.search(
            r"(kv|cache)(?:[ :-]{0,4}-?cache)?(?:[ :-]{0,4}(?:in|als|as|is|ist|are|sind|=))?"
            r"(?:[ :-]{0,4}(?:auch|also|too|ebenfalls))?[ :]{0,4}$",
            before,
        )
        if kv_before or re.match(r"[ -]?(kv|cache)", after):
            f["kv_cache_dtype"] = PRECISIONS[m.group(1)]
        else:
            f.setdefault("precision", PRECISIONS[m.group(1)])

    _values(lowered, table, f, expecting)

    _names(raw, lowered, kb, out)
    if expecting == "kv_cache_dtype" and set(f) == {"precision"}:  # a bare "fp8" to the KV-cache question
        f["kv_cache_dtype"] = f.pop("precision")
    if expecting and not f and not out.unsure:
        asked = table.by_fact().get(expecting) or table.by_path().get(expecting)
        if asked is not None:
            _expected(lowered, asked, out)
    return out


def _values(lowered: str, table: FieldTable, found: dict[str, Any], expecting: str | None) -> None:
    """The enum and yes/no fields whose words the text holds; the asked field keeps words it shares
    with another field, and words that two other fields share are taken by neither (a bare "aus")."""
    matched: dict[str, tuple[Any, tuple[int, int]]] = {}
    for fld in table.fields:
        for value, pattern in fld.values:
            m = re.search(pattern, lowered)
            if m:
                matched[fld.path] = (value, m.span())
                break
    asked = (table.by_fact().get(expecting) or table.by_path().get(expecting)) if expecting else None
    if asked is not None and asked.path in matched:
        start, end = matched[asked.path][1]
        matched = {
            path: (value, span)
            for path, (value, span) in matched.items()
            if path == asked.path or span[1] <= start or span[0] >= end
        }
    spans = [span for _value, span in matched.values()]
    for path, (value, span) in matched.items():
        if (asked is not None and path == asked.path) or spans.count(span) == 1:
            found[path] = value


def _value(kind: str, text: str) -> int | float:
    if kind == "gbps":
        return float(text)
    if kind == "count":
        number = text.strip().replace(",", ".")
        if re.fullmatch(r"-\d{1,64}", number):
            return int(number)
        if re.fullmatch(r"-?\d{1,64}\.\d{1,12}", number):
            return float(number)  # not a whole number: the scenario check says so
    return _count(text)


def _numbers_with_units(lowered: str, table: FieldTable, found: dict[str, Any]) -> str:
    """Numbers with their fields' words ("60 users", "8k context", "users: 60"); the text is returned
    without the numbers of fields whose words may stand on either side, so no other field reads them."""
    numbered = [f for f in table.fields if f.unit_words]
    # First every "number, then words" form, then the "words, then number" forms: the first is the surer.
    for fld in numbered:
        m = re.search(rf"(?P<n>{NUMBER[fld.type]})\s*{BETWEEN}(?:{fld.unit_words})", lowered)
        if m:
            found[fld.path] = _value(fld.type, m.group("n"))
            if fld.either_side:
                lowered = lowered.replace(m.group(0), " ")
    for fld in numbered:
        if not fld.either_side or fld.path in found:
            continue
        tail = r"\b" if fld.type == "tokens" else ""
        m = re.search(rf"(?:{fld.unit_words})[^\d,;]{{0,12}}?(?P<n>{NUMBER[fld.type]}){tail}", lowered)
        if m:
            found[fld.path] = _value(fld.type, m.group("n"))
            lowered = lowered.replace(m.group(0), " ")
    return lowered


def _names(raw: str, lowered: str, kb: Knowledge, out: Understood) -> None:
    """The model and the GPU (with a count) named in the text, fuzzy-matched with the numbers kept."""
    from rapidfuzz import fuzz, process

    from advisor.kb.knowledge import norm_name

    text = norm_name(lowered)
    # read the text once, not once per catalogue name: a pasted page must stay linear
    numbers_in_text = set(re.findall(r"\d+", text))
    words_in_text = set(re.findall(r"[\w-]+", text))
    for kind, key in (("gpu", "hardware.gpu"), ("model", "model")):
        index = kb.names_of(kind)
        best: tuple[float, str, str] | None = None
        for name, item_id in index.items():
            if len(name) < 3:  # a two-letter name ("l4") only as a word of its own, never inside "l40s"
                alone = (
                    name in words_in_text
                    if re.fullmatch(r"[\w-]+", name)
                    else re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text)
                )
                if alone and best is None:
                    best = (100.0, name, item_id)
                continue
            digits = set(re.findall(r"\d+", name))
            if not digits <= numbers_in_text:
                continue
            score = fuzz.partial_ratio(name, text) if len(name) <= len(text) else fuzz.ratio(name, text)
            if score >= 90 and (best is None or (score, len(name)) > (best[0], len(best[1]))):
                best = (score, name, item_id)
        if best:
            out.fields[key] = item_id_name(kb, kind, best[2])
            if kind == "gpu":
                m = re.search(rf"(\d+)\s*(?:{GPUS})?\s*(?:x\s*)?[^\d]{{0,3}}{re.escape(best[1].split()[0])}", text)
                one = re.search(
                    rf"\b(?:an?|single|a single|eine?[nr]?|einzelne[nr]?)\s+{re.escape(best[1].split()[0])}", text
                )
                if m:
                    out.fields.setdefault("hardware.gpus_per_node", int(m.group(1)))
                elif one:
                    out.fields.setdefault("hardware.gpus_per_node", 1)
        elif kind == "model" and re.search(r"\b(l+ama|qwen|mistral|mixtral|deepseek|gpt|gemma|phi)", lowered):
            found = process.extract(text, list(index), scorer=fuzz.token_set_ratio, limit=3, score_cutoff=60)
            out.unsure["model"] = list(dict.fromkeys(kb.models[index[m]].name for m, _s, _i in found))


def item_id_name(kb: Knowledge, kind: str, item_id: str) -> str:
    """The catalogue name for an id, as scenarios spell it."""
    return kb.gpus[item_id].name if kind == "gpu" else kb.models[item_id].name


def _expected(lowered: str, asked: Field, out: Understood) -> None:
    """A bare answer ("60", "yes", "8k", "fp8") to the question just asked, about the field `asked`."""
    m = re.fullmatch(r"\s*(?:(?:about|circa|ca\.?|etwa|rund|~)\s*)?(\d+(?:\.\d+)?\s*[km]?)\s*", lowered)
    yes = re.fullmatch(r"\s*(yes|ja|y|j|jawohl|sure|klar)\s*", lowered)
    no = re.fullmatch(r"\s*(no|nein|n|nope)\s*", lowered)
    path = asked.path
    several = re.findall(r"(?<![\w.])(\d+(?:\.\d+)?\s*[km]?)\b", lowered)
    if asked.type in ("count", "tokens") and m:
        out.fields[path] = _count(m.group(1))
    elif asked.type in ("count", "tokens") and len(several) > 1:
        values = tuple(sorted({_count(n) for n in several}))
        out.fields[path] = values[-1]
        out.ranged[path] = values
    elif asked.type in ("share", "gbps") and m:
        out.fields[path] = float(m.group(1))
    elif asked.type == "bool" and (yes or no):
        out.fields[path] = bool(yes)
    elif asked.yes_no and (yes or no):
        out.fields[path] = asked.yes_no[0] if yes else asked.yes_no[1]
    elif asked.type == "enum" and lowered.strip():
        if lowered.strip() in asked.choices:
            out.fields[path] = lowered.strip()
        else:
            out.invalid = lowered.strip()
    elif asked.bare and lowered.strip():
        out.fields[path] = lowered.strip()
