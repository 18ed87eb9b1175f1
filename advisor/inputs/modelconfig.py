"""Reading a Hugging Face config.json into a catalogue model, and estimating parameter counts.

The catalogue's `config:` block uses one set of key names; real config.json files name the same
things differently (num_local_experts, n_routed_experts, experts_per_token, text_config, ...).
Which layers attend locally (a sliding window or a chunk) is read from the keys transformers reads:
`layer_types` first, else `attention_chunk_size` with `no_rope_layers` / `no_rope_layer_interval`,
else `sliding_window` with `sliding_window_pattern` (or the model type's default pattern).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from advisor.errors import InputError
from advisor.inputs.shape import Flag, Int, Items, Record, Spec, Str
from advisor.kb.knowledge import Citation, Model
from advisor.structs import Struct
from advisor.yamlio import read_regular

MAX_CONFIG_BYTES = 4 * 1024 * 1024

# catalogue key -> config.json keys that may hold it, first match wins
ALIASES: dict[str, tuple[str, ...]] = {
    "num_hidden_layers": ("num_hidden_layers", "n_layer", "num_layers"),
    "hidden_size": ("hidden_size", "n_embd", "d_model"),
    "num_attention_heads": ("num_attention_heads", "n_head"),
    "num_key_value_heads": ("num_key_value_heads", "num_kv_heads", "n_kv_heads"),
    "head_dim": ("head_dim",),
    "intermediate_size": ("intermediate_size", "ffn_hidden_size"),
    "vocab_size": ("vocab_size",),
    "max_position_embeddings": ("max_position_embeddings",),
    "num_experts": ("num_experts", "num_local_experts", "n_routed_experts"),
    "num_experts_per_tok": ("num_experts_per_tok", "experts_per_token", "moe_topk"),
    "num_shared_experts": ("n_shared_experts", "num_shared_experts"),
    "moe_intermediate_size": ("moe_intermediate_size",),
    "kv_lora_rank": ("kv_lora_rank",),
    "qk_rope_head_dim": ("qk_rope_head_dim",),
    "sliding_window": ("sliding_window",),
    "tie_word_embeddings": ("tie_word_embeddings",),
}

# The typed shape of the config.json keys the advisor reads (every spelling of ALIASES and the
# layer-pattern keys); other keys are kept unread. The limits are far above every model in the
# catalogue (126 layers, hidden size 16,384, 256 experts, vocabulary 262,208; tests/test_hostile.py
# checks the catalogue against them), so that no arithmetic runs on an absurd or unbounded number.
SIZE = Int(1, 1 << 22)
BIG = Int(1, 1 << 40)
LIMITS: dict[str, Spec] = {
    "num_hidden_layers": Int(1, 1024),
    "hidden_size": Int(1, 1 << 20),
    "num_attention_heads": Int(1, 1 << 16),
    "num_key_value_heads": Int(1, 1 << 16),
    "head_dim": Int(1, 1 << 16),
    "intermediate_size": SIZE,
    "vocab_size": Int(1, 1 << 24),
    "max_position_embeddings": BIG,
    "num_experts": Int(0, 4096),
    "num_experts_per_tok": Int(0, 4096),
    "num_shared_experts": Int(0, 4096),
    "moe_intermediate_size": SIZE,
    "kv_lora_rank": Int(1, 1 << 16),
    "qk_rope_head_dim": Int(0, 1 << 16),
    "sliding_window": BIG,
    "tie_word_embeddings": Flag(),
}
LAYER_KEYS: dict[str, Spec] = {
    "first_k_dense_replace": Int(0, 1024),
    "decoder_sparse_step": Int(0, 1024),
    "interleave_moe_layer_step": Int(0, 1024),
    "mlp_only_layers": Items(Int(0, 1023), 1024),
    "layer_types": Items(Str(64), 1024),
    "attention_chunk_size": BIG,
    "no_rope_layers": Items(Int(0, 1), 1024),
    "no_rope_layer_interval": Int(1, 1024),
    "sliding_window_pattern": Int(1, 1024),
    "use_sliding_window": Flag(),
    "architectures": Items(Str(256), 16),
    "model_type": Str(128),
    "_name_or_path": Str(1024),
}


def _shape(limits: Mapping[str, Spec]) -> Record:
    keys = {name: limits[key] for key, names in ALIASES.items() for name in names}
    return Record({**keys, **LAYER_KEYS}, open=True, what="a JSON object")


CONFIG = _shape(LIMITS)


def checked(raw: Mapping[str, Any], where: str) -> dict[str, Any]:
    """The config.json mapping with every key the advisor reads checked against its shape (a
    `sliding_window: false` or null means none); InputError naming the key's path otherwise."""
    out = {k: v for k, v in raw.items() if not (k == "sliding_window" and v is False)}
    out = CONFIG.check(out, "", where)
    text = raw.get("text_config")
    if text is not None:
        out["text_config"] = checked(text, where) if isinstance(text, Mapping) else text
        if not isinstance(text, Mapping):
            raise InputError(f"text_config: expected a JSON object, got {type(text).__name__}", where=where)
    return out


