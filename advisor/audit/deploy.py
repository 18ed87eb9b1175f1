"""What the audit would deploy on the host it read, and what that changes in estimated speed.

The advisor's recommendation for the machine the evidence shows (model, precision and users from the
deployment or launch line; GPU, GPUs per node, nodes and NVLink from the evidence) is placed on the
host's real GPU ids (core/host_placement.py), the deployed layout on the GPUs its launch gives it, and
both carry the engine's estimates (one user's tokens/s, tokens/s at the users' load, time to first
token). Evaluated at most once per host, and only where the deployment itself was evaluated (a model
the catalogue holds and a GPU); hosts of a fleet with the same scenario and the same host facts share
one evaluation, since the engine's answer depends on nothing else.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from weakref import WeakKeyDictionary

from advisor.core.engine import Engine
from advisor.core.facts import Origin
from advisor.core.host_placement import as_launched, on_host, worst_tp_path
from advisor.core.layouts import machine_of, place
from advisor.core.records import DEPLOY_FIGURES, DeployAdvice, DeployOption, Recommendation
from advisor.inputs.evidence import topo
from advisor.inputs.scenario import Scenario

ADVICE_FACTS = frozenset(
    {"deploy_differs", "deployed_against"}
    | {f"{who}_{what}" for who in ("deploy", "deployed") for what in ("layout", "groups", *DEPLOY_FIGURES.values())}
)
MEMO_SIZE = 256  # distinct (scenario, host facts) pairs kept per engine: a fleet has few kinds of host
_MEMO: WeakKeyDictionary[Engine, dict[str, Recommendation]] = WeakKeyDictionary()


def recommend_for_host(
    engine: Engine, scenario: Scenario, known: Mapping[str, Any], origins: Mapping[str, Origin]
) -> Recommendation:
    """The advisor's recommendation for the scenario with the host's own facts (peer-to-peer, links, ...)
    in place of assumptions, without the explanations only `recommend` prints."""
    usable = {
        k: v
        for k, v in known.items()
        if (spec := engine.kb.facts.get(k)) and spec.kind != "layout" and k not in ADVICE_FACTS
    }
    key = json.dumps([scenario.data, sorted(usable.items())], sort_keys=True, default=str)
    memo = _MEMO.setdefault(engine, {})
    if key not in memo:
        if len(memo) >= MEMO_SIZE:
            memo.clear()
        memo[key] = engine.evaluate(scenario, known=usable, known_origin=origins, explained=False)
    return memo[key]


def _figures(env: Mapping[str, Any]) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for name, fact in DEPLOY_FIGURES.items():
        value = env.get(fact)
        out[name] = round(float(value), 4) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    return out


def _weighing(engine: Engine, rec: Recommendation) -> set[str]:
    """The rules that reject or discourage the layout of `rec`."""
    return {x.rule for x in rec.firings if x.outcome and engine.rules.rules[x.rule].effect in ("reject", "discourage")}


def advise(
    engine: Engine, deployed: Recommendation, recommended: Recommendation, dep: Mapping[str, Any]
) -> DeployAdvice | None:
    """The deployed layout on its launch's GPUs against the recommendation on the closest GPUs topo -m
    shows, with the rules that weigh against the deployed one only; None where either has no layout or
    the layout cannot be placed on the machine."""
    if deployed.layout is None or recommended.layout is None:
        return None
    topology = dep.get("topology") or {}
    machine = machine_of(deployed.env)
    mine = place(deployed.layout, machine, strict=False)
    best = place(recommended.layout, machine) or place(recommended.layout, machine, strict=False)
    if mine is None or best is None:
        return None
    visible = [int(g) for g in dep.get("gpus") or []]
    launched = as_launched(mine, visible)
    placed = on_host(best, topology)
    now = DeployOption(deployed.layout, launched, worst_tp_path(launched, topology), _figures(deployed.env))
    if recommended.layout == deployed.layout:
        if now.tp_path is None or topo.rank(now.tp_path) <= topo.rank(worst_tp_path(placed, topology) or "X"):
            return DeployAdvice(now, now, differs=False)
    better = DeployOption(recommended.layout, placed, worst_tp_path(placed, topology), _figures(recommended.env))
    against = tuple(sorted(_weighing(engine, deployed) - _weighing(engine, recommended)))
    return DeployAdvice(now, better, differs=True, against=against)


def advice_facts(advice: DeployAdvice) -> dict[str, Any]:
    """The facts the audit rules on deployment advice read (rules/audit.yaml)."""
    facts: dict[str, Any] = {"deploy_differs": advice.differs, "deployed_against": ", ".join(advice.against) or "—"}
    for prefix, option in (("deployed", advice.deployed), ("deploy", advice.recommended)):
        facts[f"{prefix}_layout"] = option.layout.label()
        facts[f"{prefix}_groups"] = option.groups.text()
        for name, fact in DEPLOY_FIGURES.items():
            facts[f"{prefix}_{fact}"] = _shown(option.figures.get(name))
    return facts


def _shown(value: float | None) -> float | None:
    """An estimate as a reader compares it: three significant digits."""
    if value is None:
        return None
    return float(f"{value:.3g}")
