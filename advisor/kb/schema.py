"""Knowledge records declared once: a `Record` type whose fields carry their YAML key, default, check
and docstring (`key(...)`), and one reader that derives everything else from the field types.

`read(cls, raw, where)` reads a YAML mapping into `cls`. It accepts what the field's type says
(`str`, `int`, `float` (an int is widened), `bool`, `X | None`, `tuple[X, ...]` from a list,
`Mapping[str, X]`, `Text` in every language, and nested record types), applies the field's default
when the key is missing or null, and raises KnowledgeError naming file, line, key and, for fields
with `choices`, the valid values. Type hints are resolved once per record type.
"""

from __future__ import annotations

import sys
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any

from advisor.errors import KnowledgeError
from advisor.i18n import Text
from advisor.structs import MISSING, FrozenInstanceError
from advisor.yamlio import line_of

WHERE = "where"  # a field filled with the entry's location (file:line), never read from YAML
GIVEN = "given"  # a field the caller supplies (a fact's name is the key it stands under)
DERIVED = "derived"  # a field the record type's `derive(entry)` computes from other keys


class Spec:
    """How one field of a record is read: YAML key, default, accepted YAML types, choices, docstring."""

    __slots__ = ("name", "doc", "yaml", "default", "factory", "accept", "choices", "source")

    def __init__(
        self,
        default: Any,
        factory: Callable[[], Any] | None,
        doc: str,
        yaml: str | None,
        accept: tuple[type, ...] | None,
        choices: tuple[str, ...] | None,
        source: str,
    ) -> None:
        self.name = ""
        self.doc, self.yaml, self.default, self.factory = doc, yaml, default, factory
        self.accept, self.choices, self.source = accept, choices, source

    @property
    def required(self) -> bool:
        """Whether the record cannot be made without it."""
        return self.default is MISSING and self.factory is None


def key(
    default: Any = MISSING,
    *,
    doc: str,
    yaml: str | None = None,
    accept: tuple[type, ...] | None = None,
    choices: tuple[str, ...] | None = None,
    source: str = "yaml",
    factory: Callable[[], Any] | None = None,
) -> Any:
    """A record field: its docstring, YAML key (default: the field's name), the default when the key is
    missing or null (none: required), other YAML types it `accept`s and turns into the field's type,
    and the `choices` it must be one of."""
    return Spec(default, factory, doc, yaml, accept, choices, source)