# transformers' default pattern where a config omits it: one full layer every N (configuration_gemma3.py,
# configuration_gpt_oss.py, configuration_cohere2.py build layer_types with `(i + 1) % N`)
DEFAULT_SLIDING_PATTERN = {"gemma3": 6, "gemma3_text": 6, "gpt_oss": 2, "cohere2": 4}
# configuration_llama4.py: "a NoPE layer every `no_rope_layer_interval` layers", default 4
DEFAULT_NO_ROPE_INTERVAL = 4


class LocalAttention(Struct):
    """Which layers of a model attend to only part of the context, and how far."""

    kind: str  # none | sliding | chunked
    window: int | None
    layers: int
    pattern: str


def local_attention(raw: Mapping[str, Any], layers: int) -> LocalAttention:
    """The local-attention layers a config.json declares (text_config already merged into `raw`)."""
    types = raw.get("layer_types")
    window, chunk = raw.get("sliding_window"), raw.get("attention_chunk_size")
    if isinstance(types, list) and types:
        sliding = sum(1 for t in types[:layers] if "sliding" in str(t))
        chunked = sum(1 for t in types[:layers] if "chunked" in str(t))
        if chunked and chunk:
            return LocalAttention("chunked", int(chunk), chunked, "layer_types")
        if sliding and window:
            return LocalAttention("sliding", int(window), sliding, "layer_types")
        return LocalAttention("none", None, 0, "layer_types")
    if isinstance(chunk, int) and chunk > 0:
        rope = raw.get("no_rope_layers")
        if isinstance(rope, list) and rope:
            return LocalAttention("chunked", chunk, sum(1 for r in rope[:layers] if r), "no_rope_layers")
        every = int(raw.get("no_rope_layer_interval") or DEFAULT_NO_ROPE_INTERVAL)
        count = sum(1 for i in range(layers) if (i + 1) % every)
        return LocalAttention("chunked", chunk, count, f"a NoPE full layer every {every}")
    if not isinstance(window, int) or window <= 0 or raw.get("use_sliding_window") is False:
        return LocalAttention("none", None, 0, "")
    pattern = raw.get("sliding_window_pattern") or DEFAULT_SLIDING_PATTERN.get(str(raw.get("model_type", "")))
    if isinstance(pattern, int) and pattern > 1:
        count = sum(1 for i in range(layers) if (i + 1) % pattern)
        return LocalAttention("sliding", window, count, f"one full layer every {pattern}")
    return LocalAttention("sliding", window, layers, "every layer")


def _pick(raw: Mapping[str, Any], key: str) -> Any:
    for name in ALIASES[key]:
        value = raw.get(name)
        if value is not None:
            return value
    return None


def normalise(raw: Mapping[str, Any], where: str) -> dict[str, Any]:
    """The catalogue's config block from a config.json mapping; InputError when a needed key is missing
    or a key it reads is not of its shape (checked here too, so no caller can skip the check)."""
    raw = checked(raw, where)
    if isinstance(raw.get("text_config"), Mapping):
        raw = {**raw, **raw["text_config"]}
    config = {key: _pick(raw, key) for key in ALIASES}
    for key in ("num_hidden_layers", "hidden_size", "num_attention_heads"):
        value = config[key]
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise InputError(f"config.json has no usable {key!r} (found {value!r})", where=where)
    if config["num_key_value_heads"] is None:
        config["num_key_value_heads"] = config["num_attention_heads"]
    _refuse_impossible(config, where)
    if config["head_dim"] is None and config["kv_lora_rank"] is None:
        config["head_dim"] = config["hidden_size"] // config["num_attention_heads"]
    experts = config["num_experts"]
    if experts:
        if config["moe_intermediate_size"] is None:
            config["moe_intermediate_size"] = config["intermediate_size"]
        layers = config["num_hidden_layers"]
        dense_first = int(raw.get("first_k_dense_replace") or 0)
        step = int(raw.get("decoder_sparse_step") or raw.get("interleave_moe_layer_step") or 1)
        mlp_only = raw.get("mlp_only_layers") or []
        config["moe_layers"] = sum(
            1 for i in range(layers) if i >= dense_first and (i + 1) % step == 0 and i not in mlp_only
        )
    else:
        config["moe_layers"] = None
    return config


