"""Only advisor/tui imports Textual (no whitelist: the headless chat lives in advisor/chat), and the
app starts without loading what its first screen does not need (the engine loads in a worker;
audit, reports, sympy on first use)."""

from __future__ import annotations

import pkgutil
import subprocess
import sys
from pathlib import Path

import advisor

ROOT = Path(__file__).resolve().parents[2]


def _modules_loaded_by(code: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", code + "\nimport sys; print(' '.join(sys.modules))"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=True,
    )
    return set(done.stdout.split())


def test_core_never_imports_textual():
    core = sorted(
        m.name
        for m in pkgutil.walk_packages(advisor.__path__, "advisor.")
        if not m.name.startswith("advisor.tui") and m.name != "advisor.__main__"
    )
    loaded = _modules_loaded_by("\n".join(f"import {name}" for name in core))
    assert not {m for m in loaded if m == "textual" or m.startswith("textual.")}


def test_app_module_imports_only_the_first_screen():
    loaded = _modules_loaded_by("import advisor.tui.app")
    assert "textual.app" in loaded
    for heavy in (
        "advisor.core.engine",
        "advisor.chat.consult",
        "advisor.audit",
        "advisor.render.markdown",
        "sympy",
        "advisor.inputs.evidence.topo",
        "advisor.chat.dialogue",
    ):
        assert heavy not in loaded, heavy
