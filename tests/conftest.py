"""Shared fixtures: one loaded engine per test session, and helpers that run a scenario or the CLI."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from advisor.core.engine import Engine
from advisor.core.layouts import Layout
from advisor.core.records import Recommendation
from advisor.inputs.scenario import build
from advisor.kb.paths import knowledge_dir


@pytest.fixture(scope="session", autouse=True)
def _load_cache_of_the_tests(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The tests keep the load cache in a folder of their own, never in the user's."""
    before = os.environ.get("ADVISOR_CACHE_DIR")
    os.environ["ADVISOR_CACHE_DIR"] = str(tmp_path_factory.mktemp("load-cache"))
    yield
    if before is None:
        os.environ.pop("ADVISOR_CACHE_DIR", None)
    else:
        os.environ["ADVISOR_CACHE_DIR"] = before


@pytest.fixture()
def knowledge_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of knowledge/ that the advisor reads instead (ADVISOR_KNOWLEDGE_DIR), for a test to edit."""
    target = tmp_path / "knowledge"
    shutil.copytree(knowledge_dir(), target)
    monkeypatch.setenv("ADVISOR_KNOWLEDGE_DIR", str(target))
    return target


@pytest.fixture(scope="session")
def engine() -> Engine:
    """The packaged knowledge and rules, loaded once."""
    return Engine.load()


@pytest.fixture()
def advise(engine: Engine) -> Callable[..., Recommendation]:
    """Run a scenario (the contract's YAML shape as a dict) through the engine."""

    def run(scenario: dict[str, Any], lang: str = "en", layout: Layout | None = None) -> Recommendation:
        return engine.evaluate(build(scenario, engine.kb), lang=lang, only=layout)

    return run


@pytest.fixture()
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., tuple[int, str, str]]:
    """Run `advisor ARGS...` in-process; return exit code, stdout and stderr."""
    from advisor.cli import main

    def run(*args: str) -> tuple[int, str, str]:
        code = main(list(args))
        out = capsys.readouterr()
        return code, out.out, out.err

    return run


RTX_PRO_70B = {
    "model": "Llama 3.3 70B Instruct",
    "precision": "fp8",
    "kv_cache_dtype": "fp8",
    "hardware": {"gpu": "RTX PRO 6000", "gpus_per_node": 2},
    "workload": {"context_tokens": 8192},
}


def with_users(base: dict[str, Any], users: int, **workload: Any) -> dict[str, Any]:
    """A copy of a scenario with a user count (and other workload fields)."""
    return {**base, "workload": {**base.get("workload", {}), "concurrent_conversations": users, **workload}}
