"""`advisor size`: one model and workload over every platform of the catalogue.

Each platform is a scenario run through the same engine as `recommend`. The rows say whether the
model fits one card, needs a split (which) or does not fit, and how many conversations it holds;
the smallest configuration that serves the users is picked; the purchase rules (scope: sizing)
turn the rows into the sizing guide's advice. Showing a Sizing is the renderers' work (advisor/render/).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from advisor.core.engine import Engine
from advisor.core.records import SizeRow, Sizing
from advisor.errors import InputError
from advisor.i18n import DEFAULT_LANG
from advisor.inputs.scenario import build
from advisor.kb.knowledge import Knowledge


def size(
    engine: Engine,
    raw: Mapping[str, Any],
    lang: str = "en",
    where: str = "scenario",
    base_dir: Path | None = None,
    platforms: list[str] | None = None,
) -> Sizing:
    """Evaluate the scenario's model and workload on each catalogue platform."""
    kb = engine.kb
    hardware = dict(raw.get("hardware") or {})
    only_gpu = kb.find_gpu(str(hardware["gpu"])).id if hardware.get("gpu") else None
    chosen = list(kb.platforms.values())
    if platforms:
        unknown = [p for p in platforms if p not in kb.platforms]
        if unknown:
            from advisor.fuzzy import closest

            raise InputError(f"unknown platform {unknown[0]!r}",
                             hint=closest(unknown[0], kb.platforms) or "see `advisor platforms`")
        chosen = [kb.platforms[p] for p in platforms]
    if only_gpu:
        chosen = [p for p in chosen if p.gpu == only_gpu]
        if not chosen:
            raise InputError(f"no platform in the catalogue uses {only_gpu}", hint="see `advisor platforms`")
    rows: list[SizeRow] = []
    for p in chosen:
        hw: dict[str, Any] = {"gpu": p.gpu, "gpus_per_node": p.gpus_per_node, "nodes": p.nodes}
        if p.nvlink:
            hw["nvlink"] = p.nvlink
        if p.node_link_gbps:
            hw["node_link_gbps"] = p.node_link_gbps
        scenario = build({**raw, "hardware": hw}, kb, where=where, base_dir=base_dir)
        rec = engine.evaluate(scenario)
        env = rec.env
        status = "no-fit" if rec.layout is None else ("one-card" if env.get("fits_one_gpu") else "split")
        rows.append(SizeRow(p, p.gpus_per_node * p.nodes, status, rec))
    if not rows:
        raise InputError("no platform to size")
    users = rows[0].rec.input["workload"].get("concurrent_conversations")
    serving = [r for r in rows if r.serves(users)]
    smallest = min(serving, key=lambda r: (r.gpus, _warned(r), r.platform.nodes, kb.gpus[r.platform.gpu].memory_gib),
                   default=None)
    facts = _sizing_facts(rows, kb, users)
    purchase = engine.evaluate_scope("sizing", facts)
    return Sizing(rows[0].rec.input, rows, smallest, purchase.findings, facts, DEFAULT_LANG, purchase.firings).in_lang(lang)


def _warned(row: SizeRow) -> bool:
    """Whether the platform's answer carries a warning or an error (FP8 without FP8 cores, ...)."""
    return any(f.severity in ("warning", "error") for f in row.rec.findings)


def _sizing_facts(rows: list[SizeRow], kb: Knowledge, users: int | None) -> dict[str, Any]:
    first = rows[0].rec.env
    single = [r for r in rows if r.rec.env.get("fits_one_gpu")]
    smallest_card = min(single, key=lambda r: kb.gpus[r.platform.gpu].memory_gib, default=None)
    needed = [int(r.rec.env["min_gpus_for_weights"]) for r in rows if r.rec.env.get("min_gpus_for_weights")]
    threshold = int(kb.settings.get("low_concurrency_users", 4))
    return {
        **{k: first.get(k) for k in ("users", "workload_kind", "independent_models", "model", "precision")},
        "fits_some_card": bool(single),
        "smallest_fitting_card": kb.gpus[smallest_card.platform.gpu].name if smallest_card else None,
        "cards_needed": min(needed) if needed else None,
        "low_concurrency": None if users is None else users <= threshold,
    }
