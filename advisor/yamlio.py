"""Safe YAML loading with limits, and line numbers on every mapping for located error messages.

Only YAML's safe schema is constructed (no Python objects), without YAML 1.1's base-60 numbers
(`gpus_per_node: 1:30` is the text "1:30", not 90). Files larger than MAX_BYTES, more than
MAX_ALIASES alias references, documents whose aliases expand past MAX_NODES values (the "billion
laughs" attack) or nesting deeper than MAX_DEPTH are refused with a message naming the file.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from advisor.errors import AdvisorError, InputError

MAX_BYTES = 8 * 1024 * 1024
MAX_ALIASES = 100
MAX_DEPTH = 50
MAX_NODES = 200_000


class Located(dict):
    """A mapping that remembers the line it started on (1-based)."""

    line: int = 0


@cache
def _loader() -> Any:
    """The SafeLoader subclass that counts aliases and records line numbers; PyYAML is imported on
    first use, so a command that reads no YAML (a load-cache hit) does not pay for it."""
    import yaml

    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class _Loader(base):  # type: ignore[misc, valid-type]
        """SafeLoader that counts aliases and records line numbers."""

        def __init__(self, stream: Any) -> None:
            super().__init__(stream)
            self._aliases = 0

        def construct_object(self, node: Any, deep: bool = False) -> Any:  # noqa: D401 - PyYAML hook
            # a node met again is an alias reference (or a merge key's copy): libyaml's composer, which
            # CSafeLoader uses, never calls a Python compose hook, so references are counted here
            if node in self.constructed_objects or node in self.recursive_objects:
                self._aliases += 1
                if self._aliases > MAX_ALIASES:
                    raise yaml.YAMLError(f"more than {MAX_ALIASES} alias references (alias expansion refused)")
            return super().construct_object(node, deep=deep)

    def construct_mapping(loader: Any, node: Any) -> Located:
        loader.flatten_mapping(node)
        result = Located()
        result.line = node.start_mark.line + 1
        for key_node, value_node in node.value:
            key = loader.construct_object(key_node, deep=True)
            try:
                hash(key)
            except TypeError:
                line = key_node.start_mark.line + 1
                raise yaml.YAMLError(f"line {line}: a mapping key must be a plain value") from None
            if key in result:
                raise yaml.YAMLError(f"line {key_node.start_mark.line + 1}: duplicate key {key!r}")
            result[key] = loader.construct_object(value_node, deep=True)
        return result

    _Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, construct_mapping)
    _without_base_60(_Loader)
    return _Loader


# YAML 1.1's int and float without their base-60 forms (1:30 would be 90, 1:30.5 would be 90.5)
_INT = r"^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+)$"
_FLOAT = (
    r"^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9_]+(?:[eE][-+][0-9]+)?"
    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
)


def _without_base_60(loader: Any) -> None:
    """Replace the loader's implicit int and float resolvers by ones without base-60 numbers."""
    import re

    int_tag, float_tag = "tag:yaml.org,2002:int", "tag:yaml.org,2002:float"
    table = {
        first: [(tag, rx) for tag, rx in resolvers if tag not in (int_tag, float_tag)]
        for first, resolvers in loader.yaml_implicit_resolvers.items()
    }
    loader.yaml_implicit_resolvers = table
    loader.add_implicit_resolver(int_tag, re.compile(_INT, re.X), list("-+0123456789"))
    loader.add_implicit_resolver(float_tag, re.compile(_FLOAT, re.X), list("-+0123456789."))


def _shape(value: Any) -> tuple[int, int]:
    """Depth and expanded size of a parsed document, stopping early past the limits."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    deepest = size = 0
    while stack:
        item, depth = stack.pop()
        size += 1
        deepest = max(deepest, depth)
        if deepest > MAX_DEPTH or size > MAX_NODES:
            break
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
    return deepest, size


def loads(text: str, where: str, error: type[AdvisorError] = InputError) -> Any:
    """Parse YAML text; raise `error` with `where` and the line on any problem."""
    if len(text) > MAX_BYTES:
        raise error(f"file larger than {MAX_BYTES // (1024 * 1024)} MiB", where=where)
    if "\x00" in text:
        raise error("contains NUL bytes; not a YAML text file", where=where)
    import yaml

    try:
        data = yaml.load(text, Loader=_loader())  # noqa: S506 - a SafeLoader subclass
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        line = f"line {mark.line + 1}: " if mark is not None else ""
        raise error(f"{line}malformed YAML: {exc.problem or exc}", where=where) from None
    except (yaml.YAMLError, RecursionError) as exc:
        raise error(f"malformed YAML: {exc}", where=where) from None
    depth, size = _shape(data)
    if depth > MAX_DEPTH:
        raise error(f"nested deeper than {MAX_DEPTH} levels", where=where)
    if size > MAX_NODES:
        raise error(f"expands to more than {MAX_NODES:,} values (alias expansion refused)", where=where)
    return data


def read_regular(path: Path, limit: int, error: type[AdvisorError] = InputError) -> bytes:
    """The bytes of a regular file of at most `limit` bytes; `error` for a FIFO, a device, a folder or
    /proc (opened without blocking and checked before a byte is read, so neither hangs nor fills
    memory), for a larger file, or for one that cannot be read."""
    import os
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise error(f"cannot read: {exc.strerror or exc}", where=str(path)) from None
    except ValueError:  # a NUL byte in the path
        raise error("cannot read: the path holds a NUL byte", where=str(path)) from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or str(path).startswith("/proc/"):
        os.close(fd)
        raise error("not a regular file (a FIFO, a device, a folder or /proc); give a file", where=str(path))
    with os.fdopen(fd, "rb") as fh:
        if info.st_size > limit:
            raise error(f"file larger than {limit // (1024 * 1024)} MiB", where=str(path))
        try:
            data = fh.read(limit + 1)
        except OSError as exc:
            raise error(f"cannot read: {exc.strerror or exc}", where=str(path)) from None
    if len(data) > limit:
        raise error(f"file larger than {limit // (1024 * 1024)} MiB", where=str(path))
    return data


def load_file(path: Path, error: type[AdvisorError] = InputError) -> Any:
    """Read and parse one YAML file, with the limits above; only a regular file is read."""
    raw = read_regular(path, MAX_BYTES, error)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"not UTF-8 text (byte {exc.start})", where=str(path)) from None
    return loads(text, str(path), error)


def load_file_cached(path: Path, error: type[AdvisorError] = InputError) -> Any:
    """`load_file`, with the parsed document kept in the per-user cache (advisor.diskcache) under the
    checksums of the file's bytes and of this reader: a file read on every start (the field table, the
    report labels) costs neither PyYAML's import nor its parse while it is unchanged."""
    from advisor import diskcache

    folder = diskcache.cache_dir()
    try:
        raw = path.read_bytes() if folder is not None and path.stat().st_size <= MAX_BYTES else None
    except OSError:
        raw = None
    if folder is None or raw is None:
        return load_file(path, error)
    key = f"{diskcache.checksum(Path(__file__).read_bytes())} {diskcache.checksum(raw)}"
    entry = diskcache.entry(folder, "yaml", str(path.resolve()))
    hit = diskcache.read(entry, key)
    if hit is not None:
        return hit
    value = load_file(path, error)
    diskcache.write(entry, key, value)
    return value


def line_of(value: Any) -> int:
    """The line a mapping started on, or 0 when unknown."""
    return getattr(value, "line", 0)
