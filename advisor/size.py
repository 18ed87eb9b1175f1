"""`advisor size`: one model and workload over every platform of the catalogue.

Each platform is a scenario run through the same engine as `recommend`. The rows say whether the
model fits one card, needs a split (which) or does not fit, and how many conversations it holds;
the smallest configuration that serves the users is picked; the purchase rules (scope: sizing)
turn the rows into the sizing guide's advice. Showing a Sizing is the renderers' work (advisor/render/).

A row's status follows the layout it shows: one card where each copy sits on one GPU, split where a
copy spans several. Independent models (workload.independent_models = N) each get their own equal
share of a platform's GPUs, and a row shows one model's share: a platform with fewer GPUs than models
holds none of them. The facts the purchase rules read name cards only where they are bought singly
(an SXM module comes on a board), and say whether the smallest serving configuration splits a copy.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from advisor.core.engine import Engine
from advisor.core.records import Recommendation, SizeRow, Sizing
from advisor.errors import InputError
from advisor.i18n import DEFAULT_LANG
from advisor.inputs.scenario import Scenario, build
from advisor.kb.knowledge import Knowledge, Platform
from advisor.structs import replace


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

            raise InputError(
                f"unknown platform {unknown[0]!r}", hint=closest(unknown[0], kb.platforms) or "see `advisor platforms`"
            )
        chosen = [kb.platforms[p] for p in platforms]
    if only_gpu:
        chosen = [p for p in chosen if p.gpu == only_gpu]
        if not chosen:
            raise InputError(f"no platform in the catalogue uses {only_gpu}", hint="see `advisor platforms`")
    rows: list[SizeRow] = []
    for p in chosen:
        full = _hardware(p, p.gpus_per_node, p.nodes)
        scenario = build({**raw, "hardware": full}, kb, where=where, base_dir=base_dir)
        models = int(scenario.data["workload"].get("independent_models") or 1)
        share = _share(p, models)
        if models > 1 and share is not None:
            scenario = build({**raw, "hardware": _hardware(p, *share)}, kb, where=where, base_dir=base_dir)
        rec = engine.evaluate(scenario)
        if share is None:  # fewer GPUs than models: no model gets a GPU of its own
            rec = replace(rec, layout=None, figures={k: v for k, v in rec.figures.items() if k != "conversations"})
        rows.append(SizeRow(p, p.gpus_per_node * p.nodes, _status(rec), rec))
    if not rows:
        raise InputError("no platform to size")
    users = rows[0].rec.input["workload"].get("concurrent_conversations")
    serving = [r for r in rows if r.serves(users)]
    smallest = min(
        serving, key=lambda r: (r.gpus, _warned(r), r.platform.nodes, kb.gpus[r.platform.gpu].memory_gib), default=None
    )
    facts = _sizing_facts(rows, kb, users, smallest)
    purchase = engine.evaluate_scope("sizing", facts)
    result = Sizing(rows[0].rec.input, rows, smallest, purchase.findings, facts, DEFAULT_LANG, purchase.firings)
    return result.in_lang(lang)


def _warned(row: SizeRow) -> bool:
    """Whether the platform's answer carries a warning or an error (FP8 without FP8 cores, ...)."""
    return any(f.severity in ("warning", "error") for f in row.rec.findings)


def _hardware(p: Platform, gpus_per_node: int, nodes: int) -> dict[str, Any]:
    """The scenario's hardware for `gpus_per_node` × `nodes` GPUs of platform `p`."""
    hw: dict[str, Any] = {"gpu": p.gpu, "gpus_per_node": gpus_per_node, "nodes": nodes}
    if p.nvlink:
        hw["nvlink"] = p.nvlink
    if p.node_link_gbps and nodes > 1:
        hw["node_link_gbps"] = p.node_link_gbps
    return hw


def _share(p: Platform, models: int) -> tuple[int, int] | None:
    """One of `models` equal shares of the platform's GPUs as (GPUs per node, nodes)."""
    return share(p.gpus_per_node, p.nodes, models)


def share(gpus_per_node: int, nodes: int, models: int) -> tuple[int, int] | None:
    """One of `models` equal shares of `gpus_per_node` × `nodes` GPUs as (GPUs per node, nodes); None when
    there are fewer GPUs than models. A share stays inside one node where it can."""
    each = gpus_per_node * nodes // models
    if each == 0:
        return None
    if each <= gpus_per_node:
        return each, 1
    return gpus_per_node, each // gpus_per_node


def one_models_share(
    raw: Mapping[str, Any], scenario: Scenario, kb: Knowledge, where: str, base_dir: Path | None
) -> Scenario:
    """The scenario of one of workload.independent_models models on its own equal share of the hardware
    (the scenario itself for one model); refused in one line when there are fewer GPUs than models."""
    models = int(scenario.data["workload"].get("independent_models") or 1)
    if models <= 1:
        return scenario
    hw = scenario.data["hardware"]
    each = share(hw["gpus_per_node"], hw["nodes"], models)
    if each is None:
        total = hw["gpus_per_node"] * hw["nodes"]
        raise InputError(
            f"{models} independent models need at least {models} GPUs, each its own; the scenario has {total}",
            where=where,
            hint="give more GPUs (--gpus) or fewer models (--independent-models), or ask `advisor size`",
        )
    hardware = {**dict(raw.get("hardware") or {}), "gpus_per_node": each[0], "nodes": each[1]}
    return build({**raw, "hardware": hardware}, kb, where=where, base_dir=base_dir)


def _status(rec: Recommendation) -> str:
    """The row's answer from the layout it shows: one card per copy, or a copy split over several GPUs."""
    if rec.layout is None:
        return "no-fit"
    return "one-card" if rec.layout.gpus_per_instance == 1 else "split"


def _sizing_facts(rows: list[SizeRow], kb: Knowledge, users: int | None, smallest: SizeRow | None) -> dict[str, Any]:
    first = rows[0].rec.env
    single = [r for r in rows if r.rec.layout is not None and r.rec.env.get("fits_one_gpu")]
    singly = [r for r in single if r.platform.form != "board"]  # SXM modules are not bought one at a time
    boards = [r for r in single if r.platform.form == "board"]
    smallest_card = min(singly, key=lambda r: kb.gpus[r.platform.gpu].memory_gib, default=None)
    smallest_board = min(boards, key=lambda r: (kb.gpus[r.platform.gpu].memory_gib, r.gpus), default=None)
    needed = [int(r.rec.env["min_gpus_for_weights"]) for r in rows if r.rec.env.get("min_gpus_for_weights")]
    threshold = int(kb.settings.get("low_concurrency_users", 4))
    layout = smallest.rec.layout if smallest else None
    return {
        **{k: first.get(k) for k in ("users", "workload_kind", "independent_models", "model", "precision")},
        "fits_some_card": bool(single),
        "fits_card_sold_singly": bool(singly),
        "smallest_fitting_card": kb.gpus[smallest_card.platform.gpu].name if smallest_card else None,
        "smallest_fitting_board": smallest_board.platform.name if smallest_board else None,
        "cards_needed": min(needed) if needed else None,
        "low_concurrency": None if users is None else users <= threshold,
        "smallest_serving": smallest.platform.name if smallest else None,
        "smallest_serving_gpus": smallest.gpus if smallest else None,
        "smallest_serving_layout": layout.label() if layout else None,
        "smallest_serving_splits": None if layout is None else layout.gpus_per_instance > 1,
        "smallest_serving_gpus_per_copy": layout.gpus_per_instance if layout else None,
    }
