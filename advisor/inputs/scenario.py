"""The scenario a user describes (YAML file or flags), checked and normalised.

Every field has one parser here; unknown fields get the closest known name; impossible numbers get
one clear line. The result is a plain, JSON-ready dict in the contract's shape, with catalogue names
resolved, plus the catalogue records it names.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from advisor.errors import InputError
from advisor.fuzzy import closest
from advisor.inputs import fields
from advisor.inputs.fields import Field, FieldTable, field_table
from advisor.inputs.modelconfig import model_from_config
from advisor.inputs.shape import MAX_DIGITS, shown
from advisor.kb.knowledge import Gpu, Knowledge, Model
from advisor.structs import Struct
from advisor.yamlio import load_file

_TABLE = field_table()
ENUMS: dict[str, tuple[str, ...]] = {f.key: f.choices for f in _TABLE.fields if f.type == "enum"}
SECTIONS = fields.SECTIONS
TOP_FIELDS = (*_TABLE.section_keys(None), *SECTIONS)
HARDWARE_FIELDS = _TABLE.section_keys("hardware")
WORKLOAD_FIELDS = _TABLE.section_keys("workload")


class Scenario(Struct):
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
LONGEST_NUMBER = 40  # characters: a number written longer is refused unread
LONGEST_NAME = 1024  # a model or GPU name, or a path to a config.json
THOUSANDS = re.compile(r"[0-9]{1,3}(,[0-9]{3})+(\.[0-9]+)?")  # 1,024 or 8,192.0: commas only between thousands


def _tokens(value: Any, where: str, top: float | None = None) -> int:
    """A token count: 8192, '8k', '8K', '128k', '1M', '8,192'."""
    if isinstance(value, bool):
        raise InputError(f"expected a token count, not {value!r}", where=where)
    if isinstance(value, (int, float)):
        number: int | float = value
    else:
        text = str(value)
        m = re.fullmatch(
            r"([0-9][0-9_,]*(?:\.[0-9]+)?)(?:\s*([kKmM]))?(?:\s*(tokens?))?", text[: LONGEST_NUMBER + 1].strip()
        )
        if not m or len(text) > LONGEST_NUMBER:
            raise InputError(f"expected a token count like 8192 or 8k, not {shown(value)}", where=where)
        if "," in m.group(1) and not THOUSANDS.fullmatch(m.group(1)):
            raise InputError(f"expected a token count like 8192 or 8k, not {shown(value)}", where=where)
        digits = m.group(1).replace(",", "").replace("_", "")
        scale = SUFFIXES[(m.group(2) or "").lower()]
        number = int(digits) * scale if "." not in digits else float(digits) * scale
    return _whole(number, where, "token count", top)


def _whole(number: float, where: str, what: str, top: float | None = None) -> int:
    """A whole number from 1 to `top`; ints are compared as ints, so a 400-digit one costs nothing."""
    if isinstance(number, float):
        if not math.isfinite(number) or number != int(number):
            raise InputError(f"{what} must be a whole number, not {number!r}", where=where)
        number = int(number)
    if number < 1:
        raise InputError(f"{what} must be at least 1, not {shown(number)}", where=where)
    if top is not None and number > top:
        raise InputError(
            f"{shown(number)} is beyond what the advisor plans for (expected a whole number from 1 to {int(top):,})",
            where=where,
        )
    return int(number)


def _count(value: Any, where: str, top: float | None = None) -> int:
    if isinstance(value, bool):
        raise InputError(f"expected a whole number, not {value!r}", where=where)
    if isinstance(value, str):
        text = value.strip()
        if "," in text and not THOUSANDS.fullmatch(text):  # "0,1" is a list of GPUs, not 1
            raise InputError(f"expected a whole number, not {shown(value)}", where=where)
        text = text.replace(",", "").replace("_", "")
        if len(text) > LONGEST_NUMBER:
            raise InputError(f"expected a whole number, not {shown(value)}", where=where)
        try:
            value = int(text) if re.fullmatch(r"[+-]?[0-9]+", text) else float(text)
        except ValueError:
            raise InputError(f"expected a whole number, not {shown(value)}", where=where) from None
    if not isinstance(value, (int, float)):
        raise InputError(f"expected a whole number, not {shown(value)}", where=where)
    return _whole(value, where, "the number", top)


def _positive(value: Any, where: str, top: float | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise InputError(f"expected a number, not {shown(value)}", where=where)
    if isinstance(value, int) and abs(value) > 10**MAX_DIGITS:
        if value < 0:
            raise InputError(f"must be a positive number, not {shown(value)}", where=where)
        limit = f" (at most {top:,g})" if top is not None else ""
        raise InputError(f"{shown(value)} is beyond what the advisor plans for{limit}", where=where)
    if isinstance(value, int):
        number = float(value)
    else:
        text = str(value).lower().replace("gbps", "").replace("gb/s", "").strip()
        if len(text) > LONGEST_NUMBER:
            raise InputError(f"expected a number, not {shown(value)}", where=where)
        try:
            number = float(text)
        except ValueError:
            raise InputError(f"expected a number, not {shown(value)}", where=where) from None
    if not math.isfinite(number) or number <= 0:
        raise InputError(f"must be a positive number, not {shown(value)}", where=where)
    if top is not None and number > top:
        raise InputError(f"{shown(value)} is beyond what the advisor plans for (at most {top:,g})", where=where)
    return number


def _fraction(value: Any, where: str, top: float | None = None) -> float:
    """A share of memory: 0.9, or '90%' with the per-cent sign; 1.5 or 90 alone are refused, since
    1.5 may mean 150 % or 1.5 % and neither is a share the engine takes."""
    if isinstance(value, int) and not isinstance(value, bool) and value > 1:
        raise InputError(f"must be a share above 0 and at most 1 (e.g. 0.9, or 90%), not {shown(value)}", where=where)
    percent = isinstance(value, str) and value.strip().endswith("%")
    number = _positive(value.strip()[:-1] if percent else value, where)
    if percent:
        number /= 100
    if not 0 < number <= 1:
        raise InputError(
            f"must be a share above 0 and at most 1 (e.g. 0.9, or 90%), not {shown(value)}",
            where=where,
        )
    return number


def _flag(value: Any, where: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("yes", "true", "1", "ja", "y", "on"):
        return True
    if text in ("no", "false", "0", "nein", "n", "off"):
        return False
    raise InputError(f"expected yes or no, not {shown(value)}", where=where)


def _enum(choices: tuple[str, ...]) -> Callable[[Any, str], str]:
    def parse(value: Any, where: str) -> str:
        text = str(value).strip().lower()
        if value is False and "none" in choices:
            return "none"
        if text not in choices:
            hint = closest(text, choices) if len(text) <= 64 else None
            raise InputError(f"{shown(value)} is not one of {', '.join(choices)}", where=where, hint=hint)
        return text

    return parse


def _text(value: Any, where: str) -> str:
    if not isinstance(value, (str, int, float)) or isinstance(value, bool) or not str(value).strip():
        raise InputError(f"expected a name, not {shown(value)}", where=where)
    text = str(value).strip()
    if len(text) > LONGEST_NAME:
        raise InputError(f"expected a name of at most {LONGEST_NAME:,} characters, not {shown(text)}", where=where)
    if any(ord(c) < 32 or ord(c) == 127 for c in text):
        raise InputError("a name may not hold control characters (such as NUL or a line break)", where=where)
    return text


TYPE_PARSERS: dict[str, Callable[[Any, str], Any]] = {
    "text": _text,
    "count": _count,
    "tokens": _tokens,
    "bool": _flag,
    "share": _fraction,
    "gbps": _positive,
}


def parser_of(field: Field) -> Callable[[Any, str], Any]:
    """The parser of one field: its type's (with the row's `max`), or its choices' for an enum."""
    if field.type == "enum":
        return _enum(field.choices)
    parse = TYPE_PARSERS[field.type]
    if field.type in ("count", "tokens", "gbps"):
        return lambda value, where: parse(value, where, field.max)  # type: ignore[call-arg]
    return parse