@typing.dataclass_transform(kw_only_default=True, frozen_default=True, field_specifiers=(key,))
class Record:
    """Base of the knowledge records: immutable, compared and hashed by value, with a readable repr.

    Like a frozen dataclass, but its methods are shared rather than generated per class, which keeps
    the import of the record types (on every command's path) to a fraction of a millisecond each."""

    _fields: typing.ClassVar[tuple[Spec, ...]] = ()

    def __init_subclass__(cls, kw_only: bool = True, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        specs = []
        for name in cls.__dict__.get("__annotations__", {}):
            spec = cls.__dict__.get(name)
            if not isinstance(spec, Spec):
                raise TypeError(f"{cls.__name__}.{name} is not declared with key()")
            spec.name = name
            specs.append(spec)
            delattr(cls, name)
        cls._fields = tuple(specs)

    def __init__(self, *args: Any, **values: Any) -> None:
        fields = self._fields
        if len(args) > len(fields):
            raise TypeError(f"{type(self).__name__} takes at most {len(fields)} positional arguments")
        values.update(zip((f.name for f in fields), args, strict=False))
        own = self.__dict__
        for f in fields:
            value = values.pop(f.name, MISSING)
            if value is MISSING:
                if f.factory is not None:
                    value = f.factory()
                elif f.default is MISSING:
                    raise TypeError(f"{type(self).__name__} needs {f.name!r}")
                else:
                    value = f.default
            own[f.name] = value
        if values:
            raise TypeError(f"{type(self).__name__} has no field {sorted(values)[0]!r}")

    def _values(self) -> tuple[Any, ...]:
        return tuple(self.__dict__[f.name] for f in self._fields)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self._values() == other._values()

    def __hash__(self) -> int:
        return hash((type(self).__name__, self._values()))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(" + ", ".join(f"{f.name}={self.__dict__[f.name]!r}" for f in self._fields) + ")"

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")


class Entry:
    """One YAML mapping and where it stands (file:line), for located errors."""

    def __init__(self, data: Any, where: str) -> None:
        if not isinstance(data, dict):
            raise KnowledgeError("expected a mapping", where=where)
        self.data = data
        self.where = f"{where}:{line_of(data)}" if line_of(data) else where

    def number(self, key: str) -> float | None:
        """An optional number (an int is widened); KnowledgeError for anything else."""
        return _check(self, key, self.data.get(key), float, float, None)


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    """The resolved field types of a record type (resolved on its first read, not on import)."""
    hints = _HINTS.get(cls)
    if hints is None:
        scope = vars(sys.modules[cls.__module__])
        hints = _HINTS[cls] = {
            f.name: typing._eval_type(typing.ForwardRef(cls.__annotations__[f.name]), scope, None)  # type: ignore[attr-defined]
            for f in cls._fields  # type: ignore[attr-defined]
        }
    return hints


_PLANS: dict[type, tuple[tuple[Spec, Any, Any], ...]] = {}


def _plan(cls: type) -> tuple[tuple[Spec, Any, Any], ...]:
    """Each field of `cls` with its type (X for `X | None`) and YAML kind, worked out once per class."""
    plan = _PLANS.get(cls)
    if plan is None:
        hints = _hints(cls)
        typed = []
        for f in cls._fields:  # type: ignore[attr-defined]
            hint = hints[f.name]
            hint = _optional(hint) or hint
            typed.append((f, hint, _yaml_kind(hint, f.accept) if f.source == "yaml" else None))
        plan = _PLANS[cls] = tuple(typed)
    return plan


def read(cls: type, raw: Any, where: str, **given: Any) -> Any:
    """A `cls` record from the YAML mapping `raw` found at `where`; KnowledgeError names file, line and key."""
    entry = Entry(raw, where)
    values: dict[str, Any] = {}
    for f, hint, kind in _plan(cls):
        if f.source == WHERE:
            values[f.name] = entry.where
        elif f.source == GIVEN:
            values[f.name] = given[f.name]
        elif f.source == "yaml":
            values[f.name] = _value(entry, f, hint, kind)
    derive = getattr(cls, "derive", None)
    if derive is not None:
        values.update(derive(entry))
    return cls(**values)


def _value(entry: Entry, f: Spec, hint: Any, kind: Any) -> Any:
    """The field's value from the entry: its hint is X for `X | None`, its kind the YAML type it is written as."""
    name = f.yaml or f.name
    value = entry.data.get(name)
    if value is None:
        if f.factory is not None:
            return f.factory()
        if f.default is not MISSING:
            return f.default
        if name not in entry.data:
            raise KnowledgeError(f"missing key {name!r}", where=entry.where)
        raise KnowledgeError(f"key {name!r} should be {_kind_name(kind)}, not None", where=entry.where)
    out = _check(entry, name, value, hint, kind, f.accept)
    if f.choices is not None and out not in f.choices:
        raise KnowledgeError(f"key {name!r} is {out!r}, not one of {', '.join(f.choices)}", where=entry.where)
    return out


def _optional(hint: Any) -> Any:
    """X for `X | None`, else None."""
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        if len(args) == 1 and len(typing.get_args(hint)) == 2:
            return args[0]
    return None


def _yaml_kind(hint: Any, accept: tuple[type, ...] | None) -> type | tuple[type, ...]:
    """The YAML type a field of type `hint` is written as."""
    if accept:
        return accept
    origin = typing.get_origin(hint)
    if origin is tuple:
        return list
    if origin is not None and isinstance(origin, type) and issubclass(origin, Mapping):
        return dict
    if hint is Text or _is_record(hint):
        return dict
    if hint is Any:
        return object
    return typing.cast(type, hint)


def _kind_name(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(k.__name__ for k in kinds)


MAX_NUMBER = 10**15


def _check(entry: Entry, key: str, value: Any, hint: Any, kind: type | tuple[type, ...], accept: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool) and not 0 <= value <= MAX_NUMBER:
        # No catalogue figure is negative, NaN, infinite or astronomically large; one that is would
        # reach the formulas as a silent nonsense answer (a negative memory size, NaN throughput).
        raise KnowledgeError(
            f"key {key!r} should be a finite number from 0 to {MAX_NUMBER:.0e}, not {value!r}", where=entry.where
        )
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if not isinstance(value, kind) or (isinstance(value, bool) and kind in (int, float)):
        raise KnowledgeError(f"key {key!r} should be {_kind_name(kind)}, not {value!r}", where=entry.where)
    value = typing.cast(Any, value)  # checked above; isinstance against a computed kind narrows to object
    if accept:
        return hint(value)
    if hint is Text:
        return Text.checked(value, key, entry.where, KnowledgeError)
    origin = typing.get_origin(hint)
    if origin is tuple:
        item = typing.get_args(hint)[0]
        if _is_record(item):
            return tuple(read(typing.cast(type, item), v, entry.where) for v in value)
        return tuple(item(v) for v in value)
    if origin is not None and kind is dict:
        item = typing.get_args(hint)[1]
        if _is_record(item):
            return {name: read(typing.cast(type, item), v, f"{entry.where} {key}.{name}") for name, v in value.items()}
        return _plain(value)
    if _is_record(hint):
        return read(typing.cast(type, hint), value, entry.where)
    return value


def _plain(value: Any) -> Any:
    """Mappings and lists of YAML as plain dicts and lists (no line bookkeeping left in the records)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _is_record(hint: Any) -> bool:
    return isinstance(hint, type) and issubclass(hint, Record)


def doc(cls: type[Record]) -> dict[str, str]:
    """Each YAML key of a record type with its docstring (fields read from YAML only)."""
    return {f.yaml or f.name: f.doc for f in cls._fields if f.source == "yaml"}
