"""Reading files a user names: only regular files, never more than a stated number of bytes.

Guarantees: a FIFO, a device, a socket or a kernel pseudo-file (/proc, /sys, /dev: they report a
size of 0 and stream without end) is refused before a byte is read, so no read can block or run
away; the size is checked before reading, and at most `limit` bytes are ever read; the file is
opened without blocking and checked again on its open descriptor, so a file swapped for a FIFO
between the check and the open is refused too; a file that disappears or changes while it is read
gives a `FileProblem` with one line, never a traceback. `decode` turns bytes into text the readers
can use: UTF-8, UTF-16 or UTF-32 with a byte-order mark (what PowerShell's `>` writes), UTF-16
without one, and says so when it is binary.
"""

from __future__ import annotations

import codecs
import contextlib
import functools
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

MIB = 1024 * 1024
PSEUDO_ROOTS = ("/proc", "/sys", "/dev")
_KINDS = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a folder"),
)
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


class FileProblem(Exception):
    """A file that was not read, or not read whole: the reason as one line for people."""


@dataclass
class Read:
    """What was read of a file: its bytes (at most the limit), and what to say about them."""

    data: bytes
    truncated: bool = False
    notes: list[str] = field(default_factory=list)


def not_regular(mode: int) -> str | None:
    """What a file of this mode is, when it is not a regular file (None for a regular file)."""
    if stat.S_ISREG(mode):
        return None
    return next((kind for test, kind in _KINDS if test(mode)), "not a regular file")


def pseudo_file(path: Path) -> bool:
    """Whether the path lies under /proc, /sys or /dev, whose files stream rather than hold bytes: by
    the file system it is on where it exists (one stat, links followed), else by its resolved name."""
    try:
        if os.stat(path).st_dev in _pseudo_devices():
            return True
        absolute = os.path.abspath(path)
        return any(absolute == root or absolute.startswith(root + "/") for root in PSEUDO_ROOTS)
    except (OSError, ValueError):
        pass
    try:
        resolved = str(path.resolve())
    except (OSError, RuntimeError):
        resolved = os.path.abspath(path)
    return any(resolved == root or resolved.startswith(root + "/") for root in PSEUDO_ROOTS)


@functools.cache
def _pseudo_devices() -> frozenset[int]:
    devices = set()
    for root in PSEUDO_ROOTS:
        with contextlib.suppress(OSError):
            devices.add(os.stat(root).st_dev)
    return frozenset(devices)


def check_regular(path: Path) -> os.stat_result:
    """The file's status if it is a regular file that may be read; FileProblem otherwise."""
    if pseudo_file(path):
        raise FileProblem("a kernel pseudo-file (/proc, /sys, /dev); not read")
    try:
        st = path.stat()
    except FileNotFoundError:
        raise FileProblem("no such file (removed while the folder was read?)") from None
    except OSError as exc:
        raise FileProblem(f"cannot read: {exc.strerror or exc}") from None
    kind = not_regular(st.st_mode)
    if kind:
        raise FileProblem(f"{kind}, not a regular file; not read")
    return st


def read_limited(path: Path, limit: int) -> Read:
    """At most `limit` bytes of a regular file (FileProblem for anything else, or when it cannot be read)."""
    before = check_regular(path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise FileProblem("no such file (removed while the folder was read?)") from None
    except OSError as exc:
        raise FileProblem(f"cannot read: {exc.strerror or exc}") from None
    try:
        opened = os.fstat(fd)
        kind = not_regular(opened.st_mode)
        if kind:  # swapped between the check and the open
            raise FileProblem(f"{kind}, not a regular file; not read")
        chunks: list[bytes] = []
        left = limit + 1
        while left > 0:
            chunk = os.read(fd, min(left, MIB))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        after = os.fstat(fd)
    except OSError as exc:
        raise FileProblem(f"cannot read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    data = b"".join(chunks)
    out = Read(data[:limit], truncated=len(data) > limit)
    if (after.st_size, after.st_mtime_ns) != (before.st_size, before.st_mtime_ns):
        out.notes.append("changed while it was read; what was read is used")
    if out.truncated:
        out.notes.append(f"larger than {limit // MIB} MiB: only the first {limit // MIB} MiB were read")
    return out


def _utf16_without_bom(head: bytes) -> str | None:
    """UTF-16 without a byte-order mark: text of ASCII letters has a NUL in every other byte."""
    sample = head[: len(head) - len(head) % 2]
    if len(sample) < 8:
        return None
    odd, even = sample[1::2], sample[0::2]
    if odd.count(0) > len(odd) * 0.9 and even.count(0) < len(even) * 0.1:
        return "utf-16-le"
    if even.count(0) > len(even) * 0.9 and odd.count(0) < len(odd) * 0.1:
        return "utf-16-be"
    return None


def decode(raw: bytes) -> tuple[str | None, list[str]]:
    """Text from bytes, and notes: None with a note for binary data (NUL bytes, mostly undecodable)."""
    notes: list[str] = []
    encoding = next((name for bom, name in _BOMS if raw.startswith(bom)), None)
    if encoding:
        raw = raw[len(next(bom for bom, name in _BOMS if name == encoding)) :]
    else:
        encoding = _utf16_without_bom(raw[:8192])
    if encoding and encoding != "utf-8":
        text = raw.decode(encoding, errors="replace")
        notes.append(f"read as {encoding.upper()} (a byte-order mark or its byte pattern says so)")
    else:
        if b"\x00" in raw[:8192]:
            return None, ["binary data, not a text output; skipped"]
        try:
            return raw.decode("utf-8"), notes
        except UnicodeDecodeError:
            text = raw.decode("utf-8", errors="replace")
            notes.append("not valid UTF-8; read with replacement characters")
    if text.count("\ufffd") > len(text) // 10:
        return None, ["not a text file (undecodable bytes); skipped"]
    return text, notes


def write_atomic(path: Path, text: str) -> None:
    """Write `text` to `path` whole or not at all: into a temporary file beside it, flushed to disk, then
    renamed over it; on any failure (a full disk) the temporary file is removed and `path` is unchanged."""
    fd, tmp = _temporary(path)
    try:
        try:
            _write_all(fd, text.encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _temporary(path: Path) -> tuple[int, str]:
    import tempfile

    return tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)


def _write_all(fd: int, data: bytes) -> None:
    """All of `data` to `fd` (os.write may write less than asked)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
