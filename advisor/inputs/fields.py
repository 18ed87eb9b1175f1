"""The scenario's field table (knowledge/fields.yaml): one row per input fact a user states.

Guarantees: every row has a scenario path (a top-level key or hardware.KEY / workload.KEY), a known
type, choices for an enum, a label and a help text in every language, and free-text patterns that
compile and name only the field's own values; paths, facts and flags are each unique. The CLI flags,
the scenario parsers and defaults, the chat's /set names and labels, and the free-text reader's words
are derived from this table, so a new input field is one row here.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

from advisor.errors import KnowledgeError
from advisor.i18n import Text
from advisor.kb.paths import knowledge_dir
from advisor.yamlio import load_file_cached

FILE = "fields.yaml"
TYPES = ("text", "count", "tokens", "enum", "bool", "share", "gbps")
# The type a fact of knowledge/facts.yaml has for each field type.
SECTIONS = ("hardware", "workload")
DEFAULT_FROM = ("model", "gpu")
COMPLETE = ("gpus", "models", "precisions", "kv_precisions")
KEYS = {
    "path",
    "type",
    "choices",
    "required",
    "default",
    "default_from",
    "flag",
    "size",
    "strict",
    "stated",
    "complete",
    "label",
    "help",
    "text",
    "fact",
    "max",
    "plausible",
    "plausible_split",
    "default_figure",
    "usual",
}
TEXT_KEYS = {"unit", "either_side", "values", "yes_no", "bare", "suffixed", "named", "counted_by"}


class Field(NamedTuple):
    """One scenario field: where it sits, how it is parsed, its flag, defaults, words and labels."""

    fact: str
    path: str
    type: str
    label: Text
    help: Text
    choices: tuple[str, ...] = ()
    required: bool = False
    default: Any = None
    default_from: str | None = None
    flag: str | None = None
    size: bool = False
    strict: bool = False
    stated: bool = True
    complete: str | None = None
    unit_words: str | None = None
    either_side: bool = False
    suffixed: bool = False  # a number written with k or M ("32k") is this field's where no unit claims it
    named: tuple[tuple[Any, str], ...] = ()  # a value said by name: (value, pattern)
    counted_by: str | None = None  # the field a number in the answer to this field's question counts
    values: tuple[tuple[Any, str], ...] = ()
    yes_no: tuple[Any, Any] | None = None
    bare: bool = False
    max: int | float | None = None
    plausible: tuple[Any, ...] = ()  # the values worth trying when the user states none (assumptions)
    default_figure: str | None = None  # unstated: the engine's own default stands, as this formula result
    plausible_split: tuple[int, ...] = ()  # unknown: the node's GPUs divided by each of these is worth trying
    usual: tuple[float, float] | None = None  # a value said outside this range is confirmed before it is taken

    @property
    def section(self) -> str | None:
        """'hardware' or 'workload', or None for a top-level field."""
        return self.path.split(".")[0] if "." in self.path else None

    @property
    def key(self) -> str:
        """The field's name inside its section (or at the top)."""
        return self.path.rsplit(".", 1)[-1]

    @property
    def dest(self) -> str | None:
        """The argparse destination of the flag ('--kv-cache-dtype' gives 'kv_cache_dtype')."""
        return self.flag.lstrip("-").replace("-", "_") if self.flag else None


class FieldTable(NamedTuple):
    """The rows of the field table, in their order, with look-ups by fact and by path."""

    fields: tuple[Field, ...]
    where: str

    def by_fact(self) -> dict[str, Field]:
        """Each field under its fact's name."""
        return {f.fact: f for f in self.fields}

    def by_path(self) -> dict[str, Field]:
        """Each field under its scenario path."""
        return {f.path: f for f in self.fields}

    def paths(self) -> dict[str, str]:
        """Fact name to scenario path, for every field."""
        return {f.fact: f.path for f in self.fields}

    def flags(self, sizing: bool = False) -> tuple[Field, ...]:
        """The fields with a CLI flag (for `size`: only those it takes)."""
        return tuple(f for f in self.fields if f.flag and (f.size or not sizing))

    def section_keys(self, section: str | None) -> tuple[str, ...]:
        """The field names of one section ('hardware', 'workload'), or the top-level fields for None."""
        return tuple(f.key for f in self.fields if f.section == section)


