"""Audits of many hosts (`advisor audit --fleet`): each bundle folder on its own, in order, in worker
processes that load the engine once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from advisor.core.engine import Engine
from advisor.core.records import FleetItem
from advisor.errors import AdvisorError

_WORKER_ENGINE: Engine | None = None


def _init_worker() -> None:
    global _WORKER_ENGINE
    if _WORKER_ENGINE is None:
        _WORKER_ENGINE = Engine.load()


def _audit_one(args: tuple[str, str]) -> FleetItem:
    path, lang = args
    assert _WORKER_ENGINE is not None
    try:
        from advisor.audit import audit

        result = audit(_WORKER_ENGINE, [Path(path)], lang, search=False)
        if result.recommendation is not None:
            result.recommendation.trace_builder = None  # a closure over the engine: not sent between processes
        return FleetItem(path, result)
    except AdvisorError as exc:
        return FleetItem(path, None, exc.one_line())


def audit_fleet(
    engine: Engine, bundles: list[Path], lang: str = "en", jobs: int = 1, progress: Any = None
) -> list[FleetItem]:
    """Audit each bundle folder on its own, in order, with `jobs` worker processes; `progress(done, total)`."""
    global _WORKER_ENGINE
    _WORKER_ENGINE = engine
    work = [(str(b), lang) for b in bundles]
    items: list[FleetItem] = []
    if jobs <= 1 or len(work) < 2:
        for i, w in enumerate(work, 1):
            items.append(_audit_one(w))
            if progress:
                progress(i, len(work))
        return items
    import multiprocessing as mp

    ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else mp.get_context()
    with ctx.Pool(jobs, initializer=_init_worker) as pool:
        for i, item in enumerate(pool.imap(_audit_one, work, chunksize=max(1, len(work) // (jobs * 8))), 1):
            items.append(item)
            if progress:
                progress(i, len(work))
    return items
