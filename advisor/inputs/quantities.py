"""Numbers as people say them, turned into digits: "sixteen thousand", "zweihundertfünfzig",
"vierundzwanzig", "a dozen", "1.000" (German thousands), "two" and "zwei".

Numbers in words of any size are read by text2num (a maintained reader of spelled numbers in English,
German and other languages, with compounds such as "zweiunddreißigtausend" that a word list cannot
hold); the words it leaves alone on purpose (isolated small numbers, which are often pronouns: "the
one with NVLink") are read from a short list where they stand before a noun. Numbers that are ruled
out ("4, not 8"; "statt 8 lieber 4") and partitives ("one of the two nodes": a part of a whole, no
count of it) are blanked, so no field reads them.
"""

from __future__ import annotations

import re

from text_to_num import alpha2digit

SMALL = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "both": 2,
    "eins": 1,  # "ein", "eine" are articles as often as counts: the readers of counts take them by name
    "zwei": 2,
    "zwo": 2,
    "beide": 2,
    "beiden": 2,
    "drei": 3,
    "vier": 4,
    "fünf": 5,
    "fuenf": 5,
    "sechs": 6,
    "sieben": 7,
    "acht": 8,
    "neun": 9,
    "zehn": 10,
    "elf": 11,
    "zwölf": 12,
    "zwoelf": 12,
}
# "a few hundred", "ein paar hundert", "several thousand": an order of magnitude, not a count
VAGUE = re.compile(
    r"\b(?:a few|a couple(?: of)?|several|many|ein paar|einige|mehrere|viele|etliche)\s(?:100|1000)s?\b"
    r"|\b(?:hunderte|tausende|hundreds|thousands)\b"
    r"|\b(?:ein paar|a few|a couple(?: of)?|several|einige|mehrere) (?:hundert|hundred|thousand|tausend)\b"
)
TIMES_DOZEN = re.compile(r"\b(\d{1,3})\s(?:dozen|dutzend)\b")
LONGEST = 2000  # characters: a longer text (a pasted log) keeps its words; numbers in words are a speaker's
# "4, not 8", "not 8 but 4", "statt 8", "instead of 8", "8? no, 4": the number after the cue is ruled out
RULED_OUT = re.compile(
    r"\b(?:not|nicht|statt|anstatt|anstelle von|instead of|rather than|no longer|nicht mehr|don.?t need|do not need"
    r"|no need for|brauchen keine?n?)\s{1,3}"
    r"(?:the\s|die\s|der\s)?(\d[\d.,]{0,12}\s?[km]?)\b"
)
PARTITIVE = re.compile(r"\b\d{1,4}\s(?:of the|of our|of|der|von den|von)\s(\d{1,4})\b")


# "budget so um die 15k", "15k €", "$20k": money, not tokens or users
MONEY = re.compile(
    r"\b(budget|preis|price|kosten|costs?|eur|euro|usd|dollar)\W{1,3}(?:\w{1,8}\W{1,3}){0,3}?(\d{1,9}(?:[.,]\d{1,3})?\s?[km]?)\b"
    r"|(?:[$€]\s?)(\d{1,9}(?:[.,]\d{1,3})?\s?[km]?)\b|\b(\d{1,9}(?:[.,]\d{1,3})?\s?[km]?)\s?(?:€|\$|eur\b|euro\b|usd\b|dollar)"
)


def digits(text: str) -> str:
    """The text with numbers in words written as digits (lower-case text in, lower-case text out)."""
    text = re.sub(r"(?<=\d)[.,](?=\d{3}\b)", "", text)  # 1.000 / 1,000
    text = VAGUE.sub(blank, text)  # "a few hundred" in words, before they become digits
    if len(text) <= LONGEST:
        for lang in ("en", "de"):
            try:
                text = alpha2digit(text, lang)
            except (ValueError, OverflowError):  # a reader's refusal leaves the words as they are
                continue
    # "12 thousand" → "12 1000" (a number in digits before a word for a power): one number
    text = re.sub(
        r"\b(\d{1,3}(?:\.\d{1,3})?)\s(1000|1000000)\b", lambda m: f"{float(m.group(1)) * int(m.group(2)):g}", text
    )
    text = re.sub(r"\b(tausend|1000) dank\b", "thanks", text)  # "1000 Dank" is thanks, no count
    text = VAGUE.sub(blank, text)  # "a few 100": no number a planner can take
    return _dozens("".join(_small(token) for token in re.split(r"(\W+)", text)))