def _text(raw: dict[str, Any], key: str, where: str) -> Text:
    value = raw.get(key)
    if not isinstance(value, dict):
        raise KnowledgeError(f"{key!r} should be a mapping of languages", where=where)
    return Text.checked(value, key, where, KnowledgeError)


def _pattern(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise KnowledgeError(f"expected a pattern, not {value!r}", where=where)
    from advisor.inputs.letters import fold

    try:
        re.compile(value)
    except re.error as exc:
        raise KnowledgeError(f"pattern {value!r} does not compile: {exc}", where=where) from None
    return fold(value)  # the reader folds what was typed the same way (advisor/inputs/letters.py)


def _field(fact: str, raw: Any, where: str) -> Field:
    where = f"{where} field {fact}"
    if not isinstance(raw, dict):
        raise KnowledgeError("a field should be a mapping", where=where)
    unknown = set(raw) - KEYS
    if unknown:
        raise KnowledgeError(f"unknown key(s) {', '.join(sorted(map(str, unknown)))}", where=where)
    path = raw.get("path")
    if (
        not isinstance(path, str)
        or not re.fullmatch(r"([a-z_]+\.)?[a-z_0-9]+", path)
        or ("." in path and path.split(".")[0] not in SECTIONS)
        or path in SECTIONS
    ):
        keys = " / ".join(s + ".KEY" for s in SECTIONS)
        raise KnowledgeError(f"path {path!r} should be a top-level key or {keys}", where=where)
    kind = raw.get("type")
    if kind not in TYPES:
        raise KnowledgeError(f"type {kind!r} is not one of {', '.join(TYPES)}", where=where)
    choices = tuple(str(c) for c in raw.get("choices") or ())
    if (kind == "enum") != bool(choices):
        raise KnowledgeError("an enum field, and only an enum field, lists its choices", where=where)
    allowed: tuple[Any, ...] = choices if kind == "enum" else (True, False) if kind == "bool" else ()
    default = raw.get("default")
    if default is not None and allowed and default not in allowed:
        raise KnowledgeError(f"default {default!r} is not one of its values", where=where)
    if raw.get("default_from") not in (None, *DEFAULT_FROM):
        raise KnowledgeError(f"default_from should be one of {', '.join(DEFAULT_FROM)}", where=where)
    if raw.get("complete") not in (None, *COMPLETE):
        raise KnowledgeError(f"complete should be one of {', '.join(COMPLETE)}", where=where)
    flag = raw.get("flag")
    if flag is not None and (not isinstance(flag, str) or not re.fullmatch(r"--[a-z][a-z0-9-]*", flag)):
        raise KnowledgeError(f"flag {flag!r} should look like --name", where=where)
    text = raw.get("text") or {}
    if not isinstance(text, dict) or set(text) - TEXT_KEYS:
        raise KnowledgeError(f"text should be a mapping of {', '.join(sorted(TEXT_KEYS))}", where=where)
    values = []
    for value, pattern in (text.get("values") or {}).items():
        if value not in allowed:
            raise KnowledgeError(f"text value {value!r} is not one of the field's values", where=where)
        values.append((value, _pattern(pattern, where)))
    yes_no = text.get("yes_no")
    if yes_no is not None and (not isinstance(yes_no, list) or len(yes_no) != 2 or not set(yes_no) <= set(allowed)):
        raise KnowledgeError("yes_no should name two of the field's values", where=where)
    unit = text.get("unit")
    if unit is not None and kind not in ("count", "tokens", "gbps", "share"):
        raise KnowledgeError("only a number field reads a number with its unit words", where=where)
    top = raw.get("max")
    if top is not None and (
        kind not in ("count", "tokens", "gbps")
        or isinstance(top, bool)
        or not isinstance(top, (int, float))
        or not 1 <= top <= 10**12
    ):
        raise KnowledgeError("max is a number from 1 to 10**12, and only a number field has one", where=where)
    plausible = tuple(raw.get("plausible") or ())
    if any(not _plausible(v, kind, allowed, top) for v in plausible):
        raise KnowledgeError("plausible lists values of the field's own type and range", where=where)
    split = tuple(raw.get("plausible_split") or ())
    if any(isinstance(k, bool) or not isinstance(k, int) or not 2 <= k <= 64 for k in split):
        raise KnowledgeError("plausible_split lists whole numbers from 2 to 64 (parts of a node)", where=where)
    usual = _usual(raw.get("usual"), kind, where)
    figure = raw.get("default_figure")
    if figure is not None and (raw.get("default") is not None or not re.fullmatch(r"[a-z_0-9]+", str(figure))):
        raise KnowledgeError("default_figure names a formula result, on a field without a default", where=where)
    return Field(
        fact=fact,
        path=path,
        type=kind,
        label=_text(raw, "label", where),
        help=_text(raw, "help", where),
        choices=choices,
        required=bool(raw.get("required")),
        default=default,
        default_from=raw.get("default_from"),
        flag=flag,
        size=bool(raw.get("size")),
        strict=bool(raw.get("strict")),
        stated=raw.get("stated", True) is not False,
        complete=raw.get("complete"),
        unit_words=_pattern(unit, where) if unit is not None else None,
        either_side=bool(text.get("either_side")),
        suffixed=bool(text.get("suffixed")),
        named=tuple((v, _pattern(p, where)) for v, p in (text.get("named") or {}).items()),
        counted_by=text.get("counted_by"),
        values=tuple(values),
        yes_no=(yes_no[0], yes_no[1]) if yes_no else None,
        bare=bool(text.get("bare")),
        max=top,
        plausible=plausible,
        default_figure=figure,
        plausible_split=split,
        usual=usual,
    )


def _usual(usual: Any, kind: str, where: str) -> tuple[float, float] | None:
    """A number field's usual range, [low, high] with 0 < low < high."""
    if usual is None:
        return None
    if (
        kind not in ("count", "tokens", "gbps")
        or not isinstance(usual, list)
        or len(usual) != 2
        or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in usual)
        or not 0 < usual[0] < usual[1]
    ):
        raise KnowledgeError("usual is [low, high] of a number field, 0 < low < high", where=where)
    return float(usual[0]), float(usual[1])


