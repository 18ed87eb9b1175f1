"""Renderers: turn result records into text, Markdown and JSON. They decide nothing."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from advisor.knowledge import Text
from advisor.yamlio import load_file


@cache
def _labels() -> dict[str, Text]:
    data = load_file(Path(__file__).with_name("labels.yaml"))
    return {k: Text(en=v["en"], de=v["de"]) for k, v in data["labels"].items()}


def label(key: str, lang: str) -> str:
    """A heading or short label in `lang`."""
    return _labels()[key].get(lang)
