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
    "dozen": 12,
    "both": 2,
    "ein": 1,
    "eine": 1,
    "einer": 1,
    "eins": 1,
    "einen": 1,
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
    "dutzend": 12,
}
LONGEST = 2000  # characters: a longer text (a pasted log) keeps its words; numbers in words are a speaker's
# "4, not 8", "not 8 but 4", "statt 8", "instead of 8", "8? no, 4": the number after the cue is ruled out
RULED_OUT = re.compile(
    r"\b(?:not|nicht|statt|anstatt|anstelle von|instead of|rather than|no longer|nicht mehr)\s{1,3}"
    r"(?:the\s|die\s|der\s)?(\d[\d.,]{0,12}\s?[km]?)\b"
)
PARTITIVE = re.compile(r"\b\d{1,4}\s(?:of the|of our|of|der|von den|von)\s(\d{1,4})\b")


def digits(text: str) -> str:
    """The text with numbers in words written as digits (lower-case text in, lower-case text out)."""
    text = re.sub(r"(?<=\d)[.,](?=\d{3}\b)", "", text)  # 1.000 / 1,000
    if len(text) <= LONGEST:
        for lang in ("en", "de"):
            try:
                text = alpha2digit(text, lang)
            except (ValueError, OverflowError):  # a reader's refusal leaves the words as they are
                continue
    return "".join(_small(token) for token in re.split(r"(\W+)", text))


def _small(token: str) -> str:
    return str(SMALL[token]) if token in SMALL else token


def blank_ruled_out(text: str) -> str:
    """The text with ruled-out numbers and partitives' wholes blanked (same length, spans kept)."""
    for pattern in (RULED_OUT, PARTITIVE):
        text = pattern.sub(lambda m: m.group(0)[: m.start(1) - m.start(0)] + " " * len(m.group(1)), text)
    return text