def parsers(table: FieldTable) -> dict[str, Callable[[Any, str], Any]]:
    """Scenario path to parser, for every field of `table`."""
    return {f.path: parser_of(f) for f in table.fields}


PARSERS: dict[str, Callable[[Any, str], Any]] = parsers(_TABLE)


def _flatten(raw: Mapping[str, Any], where: str, table: FieldTable) -> dict[str, Any]:
    top, keys = table.section_keys(None), {section: table.section_keys(section) for section in SECTIONS}
    flat: dict[str, Any] = {}
    for key, value in raw.items():
        key = str(key)
        if key in SECTIONS:
            if value is None:
                continue
            if not isinstance(value, Mapping):
                raise InputError(f"{key!r} should be a mapping of fields", where=where)
            allowed = keys[key]
            for sub, v in value.items():
                if str(sub) not in allowed:
                    raise InputError(f"unknown field '{key}.{sub}'", where=where, hint=closest(str(sub), allowed))
                flat[f"{key}.{sub}"] = v
        elif key in top:
            flat[key] = value
        else:
            hint = closest(key, [*top, *SECTIONS, *(k for section in SECTIONS for k in keys[section])])
            for section in SECTIONS:
                if key in keys[section]:
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
    table = field_table(kb.root)
    by_path = table.by_path()
    flat = {k: v for k, v in _flatten(raw, where, table).items() if v is not None}
    given = frozenset(flat)
    for required in (f.path for f in table.fields if f.required):
        if required not in flat:
            raise InputError(f"missing field '{required}'", where=where)
    values: dict[str, Any] = {}
    for path, value in flat.items():
        flag = by_path[path].flag
        values[path] = parser_of(by_path[path])(
            value, f"{flag}: {path}" if where == "flags" and flag else f"{where}: {path}"
        )

    model = _resolve_model(values["model"], kb, base_dir)
    gpu = kb.find_gpu(values["hardware.gpu"])
    defaults = kb.settings.get("defaults", {})

    def value_of(f: Field) -> Any:
        if f.path in values:
            return values[f.path]
        if f.default_from == "model" and model.native_precision in kb.precisions:
            return model.native_precision
        if f.default_from == "gpu":  # an optional bridge is not assumed: core.facts marks it unknown
            return gpu.nvlink_fitted
        return defaults.get(f.fact, f.default)

    fields_ = table.by_fact()
    precision = kb.find_precision(value_of(fields_["precision"]))
    kv = kb.find_precision(value_of(fields_["kv_cache_dtype"]))
    if not kv.kv_cache:
        raise InputError(
            f"{kv.id} is not a KV-cache data type",
            where=f"{where}: kv_cache_dtype",
            hint="choose " + ", ".join(p.id for p in kb.precisions.values() if p.kv_cache),
        )
    resolved: dict[str, Any] = {f.path: value_of(f) for f in table.fields}
    resolved.update({"model": model.name, "precision": precision.id, "kv_cache_dtype": kv.id, "hardware.gpu": gpu.name})

    if "hardware.nvlink" in values:
        flag = by_path["hardware.nvlink"].flag if where == "flags" else None
        check_nvlink(gpu, values["hardware.nvlink"], f"{where}: hardware.nvlink", flag)
    total = resolved["hardware.gpus_per_node"] * resolved["hardware.nodes"]
    if gpu.gpus_per_system and resolved["hardware.gpus_per_node"] > gpu.gpus_per_system:
        # a GPU sold only as a whole system (DGX Spark: one GB10): more GPUs are more systems on a network
        per = gpu.gpus_per_system
        if total % per:
            raise InputError(
                f"a {gpu.name} system holds {per} GPU(s): {total} GPUs are not whole systems",
                where=f"{where}: hardware.gpus_per_node",
            )
        resolved["hardware.gpus_per_node"], resolved["hardware.nodes"] = per, total // per
        given = given | {"hardware.nodes"}
    if gpu.system_link_gbps and "hardware.node_link_gbps" not in values:
        resolved["hardware.node_link_gbps"] = gpu.system_link_gbps  # the system's own network port
    limit = int(kb.settings.get("max_total_gpus", 65536))
    if total > limit:
        raise InputError(f"{total:,} GPUs is beyond what the advisor plans for (at most {limit:,})", where=where)
    context = resolved["workload.context_tokens"]
    max_context = int(kb.settings.get("max_context_tokens", 10_000_000))
    if context > max_context:
        raise InputError(
            f"a context of {context:,} tokens is beyond {max_context:,}", where=f"{where}: workload.context_tokens"
        )
    prompt = resolved["workload.prompt_tokens"]
    if prompt > context and "workload.prompt_tokens" in values and "workload.context_tokens" in values:
        raise InputError(
            f"the prompt ({prompt:,} tokens) is longer than the context ({context:,} tokens)",
            where=f"{where}: workload.prompt_tokens",
        )
    resolved["workload.prompt_tokens"] = min(prompt, context)

    # The catalogue ids sit beside the names they resolve.
    ids = {"model": ("model_id", model.id), "hardware.gpu": ("gpu_id", gpu.id)}
    data: dict[str, Any] = {}
    for f in table.fields:
        node = data.setdefault(f.section, {}) if f.section else data
        node[f.key] = resolved[f.path]
        if f.path in ids:
            node[ids[f.path][0]] = ids[f.path][1]
    return Scenario(data=data, model=model, gpu=gpu, given=given)