def blank(m: re.Match[str]) -> str:
    """A match's text as spaces of its length (spans kept)."""
    return " " * len(m.group(0))


def _dozens(text: str) -> str:
    """ "2 dozen" as 24; a dozen alone is 12."""
    text = TIMES_DOZEN.sub(lambda m: str(int(m.group(1)) * 12), text)
    return re.sub(r"\b(?:dozen|dutzend)\b", "12", text)


def _small(token: str) -> str:
    return str(SMALL[token]) if token in SMALL else token


_NUM = r"(\d{1,9}(?:[.,]\d{1,3})?)(\s?[km](?![a-z]))?"
RANGES = (
    re.compile(rf"(?<![\w.,-]){_NUM}(\s{{0,2}}(?:-|–|to|bis)\s{{0,2}}){_NUM}(?![\w])"),
    re.compile(rf"\b(?:between|zwischen)\s{{1,2}}{_NUM}(\s{{1,2}}(?:and|und)\s{{1,2}}){_NUM}(?![\w])"),
)


# two neighbouring counts said one after the other: "fünf, sechs Analysten", "two, three nodes"
NEIGHBOURS = re.compile(r"(?<![\w.,-])(\d{1,4}),\s{1,2}(\d{1,4})(?=\s[a-zäöüß])")


def upper_of_ranges(text: str) -> str:
    """A range said ("30-50 users", "between 4 and 8k", "fünf bis zehn", "fünf, sechs") as its upper
    end, which a careful planner sizes for; the lower end is blanked (same length) and takes the upper's
    k or M."""

    def neighbours(m: re.Match[str]) -> str:
        if int(m.group(2)) != int(m.group(1)) + 1:
            return m.group(0)  # "2, 4": a list, not an approximation
        return " " * (m.start(2) - m.start(0)) + m.group(2)

    def upper(m: re.Match[str]) -> str:
        low, high = _amount(m.group(1), m.group(2) or m.group(5)), _amount(m.group(4), m.group(5))
        if high <= low:
            return m.group(0)  # "2024-11", "8-2": no range
        start = m.start(1) - m.start(0)
        kept = m.group(4) + (m.group(5) or m.group(2) or "")
        return m.group(0)[:start] + " " * (len(m.group(0)) - start - len(kept)) + kept

    for pattern in RANGES:
        text = pattern.sub(upper, text)
    return NEIGHBOURS.sub(neighbours, text)


def _amount(digits: str, suffix: str | None) -> float:
    scale = {"k": 1000, "m": 1000000}.get((suffix or "").strip(), 1)
    return float(digits.replace(",", ".")) * scale


def blank_ruled_out(text: str) -> str:
    """The text with ruled-out numbers and partitives' wholes blanked (same length, spans kept)."""
    for pattern in (RULED_OUT, PARTITIVE):
        text = pattern.sub(lambda m: m.group(0)[: m.start(1) - m.start(0)] + " " * len(m.group(1)), text)
    return MONEY.sub(_blank_money, text)


def _blank_money(m: re.Match[str]) -> str:
    group = next(i for i in (2, 3, 4) if m.group(i))
    start, end = m.start(group) - m.start(0), m.end(group) - m.start(0)
    return m.group(0)[:start] + " " * (end - start) + m.group(0)[end:]


def ruled_out(text: str) -> tuple[float, float | None] | None:
    """'4, not 8' / 'doch 4 statt 8': the number ruled out and the number said instead (None where the
    line says no other), or None where nothing is ruled out."""
    said = digits(text)
    m = RULED_OUT.search(said)
    if m is None:
        return None
    wrong = _amount(*_split(m.group(1)))
    rest = said[: m.start(1)] + " " * len(m.group(1)) + said[m.end(1) :]
    other = re.search(r"(?<![\w.,-])(\d{1,9}(?:[.,]\d{1,3})?)(\s?[km](?![a-z]))?(?![\w])", rest)
    return wrong, (_amount(other.group(1), other.group(2)) if other else None)


def _split(number: str) -> tuple[str, str | None]:
    m = re.fullmatch(r"(\d[\d.,]{0,12}?)\s?([km])?", number.strip())
    return (m.group(1), m.group(2)) if m else (number, None)
