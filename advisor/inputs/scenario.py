"""The scenario a user describes (YAML file or flags), checked and normalised.

Every field has one parser here; unknown fields get the closest known name; impossible numbers get
one clear line. The result is a plain, JSON-ready dict in the contract's shape, with catalogue names
resolved, plus the catalogue records it names.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from advisor.errors import InputError
from advisor.fuzzy import closest
from advisor.kb.knowledge import Gpu, Knowledge, Model
from advisor.inputs.modelconfig import model_from_config
from advisor.yamlio import load_file

ENUMS: dict[str, tuple[str, ...]] = {
    "nvlink": ("none", "bridge-2", "bridge-4", "nvswitch"),
    "iommu": ("off", "passthrough", "translated", "unknown"),
    "acs": ("disabled", "enabled", "unknown"),
    "p2p": ("ok", "broken", "unknown"),
    "kind": ("inference", "training"),
    "goal": ("throughput", "latency", "capacity"),
    "engine": ("vllm", "sglang"),
}
SECTIONS = ("hardware", "workload")
TOP_FIELDS = ("model", "precision", "kv_cache_dtype", "hardware", "workload", "engine")
HARDWARE_FIELDS = ("gpu", "gpus_per_node", "nodes", "nvlink", "node_link_gbps", "virtualized", "iommu", "acs", "p2p")
WORKLOAD_FIELDS = (
    "kind", "goal", "concurrent_conversations", "context_tokens", "prompt_tokens", "memory_utilization", "micro_batches",
    "independent_models",
)


@dataclass(frozen=True)
class Scenario:
    """A checked scenario: the normalised input and the catalogue entries it names."""

    data: dict[str, Any]
    model: Model
    gpu: Gpu
    given: frozenset[str]  # dotted paths the user stated; the rest are defaults

    def get(self, path: str) -> Any:
        """A field by dotted path, e.g. 'hardware.gpu'."""
        node: Any = self.data
        for part in path.split("."):
            node = node.get(part) if isinstance(node, dict) else None
        return node


SUFFIXES = {"": 1, "k": 1024, "m": 1024 * 1024}  # 8k tokens are 8,192


def _tokens(value: Any, where: str) -> int:
    """A token count: 8192, '8k', '8K', '128k', '1M', '8,192'."""
    if isinstance(value, bool):
        raise InputError(f"expected a token count, not {value!r}", where=where)
    if isinstance(value, (int, float)):
        number = float(value)
    else:
        m = re.fullmatch(r"\s*([0-9][0-9_,.]*)\s*([kKmM]?)\s*(tokens?)?\s*", str(value))
        if not m:
            raise InputError(f"expected a token count like 8192 or 8k, not {value!r}", where=where)
        number = float(m.group(1).replace(",", "").replace("_", ""))
        number *= SUFFIXES[m.group(2).lower()]
    return _whole(number, where, "token count")


def _whole(number: float, where: str, what: str) -> int:
    if not math.isfinite(number) or number != int(number):
        raise InputError(f"{what} must be a whole number, not {number!r}", where=where)
    if number < 1:
        raise InputError(f"{what} must be at least 1, not {int(number)}", where=where)
    return int(number)


def _count(value: Any, where: str) -> int:
    if isinstance(value, bool):
        raise InputError(f"expected a whole number, not {value!r}", where=where)
    if isinstance(value, str):
        try:
            value = float(value.replace(",", "").strip())
        except ValueError:
            raise InputError(f"expected a whole number, not {value!r}", where=where) from None
    if not isinstance(value, (int, float)):
        raise InputError(f"expected a whole number, not {value!r}", where=where)
    return _whole(float(value), where, "the number")


def _positive(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise InputError(f"expected a number, not {value!r}", where=where)
    try:
        number = float(str(value).lower().replace("gbps", "").replace("gb/s", "").strip())
    except ValueError:
        raise InputError(f"expected a number, not {value!r}", where=where) from None
    if not math.isfinite(number) or number <= 0:
        raise InputError(f"must be a positive number, not {value!r}", where=where)
    return number


def _fraction(value: Any, where: str) -> float:
    number = _positive(value, where)
    if number > 1:
        number = number / 100 if number <= 100 else number
    if not 0 < number <= 1:
        raise InputError(f"must be a share between 0 and 1 (e.g. 0.9), not {value!r}", where=where)
    return number


def _flag(value: Any, where: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("yes", "true", "1", "ja", "y", "on"):
        return True
    if text in ("no", "false", "0", "nein", "n", "off"):
        return False
    raise InputError(f"expected yes or no, not {value!r}", where=where)


def _enum(name: str) -> Callable[[Any, str], str]:
    choices = ENUMS[name]

    def parse(value: Any, where: str) -> str:
        text = str(value).strip().lower()
        if value is False and "none" in choices:
            return "none"
        if text not in choices:
            raise InputError(f"{value!r} is not one of {', '.join(choices)}", where=where, hint=closest(text, choices))
        return text

    return parse


def _text(value: Any, where: str) -> str:
    if not isinstance(value, (str, int, float)) or isinstance(value, bool) or not str(value).strip():
        raise InputError(f"expected a name, not {value!r}", where=where)
    return str(value).strip()


PARSERS: dict[str, Callable[[Any, str], Any]] = {
    "model": _text,
    "precision": _text,
    "kv_cache_dtype": _text,
    "engine": _enum("engine"),
    "hardware.gpu": _text,
    "hardware.gpus_per_node": _count,
    "hardware.nodes": _count,
    "hardware.nvlink": _enum("nvlink"),
    "hardware.node_link_gbps": _positive,
    "hardware.virtualized": _flag,
    "hardware.iommu": _enum("iommu"),
    "hardware.acs": _enum("acs"),
    "hardware.p2p": _enum("p2p"),
    "workload.kind": _enum("kind"),
    "workload.goal": _enum("goal"),
    "workload.concurrent_conversations": _count,
    "workload.context_tokens": _tokens,
    "workload.prompt_tokens": _tokens,
    "workload.memory_utilization": _fraction,
    "workload.micro_batches": _count,
    "workload.independent_models": _count,
}


def _flatten(raw: Mapping[str, Any], where: str) -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in raw.items():
        key = str(key)
        if key in SECTIONS:
            if value is None:
                continue
            if not isinstance(value, Mapping):
                raise InputError(f"{key!r} should be a mapping of fields", where=where)
            allowed = HARDWARE_FIELDS if key == "hardware" else WORKLOAD_FIELDS
            for sub, v in value.items():
                if str(sub) not in allowed:
                    raise InputError(f"unknown field '{key}.{sub}'", where=where, hint=closest(str(sub), allowed))
                flat[f"{key}.{sub}"] = v
        elif key in TOP_FIELDS:
            flat[key] = value
        else:
            everything = list(TOP_FIELDS) + list(HARDWARE_FIELDS) + list(WORKLOAD_FIELDS)
            hint = closest(key, everything)
            if key in HARDWARE_FIELDS or key in WORKLOAD_FIELDS:
                section = "hardware" if key in HARDWARE_FIELDS else "workload"
                hint = f"it belongs under '{section}:'"
            raise InputError(f"unknown field {key!r}", where=where, hint=hint)
    return flat


def load_scenario_file(path: Path) -> dict[str, Any]:
    """Read a scenario YAML file into its raw mapping."""
    data = load_file(path)
    if not isinstance(data, Mapping):
        raise InputError("a scenario file must be a YAML mapping with at least 'model' and 'hardware'", where=str(path))
    return dict(data)


def build(raw: Mapping[str, Any], kb: Knowledge, where: str = "scenario", base_dir: Path | None = None) -> Scenario:
    """Check and normalise a raw scenario; resolve the model and GPU in the catalogue."""
    flat = {k: v for k, v in _flatten(raw, where).items() if v is not None}
    given = frozenset(flat)
    for required in ("model", "hardware.gpu"):
        if required not in flat:
            raise InputError(f"missing field '{required}'", where=where)
    values: dict[str, Any] = {}
    for path, value in flat.items():
        values[path] = PARSERS[path](value, f"{where}: {path}")

    model = _resolve_model(values["model"], kb, base_dir)
    gpu = kb.find_gpu(values["hardware.gpu"])
    defaults = kb.settings.get("defaults", {})
    precision_name = values.get("precision") or (
        model.native_precision if model.native_precision in kb.precisions else defaults.get("precision", "bf16")
    )
    precision = kb.find_precision(precision_name)
    kv = kb.find_precision(values.get("kv_cache_dtype") or defaults.get("kv_cache_dtype", "bf16"))
    if not kv.kv_cache:
        raise InputError(
            f"{kv.id} is not a KV-cache data type",
            where=f"{where}: kv_cache_dtype",
            hint="choose " + ", ".join(p.id for p in kb.precisions.values() if p.kv_cache),
        )

    def pick(path: str, default_key: str, fallback: Any = None) -> Any:
        return values.get(path, defaults.get(default_key, fallback))

    gpus_per_node = values.get("hardware.gpus_per_node", 1)
    nodes = pick("hardware.nodes", "nodes", 1)
    total = gpus_per_node * nodes
    limit = int(kb.settings.get("max_total_gpus", 65536))
    if total > limit:
        raise InputError(f"{total:,} GPUs is beyond what the advisor plans for (at most {limit:,})", where=where)
    context = pick("workload.context_tokens", "context_tokens", 8192)
    max_context = int(kb.settings.get("max_context_tokens", 10_000_000))
    if context > max_context:
        raise InputError(f"a context of {context:,} tokens is beyond {max_context:,}", where=f"{where}: workload.context_tokens")
    prompt = pick("workload.prompt_tokens", "prompt_tokens", 2000)
    if prompt > context and "workload.prompt_tokens" in values and "workload.context_tokens" in values:
        raise InputError(
            f"the prompt ({prompt:,} tokens) is longer than the context ({context:,} tokens)",
            where=f"{where}: workload.prompt_tokens",
        )
    prompt = min(prompt, context)
    nvlink = values.get("hardware.nvlink", gpu.nvlink)

    data: dict[str, Any] = {
        "model": model.name,
        "model_id": model.id,
        "precision": precision.id,
        "kv_cache_dtype": kv.id,
        "hardware": {
            "gpu": gpu.name,
            "gpu_id": gpu.id,
            "gpus_per_node": gpus_per_node,
            "nodes": nodes,
            "nvlink": nvlink,
            "node_link_gbps": values.get("hardware.node_link_gbps"),
            "virtualized": pick("hardware.virtualized", "virtualized", False),
            "iommu": pick("hardware.iommu", "iommu", "unknown"),
            "acs": pick("hardware.acs", "acs", "unknown"),
            "p2p": pick("hardware.p2p", "p2p", "unknown"),
        },
        "workload": {
            "kind": pick("workload.kind", "workload_kind", "inference"),
            "goal": pick("workload.goal", "goal", "throughput"),
            "concurrent_conversations": values.get("workload.concurrent_conversations"),
            "context_tokens": context,
            "prompt_tokens": prompt,
            "memory_utilization": pick("workload.memory_utilization", "memory_utilization", 0.9),
            "micro_batches": values.get("workload.micro_batches"),
            "independent_models": pick("workload.independent_models", "independent_models", 1),
        },
        "engine": pick("engine", "engine", "vllm"),
    }
    return Scenario(data=data, model=model, gpu=gpu, given=given)


def _resolve_model(name: str, kb: Knowledge, base_dir: Path | None) -> Model:
    candidate = Path(name).expanduser()
    if base_dir is not None and not candidate.is_absolute():
        candidate = base_dir / candidate
    if name.endswith(".json") or candidate.is_file():
        return model_from_config(candidate)
    return kb.find_model(name)