_SETUP_WORDS = {"none": "no NVLink", "nvswitch": "NVSwitch"}


def _setups(options: tuple[str, ...] | list[str]) -> str:
    """NVLink setups in words: '2- or 4-card NVLink bridges', 'NVSwitch', 'no NVLink'."""
    widths = [o.split("-")[1] for o in options if o.startswith("bridge-")]
    words = [f"{'- or '.join(widths)}-card NVLink bridges"] if widths else []
    words += [_SETUP_WORDS[o] for o in options if o in _SETUP_WORDS and o != "none"]
    return " or ".join(words) or "no NVLink"


def nvlink_refusal(gpu: Gpu, nvlink: str) -> tuple[str, str] | None:
    """Why `gpu` cannot have the NVLink setup `nvlink` and what it can have, or None where it can (or
    the catalogue does not say which setups the vendor allows)."""
    options = gpu.nvlink_options
    if not options or nvlink in options:
        return None
    linked = [o for o in options if o != "none"]
    if not linked:
        return f"the {gpu.name} has no NVLink", "none"
    if nvlink == "none":
        return f"the {gpu.name} always has NVLink ({_setups(linked)})", _either(options)
    return f"the {gpu.name} takes {_setups(linked)}, not {_setups([nvlink])}", _either(options)


def _either(options: tuple[str, ...]) -> str:
    return " or ".join(options) if len(options) < 3 else ", ".join(options[:-1]) + " or " + options[-1]


