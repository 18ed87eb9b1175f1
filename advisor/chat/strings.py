"""The chat app's words: every UI string comes from strings.yaml beside this module, and every fact's
short name from the field table (knowledge/fields.yaml), in English and German, and every choice of a
fact in the words of its language. A missing key is a KeyError at once (the tests render every screen
in both languages)."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from advisor.i18n import LANGS, number

__all__ = ["LANGS", "choice_label", "fact_label", "format_value", "t"]


@cache
def _table() -> dict[str, dict[str, Any]]:
    from advisor.inputs.fields import field_table
    from advisor.yamlio import load_file

    data = load_file(Path(__file__).with_name("strings.yaml"))
    facts = {f.fact: dict(f.label.texts) for f in field_table().fields}
    return {"strings": dict(data["strings"]), "facts": facts, "choices": dict(data.get("choices") or {})}


def t(key: str, lang: str, **values: Any) -> str:
    """The UI string `key` in `lang`, with `{name}` placeholders filled from `values`."""
    entry = _table()["strings"][key]
    text = entry.get(lang) or entry["en"]
    return text.format(**values) if values else text


def fact_label(fact: str, lang: str) -> str:
    """The short name of a fact ('users', 'Nutzer'), or the fact's own name where none is given."""
    entry = _table()["facts"].get(fact)
    return (entry.get(lang) or entry["en"]) if entry else fact


def choice_label(fact: str, value: Any, lang: str) -> str:
    """A choice of `fact` in the words of `lang` ('aus' for the IOMMU's `off`); the value itself where
    no words are given (YAML reads `off` as False: shown as 'off')."""
    key = {False: "off", True: "on"}.get(value, str(value)) if isinstance(value, bool) else str(value)
    entry = _table()["choices"].get(fact, {}).get(key)
    return (entry.get(lang) or entry["en"]) if entry else key


def format_value(value: Any, lang: str) -> str:
    """A fact's value as the panel and the replies show it: yes/no, numbers with separators."""
    if isinstance(value, bool):
        return t("yes" if value else "no", lang)
    if isinstance(value, (int, float)):
        return number(value, None, lang)
    return "—" if value is None else str(value)
