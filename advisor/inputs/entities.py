"""Catalogue names found in free text, as spans that keep their own digits.

"8x RTX PRO 6000 Server Edition" holds one entity, the Server Edition card, at a known place: the
"6000" belongs to the name and is no count, and the "8x" before it counts the cards. Names are matched
fuzzily (rapidfuzz's partial ratio with its alignment) against every catalogue name and alias whose
digits the text holds, so a typo costs confidence, not the match; the score is kept.

A name that several catalogue entries begin with ("h100": the SXM, PCIe and NVL cards) is a family:
the entity carries every variant the text does not rule out ("not the PCIe ones" rules one out; a
stated NVSwitch keeps the cards that take one), and the caller asks where they differ.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from advisor.kb.knowledge import Knowledge

SURE = 90  # the least partial-ratio score a name is taken at
# The words that rule out what follows them within a few words: "not the PCIe ones", "nicht die NVL".
NEGATION = re.compile(
    r"\b(?:not|never|rather than|instead of|except|forget|nicht|kein\w{0,2}|statt|anstatt|anstelle|außer"
    r"|ausser|vergiss|swap\w{0,3}|replac\w{1,3}|tauschen|ersetzen|getauscht|ersetzt)\b"
    r"(?:\W{1,3}(?:the|die|der|das|den|dem|a|an|eine?n?|unsere?n?|our|those|these|diese[nr]?|both|beide|our))?\W{1,3}$"
)


@dataclass(frozen=True)
class Entity:
    """A catalogue entry named in the text: its id, the span it covers, the score, and for a family
    name the variants still open (one id: no question)."""

    kind: str
    id: str
    start: int
    end: int
    score: float
    name: str
    variants: tuple[str, ...] = ()


def spaced(text: str) -> str:
    """The text as catalogue names are normalised, letter for letter: '-', '_' and '/' become spaces,
    so a span found in it is a span of the text."""
    return text.lower().replace("-", " ").replace("_", " ").replace("/", " ")


def _negated(text: str, start: int) -> bool:
    return NEGATION.search(text[max(0, start - 40) : start]) is not None


SAID = 2000  # characters: names are looked for in a line's first 2,000 (a pasted page is read by the audit)


def find(kb: Knowledge, kind: str, text: str) -> Entity | None:
    """The catalogue entry of `kind` ('gpu' or 'model') the text names surest, not negated."""
    from rapidfuzz import fuzz

    text = text[:SAID]
    index = kb.names_of(kind)
    numbers = set(re.findall(r"\d+", text))
    words = set(re.findall(r"[\w]+", text))
    best: Entity | None = None
    for name, item_id in index.items():
        if len(name) < 3:  # a two-letter name ("l4") only as a word of its own, never inside "l40s"
            if name not in words and f"{name}s" not in words and f"{name}er" not in words:
                continue
            m = re.search(rf"(?<![\w]){re.escape(name)}(?:s|er)?(?![\w])", text)
            if m is None or _negated(text, m.start()):
                continue
            found = Entity(kind, item_id, m.start(), m.end(), 100.0, name)
        else:
            if not set(re.findall(r"\d+", name)) <= numbers:
                continue
            if len(name) > len(text):
                continue
            al = fuzz.partial_ratio_alignment(name, text, score_cutoff=SURE)
            if al is None or _negated(text, al.dest_start):
                continue
            start, end = _widen(text, al.dest_start, al.dest_end)
            found = Entity(kind, item_id, start, end, al.score, name)
        if best is None or (found.score, len(found.name)) > (best.score, len(best.name)):
            best = found
    return best


def _widen(text: str, start: int, end: int) -> tuple[int, int]:
    """A fuzzy span grown to whole words: 'rtx pro 600' found in 'rtx pro 6000s' covers the word; a
    memory size right after a card's name is the name's ('H100 NVL 94GB')."""
    while start > 0 and text[start - 1].isalnum():
        start -= 1
    while end < len(text) and text[end].isalnum():
        end += 1
    size = re.match(r"\s{0,2}\d{2,3}\s?gb?\b", text[end : end + 10])
    return start, end + (size.end() if size else 0)


def variants(kb: Knowledge, entity: Entity, text: str, nvlink: str | None = None) -> tuple[str, ...]:
    """The catalogue ids a family name may mean, less those the text rules out: every entry with a
    name that begins with the matched name's words, its distinguishing words not negated in the text,
    and, for a stated NVLink, taking that link."""
    stem = _bare(entity.name)  # "DGX A100": the A100s, in the machine's SXM form
    ids = _family_ids(kb, entity, stem, text)
    if entity.kind == "gpu":
        ids = _fitting(kb, entity, stem, ids, nvlink)
    if entity.id in ids and _ruled_out_default(kb, entity, text):
        ids.remove(entity.id)
    named = [i for i in ids if any(said_word(w, text) for w in own_words(kb, i, stem, tuple(ids)))]
    return (named[0],) if len(named) == 1 else tuple(ids)  # "DGX A100 mit den 40-GB-Karten": the 40GB


def _family_ids(kb: Knowledge, entity: Entity, stem: str, text: str) -> list[str]:
    """The entity's id and every other entry with a name that begins with the family's words, not ruled out."""
    prefix = stem + " "
    ids = [entity.id]
    for name, item_id in kb.names_of(entity.kind).items():
        if name.startswith(prefix) and item_id not in ids and not _ruled_out(name[len(prefix) :], text):
            ids.append(item_id)
    return ids


def _fitting(kb: Knowledge, entity: Entity, stem: str, ids: list[str], nvlink: str | None) -> list[str]:
    """The variants of a machine's form (a DGX's SXM) and taking the NVLink stated, where any do."""
    if stem != entity.name:
        ids = [i for i in ids if kb.gpus[i].form_factor == kb.gpus[entity.id].form_factor] or ids
    if nvlink and nvlink != "none":
        ids = [i for i in ids if nvlink in kb.gpus[i].nvlink_options] or ids
    return ids


def own_words(kb: Knowledge, item_id: str, stem: str, ids: tuple[str, ...]) -> set[str]:
    """The words of a variant's names after the family's own that no other variant has ('server', 'nvl',
    '40gb')."""
    index = kb.names_of("gpu")

    def words(i: str) -> set[str]:
        return {w for n, j in index.items() if j == i and n.startswith(stem + " ") for w in n[len(stem) :].split()}

    others = set().union(*(words(i) for i in ids if i != item_id))
    return {w for w in words(item_id) - others if len(w) > 2 and not w.isdigit()}


def said_word(word: str, text: str) -> bool:
    """Whether the text says a name's word, not ruled out ('40gb' also as '40 GB' or '40-GB')."""
    pattern = re.escape(word)
    size = re.fullmatch(r"(\d{1,3})gb", word)
    if size:
        pattern = rf"{size.group(1)}[\s-]?gb"
    for m in re.finditer(rf"(?<![\w]){pattern}(?![\w])", text):
        if not _negated(text, m.start()):
            return True
    return False