def check_nvlink(gpu: Gpu, nvlink: str, where: str, flag: str | None = None) -> None:
    """InputError when the catalogue says `gpu` cannot have the NVLink setup `nvlink`; the hint names
    the setups it can have (as the CLI flag where the value came from one)."""
    refusal = nvlink_refusal(gpu, nvlink)
    if refusal is not None:
        message, possible = refusal
        raise InputError(message, where=where, hint=f"choose {flag + ' ' if flag else ''}{possible}")


def observed_nvlink(gpu: Gpu, nvlink: str, gpus_per_node: int) -> tuple[str, str | None]:
    """The NVLink setup a host's topology shows, read against the catalogue: (the setup to evaluate, a
    note when the evidence contradicts the catalogue, whose setup is then the card's usual one). A full
    NVLink mesh of at most N GPUs looks the same on N-card bridges as on NVSwitch, so on a card that
    takes N-card bridges and no NVSwitch it is the bridges."""
    refusal = nvlink_refusal(gpu, nvlink)
    if refusal is None:
        return nvlink, None
    bridges = [int(o.split("-")[1]) for o in gpu.nvlink_options if o.startswith("bridge-")]
    if nvlink == "nvswitch" and any(gpus_per_node <= width for width in bridges):
        return f"bridge-{min(w for w in bridges if gpus_per_node <= w)}", None
    message, possible = refusal
    usual = gpu.nvlink if gpu.nvlink in gpu.nvlink_options else gpu.nvlink_options[0]
    return usual, (
        f"the topology shows {nvlink}, but {message} in the catalogue (possible: {possible}); "
        f"evaluated as {usual}: check which GPU the host really has (nvidia-smi -q)"
    )


def _resolve_model(name: str, kb: Knowledge, base_dir: Path | None) -> Model:
    try:
        candidate = Path(name).expanduser() if name.startswith("~") else Path(name)
    except RuntimeError:  # ~nobody/x: a home folder that does not exist
        raise InputError(f"no home folder for {name.split('/')[0]!r}", where="model") from None
    if base_dir is not None and not candidate.is_absolute():
        candidate = base_dir / candidate
    try:
        is_file = candidate.exists() and not candidate.is_dir()
    except OSError as exc:  # a name too long for a path
        raise InputError(f"not a model name or a readable path: {exc.strerror or exc}", where="model") from None
    if name.endswith(".json") or is_file:
        return model_from_config(candidate)
    return kb.find_model(name)
