"""Where the rule base and the knowledge base live: inside the installed package, or in a checkout."""

from __future__ import annotations

import os
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent.parent
_CHECKOUT = _PACKAGE.parent


def _data_dir(name: str) -> Path:
    override = os.environ.get(f"ADVISOR_{name.upper()}_DIR")
    if override:
        return Path(override)
    installed = _PACKAGE / "_data" / name
    if installed.is_dir():
        return installed
    return _CHECKOUT / name


def rules_dir() -> Path:
    """The folder of rule files (rules/*.yaml); ADVISOR_RULES_DIR overrides it."""
    return _data_dir("rules")


def knowledge_dir() -> Path:
    """The folder of knowledge files (knowledge/**/*.yaml); ADVISOR_KNOWLEDGE_DIR overrides it."""
    return _data_dir("knowledge")