def _plausible(value: Any, kind: str, allowed: tuple[Any, ...], top: int | float | None) -> bool:
    """Whether `value` could be the field's: one of its values, or a positive number within its max."""
    if allowed:
        return value in allowed
    if kind in ("count", "tokens", "gbps"):
        return not isinstance(value, bool) and isinstance(value, (int, float)) and 0 < value <= (top or 10**12)
    return kind == "text" and isinstance(value, str)


@cache
def _load(path: Path) -> FieldTable:
    """The checked table, from the per-user cache while the file and its checks are unchanged: the
    checks compile every free-text pattern (a few milliseconds on each start of the command line,
    whose flags come from this table)."""
    from advisor import diskcache, i18n, yamlio

    folder = diskcache.cache_dir()
    try:
        raw = path.read_bytes() if folder is not None else None
    except OSError:
        raw = None
    if folder is None or raw is None:
        return _checked(path)
    modules = (Path(module).read_bytes() for module in (__file__, i18n.__file__, yamlio.__file__))
    key = " ".join(diskcache.checksum(data) for data in (raw, *modules))
    entry = diskcache.entry(folder, "fields", str(path))
    hit = diskcache.read(entry, key)
    if isinstance(hit, FieldTable):
        return hit
    table = _checked(path)
    diskcache.write(entry, key, table)
    return table


def _checked(path: Path) -> FieldTable:
    data = load_file_cached(path, KnowledgeError)
    if not isinstance(data, dict) or not isinstance(data.get("fields"), dict):
        raise KnowledgeError("expected a top-level 'fields' mapping", where=str(path))
    fields = tuple(_field(str(fact), raw, str(path)) for fact, raw in data["fields"].items())
    for what, names in (
        ("path", [f.path for f in fields]),
        ("flag", [f.flag for f in fields if f.flag]),
        ("field key", [f.key for f in fields]),
    ):
        doubled = sorted({n for n in names if names.count(n) > 1})
        if doubled:
            raise KnowledgeError(f"{what} used by more than one field: {', '.join(doubled)}", where=str(path))
    return FieldTable(fields, str(path))


def field_table(root: Path | None = None) -> FieldTable:
    """The field table of the knowledge folder `root` (default: the advisor's knowledge base)."""
    return _load(_file(root))


@cache
def _file(root: Path | None) -> Path:
    return ((root or knowledge_dir()) / FILE).resolve()
