"""Shared fixtures: one loaded engine per test session, and helpers that run a scenario or the CLI."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from advisor.core.engine import Engine
from advisor.core.layouts import Layout
from advisor.core.records import Recommendation
from advisor.inputs.scenario import build


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