def _ruled_out(rest: str, text: str) -> bool:
    """Whether a variant's own words ('pcie' of 'h100 pcie') stand negated in the text."""
    for word in rest.split():
        if len(word) < 3 or word.isdigit() or re.fullmatch(r"\d+gb", word):
            continue
        for m in re.finditer(rf"(?<![\w]){re.escape(word)}", text):
            if _negated(text, m.start()):
                return True
    return False


def _ruled_out_default(kb: Knowledge, entity: Entity, text: str) -> bool:
    """Whether the text negates the default variant's own form ('not SXM' for a bare 'h100')."""
    names = [n for n, i in kb.names_of(entity.kind).items() if i == entity.id and n.startswith(entity.name + " ")]
    return any(_ruled_out(n[len(entity.name) + 1 :], text) for n in names)


def by_token(kb: Knowledge, kind: str, text: str) -> Entity | None:
    """A model named by the one token of its names that no other model has, a size with letters
    ("the 120b", "R1", "8x7b", "das Qwen3 mit 30B"): taken at the score of a sure match's floor."""
    owners: dict[str, set[str]] = {}
    for name, item_id in kb.names_of(kind).items():
        for token in name.split():
            if re.search(r"\d", token) and re.search(r"[a-z]", token) and len(token) >= 2:
                owners.setdefault(token, set()).add(item_id)
    for m in re.finditer(r"[a-z0-9]+", text[:SAID]):
        ids = owners.get(m.group(0))
        if ids is not None and _after_product_code(text, m.start()):
            continue  # "ThinkSystem SR675 V3": the server's generation, not DeepSeek-V3
        if ids is not None and len(ids) == 1 and not _negated(text, m.start()):
            return Entity(kind, next(iter(ids)), m.start(), m.end(), float(SURE), m.group(0))
    return None


