"""Value records with shared methods: what `@dataclass` gives, without generating code per class.

A `Struct` subclass declares its fields as annotations, with a plain default or `field(...)` (a
default, a `default_factory`, `repr=False`). It guarantees what the dataclasses it replaces gave:
`__init__` taking the fields positionally or by name in declaration order (defaults and factories
applied), `__eq__` by type and field values, a `__repr__` of the fields, `frozen=True` (the default)
refusing assignment and deletion with `FrozenInstanceError` and hashing by value, `frozen=False`
leaving instances mutable and unhashable, `order=True` comparing records of one type by their field
values, `__post_init__` called after the fields are set, and `replace(obj, **changes)` making a changed copy.
The methods are shared by every record type, so importing a module of records costs no code
generation (a frozen dataclass costs about a millisecond to define, and `dataclasses` imports
`inspect`).
"""

from __future__ import annotations

import typing
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T", bound="Struct")


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


class FrozenInstanceError(AttributeError):
    """An assignment to, or deletion of, a field of a frozen record."""


class Field:
    """A field's default or default factory, and whether the repr shows it."""

    __slots__ = ("default", "factory", "repr")

    def __init__(self, default: Any, factory: Callable[[], Any] | None, repr: bool) -> None:
        self.default, self.factory, self.repr = default, factory, repr


def field(*, default: Any = MISSING, default_factory: Callable[[], Any] | None = None, repr: bool = True) -> Any:
    """A field with a default or a default factory (called for each new record), shown in the repr or not."""
    return Field(default, default_factory, repr)


@typing.dataclass_transform(frozen_default=True, field_specifiers=(field,))
class Struct:
    """Base of the value records: fields from the annotations, methods shared rather than generated."""

    _names: typing.ClassVar[tuple[str, ...]] = ()
    _defaults: typing.ClassVar[tuple[tuple[str, Any, Callable[[], Any] | None], ...]] = ()
    _shown: typing.ClassVar[tuple[str, ...]] = ()
    _frozen: typing.ClassVar[bool] = True
    _post: typing.ClassVar[Callable[[Any], None] | None] = None

    def __init_subclass__(cls, frozen: bool = True, order: bool = False, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        fields: dict[str, Field] = {}
        for base in reversed(cls.__mro__[1:]):
            for name in getattr(base, "_names", ()):
                fields[name] = base._fields_by_name[name]  # type: ignore[attr-defined]
        for name, hint in cls.__dict__.get("__annotations__", {}).items():
            if isinstance(hint, str) and hint.startswith(("ClassVar", "typing.ClassVar")):
                continue
            value = cls.__dict__.get(name, MISSING)
            if isinstance(value, Field):
                spec = value
                if value.default is MISSING:
                    delattr(cls, name)
                else:
                    setattr(cls, name, value.default)
            else:
                spec = Field(value, None, True)
            fields[name] = spec
        cls._fields_by_name = fields  # type: ignore[attr-defined]
        cls._names = tuple(fields)
        cls._defaults = tuple((n, f.default, f.factory) for n, f in fields.items())
        cls._shown = tuple(n for n, f in fields.items() if f.repr)
        cls._frozen = frozen
        cls._post = getattr(cls, "__post_init__", None)
        if order:
            for name, compare in ORDER.items():
                setattr(cls, name, compare)
        if not frozen:
            cls.__hash__ = None  # type: ignore[assignment]  # mutable and compared by value: unhashable

    def __init__(self, *args: Any, **values: Any) -> None:
        names = self._names
        if not values and len(args) == len(names):  # every field in order: the engine makes thousands
            self.__dict__.update(zip(names, args, strict=True))
            if self._post is not None:
                self._post()
            return
        if not values and len(args) < len(names):  # positional only, defaults for the rest
            own = self.__dict__
            own.update(zip(names, args, strict=False))
            for name, default, factory in self._defaults[len(args) :]:
                if factory is not None:
                    own[name] = factory()
                elif default is MISSING:
                    raise TypeError(f"{type(self).__name__} needs {name!r}")
                else:
                    own[name] = default
            if self._post is not None:
                self._post()
            return
        if args:
            if len(args) > len(names):
                raise TypeError(f"{type(self).__name__} takes at most {len(names)} positional arguments")
            for name, value in zip(names, args, strict=False):
                if name in values:
                    raise TypeError(f"{type(self).__name__} got multiple values for {name!r}")
                values[name] = value
        own = self.__dict__
        for name, default, factory in self._defaults:
            if name in values:
                own[name] = values.pop(name)
            elif factory is not None:
                own[name] = factory()
            elif default is MISSING:
                raise TypeError(f"{type(self).__name__} needs {name!r}")
            else:
                own[name] = default
        if values:
            raise TypeError(f"{type(self).__name__} has no field {sorted(values)[0]!r}")
        if self._post is not None:
            self._post()

    def _values(self) -> tuple[Any, ...]:
        own = self.__dict__
        return tuple(own[n] for n in self._names)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        own = self.__dict__
        return f"{type(self).__qualname__}(" + ", ".join(f"{n}={own[n]!r}" for n in self._shown) + ")"

    def __setattr__(self, name: str, value: Any) -> None:
        if self._frozen:
            raise FrozenInstanceError(f"cannot assign to field {name!r}")
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        if self._frozen:
            raise FrozenInstanceError(f"cannot delete field {name!r}")
        object.__delattr__(self, name)


def _lt(a: Struct, b: object) -> bool:
    return a._values() < b._values() if b.__class__ is a.__class__ else NotImplemented


def _le(a: Struct, b: object) -> bool:
    return a._values() <= b._values() if b.__class__ is a.__class__ else NotImplemented


def _gt(a: Struct, b: object) -> bool:
    return a._values() > b._values() if b.__class__ is a.__class__ else NotImplemented


def _ge(a: Struct, b: object) -> bool:
    return a._values() >= b._values() if b.__class__ is a.__class__ else NotImplemented


ORDER = {"__lt__": _lt, "__le__": _le, "__gt__": _gt, "__ge__": _ge}


def replace(obj: T, **changes: Any) -> T:
    """A copy of the record `obj` with `changes` to its fields (a new record: nothing cached is carried)."""
    own = obj.__dict__
    return obj.__class__(**{**{n: own[n] for n in obj._names}, **changes})
