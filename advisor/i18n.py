"""Languages, texts and number formatting: the ground floor that every wing may use.

Guarantees: every user-facing word and number passes through here or through a `Text`; a language
is a row of `LANGUAGES` plus its column in the YAML texts (labels.yaml beside this module, the chat's
strings, the rule and knowledge texts). Nothing here imports another part of the advisor but
errors and YAML loading.
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from functools import cache, lru_cache
from pathlib import Path
from types import MappingProxyType
from typing import Any, NamedTuple

from advisor.errors import AdvisorError


class Language(NamedTuple):
    """How one language writes numbers and yes/no."""

    code: str
    name: str
    thousands: str
    decimal: str
    yes: str
    no: str


LANGUAGES: dict[str, Language] = {
    "en": Language("en", "English", ",", ".", "yes", "no"),
    "de": Language("de", "Deutsch", ".", ",", "ja", "nein"),
}
LANGS: tuple[str, ...] = tuple(LANGUAGES)
DEFAULT_LANG = "en"
# Units that are counts or shares: a number in them is printed without the unit's name.
COUNT_UNITS = ("1", "share", "conversations", "all-reduces", "GPUs", "copies", "requests", "micro-batches")


def language(lang: str) -> Language:
    """The language `lang`, or the default one where it is not known."""
    return LANGUAGES.get(lang) or LANGUAGES[DEFAULT_LANG]


class Text:
    """A user-facing text in every language it was given in; English stands in for a missing one."""

    __slots__ = ("texts",)
    texts: Mapping[str, str]

    def __init__(self, texts: Mapping[str, str] | None = None, /, **by_lang: str) -> None:
        object.__setattr__(self, "texts", MappingProxyType({**(texts or {}), **by_lang}))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Text is immutable")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Text) and dict(self.texts) == dict(other.texts)

    def __hash__(self) -> int:
        return hash(tuple(sorted(self.texts.items())))

    def __repr__(self) -> str:
        return f"Text({dict(self.texts)!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (Text, (dict(self.texts),))

    @classmethod
    def restored(cls, texts: dict[str, str]) -> Text:
        """A Text over `texts` as stored (the load cache's), taken as it is: no copy, no merge."""
        done = object.__new__(cls)
        object.__setattr__(done, "texts", MappingProxyType(texts))
        return done

    @classmethod
    def same(cls, text: str) -> Text:
        """A text that reads the same in every language (a formula, a name)."""
        return cls({DEFAULT_LANG: text})

    def get(self, lang: str) -> str:
        """The text in `lang`, the default language's where `lang` has none."""
        return self.texts.get(lang) or self.texts.get(DEFAULT_LANG, "")

    @classmethod
    def checked(cls, raw: Mapping[str, Any], key: str, where: str, error: type[AdvisorError]) -> Text:
        """The texts of `raw` in every language, each present and not blank; `error` names `key` otherwise."""
        for lang in LANGS:
            if not isinstance(raw.get(lang), str) or not raw[lang].strip():
                raise error(f"{key!r} is missing its {lang!r} text", where=where)
        return cls({lang: raw[lang].strip() for lang in LANGS})


def localize_digits(text: str, lang: str) -> str:
    """An English-formatted number ('1,234.5') with the separators of `lang`."""
    lg = language(lang)
    if (lg.thousands, lg.decimal) == (",", "."):
        return text
    table: dict[str, str | int | None] = {",": lg.thousands, ".": lg.decimal}
    return text.translate(str.maketrans(table))


def format_number(value: Any, lang: str = DEFAULT_LANG) -> str:
    """A number as people read it: thousands separators, no float noise, the separators of `lang`."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, float) and abs(value) < 1e15 and abs(value - round(value)) <= 1e-9 * abs(value):
        value = int(round(value))  # a whole number up to float noise: 32.8 × 10^9 is 32,800,000,000
    if isinstance(value, int):
        text = f"{value:,}"
    elif abs(value) >= 100:
        text = f"{value:,.1f}"
    elif abs(value) >= 1:
        text = f"{value:.3g}" if abs(value) < 10 else f"{value:.1f}"
    else:
        text = f"{value:.3g}"
    return localize_digits(text, lang)


def number(value: Any, unit: str | None, lang: str) -> str:
    """A value with its unit ('68 GiB', '27.3%'); counts and shares without the unit's name."""
    if value is None:
        return "?"
    if unit == "share" and isinstance(value, (int, float)):
        return localize_digits(f"{value:.1%}", lang)
    text = format_number(value, lang)
    if unit and unit not in COUNT_UNITS:
        named = _labels().get(f"unit_{unit}")
        text = f"{text} {named.get(lang) if named is not None else unit}"
    return text


def yes_no(value: bool, lang: str) -> str:
    """'yes'/'no' in `lang`."""
    lg = language(lang)
    return lg.yes if value else lg.no


@cache
def _labels() -> dict[str, Text]:
    from advisor.yamlio import load_file_cached

    data = load_file_cached(Path(__file__).with_name("labels.yaml"))
    return {k: Text(v) for k, v in data["labels"].items()}


def label_text(key: str) -> Text:
    """A heading or short label of the reports, in every language."""
    return _labels()[key]


def has_label(key: str) -> bool:
    """Whether advisor/labels.yaml has `key`."""
    return key in _labels()


def label(key: str, lang: str) -> str:
    """A heading or short label of the reports in `lang`."""
    return _labels()[key].get(lang)


class _Filler(string.Formatter):
    def __init__(self, lang: str) -> None:
        self.lang = lang

    def format_field(self, value: Any, format_spec: str) -> str:
        if format_spec.startswith("|"):  # {n:|conversation|conversations}: the number and its noun
            one, _, many = format_spec[1:].partition("|")
            noun = one if value == 1 else (many or one)
            return f"{self.format_field(value, '')} {noun}"
        if value is None:
            return "?"
        if format_spec == "name":  # {tp_link:name}: 'pcie' as the reader says it; anything else as it is
            if isinstance(value, str):
                named = _labels().get(f"name_{value}")
                return named.get(self.lang) if named is not None else value
            format_spec = ""
        if isinstance(value, bool):
            return yes_no(value, self.lang)
        if not isinstance(value, (int, float)):
            return format(value, format_spec)
        if not format_spec:
            return format_number(value, self.lang)
        return localize_digits(format(value, format_spec), self.lang)

    def get_value(self, key: Any, args: Any, kwargs: Any) -> Any:
        return kwargs.get(key)


def fill(template: str, values: Mapping[str, Any], lang: str = DEFAULT_LANG) -> str:
    """A template with its `{name}` fields filled from `values` as `lang` writes them; unknown ones show '?'.

    `{name:|one|many}` writes the number and the noun in its singular or plural form ("1 conversation",
    "83 conversations"; "1 Gespräch", "83 Gespräche"); `{name:name}` writes a value such as 'pcie' as
    the label `name_pcie` of advisor/labels.yaml says it ("PCIe")."""
    if "{" not in template:
        return template
    return _Filler(lang).vformat(template, (), dict(values))


def outline(template: str, braces: bool = True) -> str:
    """A template with each field shown as its fact's name ('needs {deployed_gpus} GPUs'), for rule pages
    and rule lists; `braces=False` drops the braces (SARIF's short descriptions)."""
    out = []
    for literal, name, spec, _conv in string.Formatter().parse(template):
        out.append(literal)
        if name:
            field = f"{{{name}}}" if braces else name
            plural = spec.rpartition("|")[2] if spec and spec.startswith("|") else ""
            out.append(f"{field} {plural}" if plural else field)
    return "".join(out)


@lru_cache(maxsize=4096)
def placeholders(template: str) -> frozenset[str]:
    """The `{name}` fields a template reads (kept: the texts of rules and facts are a fixed set)."""
    return frozenset({name for _, name, _, _ in string.Formatter().parse(template) if name})


class Message(NamedTuple):
    """A text the reader gets in their language: its template in every language and the values it shows.

    The engine returns messages; renderers fill them in the language they write (`render(lang)`)."""

    template: Text
    values: Mapping[str, Any] = MappingProxyType({})

    @classmethod
    def of(cls, template: Text, facts: Mapping[str, Any]) -> Message:
        """A message over `facts`, keeping only the values its templates read."""
        names = set().union(*(placeholders(s) for s in template.texts.values()))
        return cls(template, {n: facts.get(n) for n in sorted(names)})

    def render(self, lang: str) -> str:
        """The message in `lang`, numbers with that language's separators."""
        return fill(self.template.get(lang), self.values, lang)
