"""Every UI string exists in English and German, and every key the code asks for is there."""

from __future__ import annotations

import re
from pathlib import Path

from advisor.chat.strings import _table

TUI = Path(__file__).resolve().parents[2] / "advisor" / "tui"


def test_every_string_in_both_languages():
    table = _table()
    for section in ("strings", "facts"):
        for key, entry in table[section].items():
            assert isinstance(key, str), f"{section}: YAML read a key as {key!r}; quote it"
            assert entry.get("en") and entry.get("de"), f"{section}.{key} lacks a language"


def test_every_key_the_code_uses_exists():
    keys = set(_table()["strings"])
    used: set[str] = set()
    for path in TUI.glob("*.py"):
        used |= set(re.findall(r"""\bt\(\s*["']([a-z_]+)["']""", path.read_text()))
    assert used and not used - keys, used - keys
    assert (TUI / "help.en.md").exists() and (TUI / "help.de.md").exists()