def _after_product_code(text: str, start: int) -> bool:
    """Whether the word before `start` is a product code of letters and digits ("sr675", "xe9680")."""
    m = re.search(r"(?<![a-z0-9])([a-z0-9]{1,20})\s{1,2}$", text[max(0, start - 30) : start])
    return bool(m and re.search(r"[a-z]", m.group(1)) and re.search(r"\d{3}", m.group(1)))


def find_all(kb: Knowledge, kind: str, text: str, most: int = 3) -> list[Entity]:
    """The distinct catalogue entries of `kind` the text names, surest first, each at its own place
    ("H100 NVL or the RTX PRO 6000 Server Edition": two)."""
    found: list[Entity] = []
    rest = text
    while len(found) < most:
        e = find(kb, kind, rest)
        if e is None and kind == "model":
            e = by_token(kb, kind, rest)
        if e is None:
            break
        if all(e.id != f.id for f in found):
            found.append(e)
        rest = rest[: e.start] + " " * (e.end - e.start) + rest[e.end :]
    return found


SYSTEM_WORDS = ("nvidia", "geforce", "dgx", "hgx")  # words before a card's name that name its maker or machine


def _bare(name: str) -> str:
    words = name.split()
    while len(words) > 1 and words[0] in SYSTEM_WORDS:
        words = words[1:]
    return " ".join(words)


def distinct(kb: Knowledge, found: list[Entity], text: str) -> list[Entity]:
    """The entities that name different things: where one mention is a family's name and another one of
    its variants ("DGX A100 ... A100 40GB"), the variant stands for both."""
    kept: list[Entity] = []
    for e in found:
        same = next((k for k in kept if _one_family(k.name, e.name)), None)
        if same is None:
            kept.append(e)
            continue
        specific = e if len(_bare(e.name)) > len(_bare(same.name)) else same
        first = e if e.start < same.start else same  # the first mention carries the count ("zwei DGX A100")
        kept[kept.index(same)] = Entity(e.kind, specific.id, first.start, first.end, specific.score, specific.name)
    return kept


def _one_family(a: str, b: str) -> bool:
    a, b = _bare(a), _bare(b)
    return a == b or b.startswith(a + " ") or a.startswith(b + " ")


def another_name(entity: Entity, text: str) -> bool:
    """Whether the word found is the name with one letter more, as another product's name is ('A10G' is
    no A10); a plural's s is the name."""
    said = re.sub(r"[^a-z0-9]", "", text[entity.start : entity.end])
    name = re.sub(r"[^a-z0-9]", "", entity.name)
    return said.startswith(name) and len(said) == len(name) + 1 and said[-1].isalpha() and said[-1] != "s"


def count_before(text: str, entity: Entity) -> tuple[int, tuple[int, int]] | None:
    """The count written next to a GPU name, and where: '8x H100', '8 × RTX PRO 6000', 'H100 x8'."""
    offset = max(0, entity.start - 24)
    m = re.search(
        r"(?<![\w.,])(\d{1,4})\s{0,2}(?:x|×|\*|gpus?|cards?|karten|stück)?\s{0,2}(?:nvidia\s)?$",
        text[offset : entity.start],
    )
    if m:
        return int(m.group(1)), (offset + m.start(1), offset + m.end(1))
    m = re.match(r"(?:s|er)?\s{0,2}(?:x|×|\*)\s{0,2}(\d{1,4})\b", text[entity.end : entity.end + 16])
    if m:
        return int(m.group(1)), (entity.end + m.start(1), entity.end + m.end(1))
    return None
