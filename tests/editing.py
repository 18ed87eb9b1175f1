"""Helpers for tests that edit a temporary copy of the data: the edit must find its text, once."""

from __future__ import annotations

from pathlib import Path


def edit_once(path: Path, old: str, new: str) -> None:
    """Replace the first `old` in the file at `path` with `new`; the text must be there."""
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