def _refuse_impossible(config: Mapping[str, Any], where: str) -> None:
    """InputError, with the reason, for a config no model can have: grouped-query attention needs the
    attention heads to be a multiple of the KV heads (each KV head serves a whole group), a token is routed
    to at most as many experts as there are, and a hidden size too small for its heads."""
    heads, kv = config["num_attention_heads"], config["num_key_value_heads"]
    if isinstance(kv, int) and kv >= 1 and (kv > heads or heads % kv):
        raise InputError(
            f"impossible model config: {kv} KV heads with {heads} attention heads "
            "(the attention heads must be a multiple of the KV heads)",
            where=where,
        )
    experts, active = config["num_experts"] or 0, config["num_experts_per_tok"] or 0
    if active > experts and (experts or active > 1):
        raise InputError(
            f"impossible model config: {active} active experts per token of {experts} experts "
            "(a token is routed to at most every expert)",
            where=where,
        )
    head_dim = config.get("head_dim")
    if head_dim is None and config["kv_lora_rank"] is None and config["hidden_size"] < heads:
        raise InputError(
            f"impossible model config: hidden_size {config['hidden_size']} is smaller than its {heads} attention heads",
            where=where,
        )


def estimate_params(config: Mapping[str, Any], tied: bool | None = None) -> tuple[float, float]:
    """Total and active parameters of a GQA/MHA transformer from its config (embeddings, attention, FFN);
    the LM head counts once more unless the embeddings are tied (`tied`, else the config's tie_word_embeddings)."""
    if tied is None:
        tied = bool(config.get("tie_word_embeddings"))
    h = config["hidden_size"]
    layers = config["num_hidden_layers"]
    heads = config["num_attention_heads"]
    kv = config.get("num_key_value_heads") or heads
    hd = config.get("head_dim") or h // heads
    vocab = config.get("vocab_size") or 0
    embed = vocab * h * (1 if tied else 2)
    attention = h * heads * hd * 2 + 2 * h * kv * hd
    inter = config.get("intermediate_size") or 0
    experts = config.get("num_experts") or 0
    if not experts:
        total = embed + layers * (attention + 3 * h * inter)
        return float(total), float(total)
    moe_layers = config.get("moe_layers") or layers
    expert = 3 * h * (config.get("moe_intermediate_size") or inter)
    shared = (config.get("num_shared_experts") or 0) * expert
    top_k = config.get("num_experts_per_tok") or 1
    dense_layers = layers - moe_layers
    base = embed + layers * attention + dense_layers * 3 * h * inter + moe_layers * (shared + h * experts)
    return float(base + moe_layers * experts * expert), float(base + moe_layers * top_k * expert)


def model_from_config(path: Path) -> Model:
    """A model built from a Hugging Face config.json file, parameters estimated from its shape."""
    where = str(path)
    if not path.exists():
        raise InputError("no such file (a model name or a path to a config.json)", where=where)
    try:
        data = read_regular(path, MAX_CONFIG_BYTES)
    except InputError as exc:
        raise InputError(exc.message.replace("file larger", "config.json larger"), where=where) from None
    try:
        raw = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"not valid JSON: {exc}", where=where) from None
    except RecursionError:
        raise InputError("not a model config: JSON nested too deeply", where=where) from None
    except ValueError as exc:  # an integer past Python's 4,300-digit conversion limit
        raise InputError(f"not a model config: {exc}", where=where) from None
    if not isinstance(raw, dict):
        raise InputError("config.json should hold a JSON object", where=where)
    raw = checked(raw, where)
    config = normalise(raw, where)
    mla = config["kv_lora_rank"] is not None
    if mla:
        raise InputError(
            "MLA configs (kv_lora_rank) need a published parameter count; use the catalogue entry",
            where=where,
            hint="e.g. --model deepseek-v3",
        )
    total, active = estimate_params(config)
    merged = {**raw, **raw["text_config"]} if isinstance(raw.get("text_config"), Mapping) else raw
    local = local_attention(merged, config["num_hidden_layers"])
    quant = raw.get("quantization_config") or {}
    method = str(quant.get("quant_method", "")).lower() if isinstance(quant, Mapping) else ""
    native = method if method in ("fp8", "mxfp4") else "bf16"
    name = raw.get("_name_or_path") or path.parent.name or path.stem
    arch = ", ".join(raw.get("architectures") or []) or "unknown architecture"
    cite = Citation(source="advisor-derivation", locator=f"config.json read from {path.name}")
    return Model(
        id=f"config:{path.name}",
        name=f"{name} ({arch}, from config.json)",
        aliases=(),
        kind="moe" if config["num_experts"] else "dense",
        attention="gqa" if config["num_key_value_heads"] < config["num_attention_heads"] else "mha",
        local_attention=local.kind,
        local_window=local.window,
        local_layers=local.layers,
        local_pattern=local.pattern,
        native_precision=native,
        config=config,
        params_b=total / 1e9,
        active_params_b=active / 1e9,
        checkpoints=(),
        cite={"config": cite, "params_b": cite},
        notes="parameters estimated from the config's shapes (embeddings, attention, feed-forward)",
        where=where,
    )
