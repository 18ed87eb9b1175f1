"""Values that are secret by their structure alone, whatever name stands before them.

- A BitLocker recovery password: 48 digits in eight groups of six, each group a multiple of 11 below
  720,896 (Microsoft's BitLocker recovery guide: the key's 16-bit blocks are stored times 11, so a block
  that is no multiple of 11 is a typing error). The check makes a match by chance about 1 in 11^8.
- A ZeroTier identity's secret: identity.secret holds the node address, the key type 0, the public half
  and the private half, colon separated (`zerotier-idtool generate`); the fourth field is the private key.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

Span = tuple[int, int]

BITLOCKER = re.compile(r"(?<![\d-])(\d{6}(?:-\d{6}){7})(?![\d-])")
ZEROTIER_SECRET = re.compile(r"(?<![0-9a-f])[0-9a-f]{10}:0:[0-9a-f]{128}:([0-9a-f]{128})(?![0-9a-f])")


def find(text: str) -> Iterator[Span]:
    """The spans of every structured secret in `text`."""
    if "-" in text:
        for m in BITLOCKER.finditer(text):
            if all(int(group) % 11 == 0 and int(group) < 720896 for group in m.group(1).split("-")):
                yield m.span(1)
    if ":0:" in text:
        for m in ZEROTIER_SECRET.finditer(text):
            yield m.span(1)
