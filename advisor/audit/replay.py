"""What an audit transcript keeps so that `advisor replay` judges the same facts without the bundle, and
the replay itself: today's rules on the recorded facts.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from advisor.audit.diagnose import Verdict, judge
from advisor.audit.read import layout_of
from advisor.core.engine import Engine
from advisor.core.facts import Facts


def replay_record(f: Facts, raw: Mapping[str, Any], dep: Mapping[str, Any]) -> dict[str, Any]:
    """What an audit transcript keeps so that `advisor replay` judges the same facts without the bundle:
    each fact with its evidence line, the deployment's scenario mapping, and its layout and GPU list (with
    the topo -m paths between the GPUs, where read)."""
    facts = {}
    for name, value in sorted(f.values.items()):
        if value is None or not isinstance(value, (str, int, float, bool)):
            continue
        e = f.where.get(name)
        line = {"file": Path(e.file).name, "line": e.line, "text": e.text} if e is not None and e.file else None
        facts[name] = {"value": value, "evidence": line}
    deployment = {k: v for k, v in dep.items() if k in ("tp", "pp", "dp", "ep", "gpus")}
    topology = dep.get("topology") or {}
    if topology.get("paths"):  # the GPU ids the deploy advice names come from the paths between them
        deployment["topology"] = {"gpus": list(topology.get("gpus") or []), "paths": dict(topology["paths"])}
    return {"facts": facts, "scenario": _plain(raw), "deployment": deployment}


def replay(engine: Engine, recorded: Mapping[str, Any]) -> Verdict:
    """The rules of today on an audit's recorded facts (see replay_record), judged as the audit judges."""
    f = Facts(values={name: fact["value"] for name, fact in (recorded.get("facts") or {}).items()})
    dep = dict(recorded.get("deployment") or {})
    return judge(engine, f, dict(recorded.get("scenario") or {}), dep, layout_of(dep), search=False)


def _plain(value: Any) -> Any:
    """YAML mappings and lists as plain dicts and lists, for JSON."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value
