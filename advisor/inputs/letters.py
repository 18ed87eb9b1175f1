"""German letters folded as keyboards without them write them: ä as ae, ö as oe, ü as ue, ß as ss.

The free-text reader folds both what was typed and its own patterns, so "Gespräche" and "Gespraeche",
"weiß" and "weiss" read alike, and a pattern is written once, with its umlauts."""

from __future__ import annotations

FOLD = str.maketrans({"ä": "ae", "ö": "oe", "ü": "ue", "ß": "ss", "Ä": "Ae", "Ö": "Oe", "Ü": "Ue"})


def fold(text: str) -> str:
    """The text with ä, ö, ü and ß written as ae, oe, ue and ss."""
    return text.translate(FOLD)
