"""What the advisor prints never drives the terminal: control characters that came from a file, a
transcript or a pasted text (ESC starting a colour, a cursor move, a title change; C1 controls such as
CSI; backspace and carriage return that overwrite a line) are shown as visible escapes (\\x1b), while line
breaks and tabs stay. The full-screen chat, which drives the terminal itself, is the one exception.
"""

from __future__ import annotations

import contextlib
import re
import sys
from collections.abc import Iterator
from typing import Any, TextIO

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def safe(text: str) -> str:
    """`text` with every control character but line break and tab written as a visible escape."""
    if not _CONTROL.search(text):
        return text
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group(0)):02x}", text)


class SafeStream:
    """A text stream that writes through `safe` to the stream it wraps."""

    def __init__(self, inner: TextIO) -> None:
        self._inner = inner

    def write(self, text: str) -> int:
        """Write `text`, control characters escaped; returns the length asked for, as streams do."""
        self._inner.write(safe(text))
        return len(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


@contextlib.contextmanager
def guarded() -> Iterator[None]:
    """While inside, sys.stdout and sys.stderr escape control characters."""
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = SafeStream(out), SafeStream(err)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = out, err
