"""Turning a checked scenario and the catalogue into facts: named values, each with its origin.

Every input fact has a state (Origin.state): given by the user, read from evidence, a default, or
unknown. Unknown inputs (iommu: unknown, no user count) become None, so rules that need them evaluate
to unknown and the advisor can say which question would settle them. Optional hardware that was not
stated (an NVLink bridge) is unknown too, but has a working value: the engine answers as if it were
absent, and says so (advisor.core.assumptions).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from advisor.inputs.fields import field_table
from advisor.inputs.scenario import Scenario
from advisor.kb.knowledge import Citation, Gpu, Knowledge, Link
from advisor.structs import Struct, field

if TYPE_CHECKING:  # an annotation only: the recommend path does not load the evidence readers
    from advisor.inputs.evidence import Evidence

DOMAIN_SIZES = {"none": 1, "bridge-2": 2, "bridge-4": 4}
# An input fact's state by its origin's kind: given (by the user), evidence (read from a host), a
# default, or unknown.
STATES = {"input": "given", "evidence": "evidence", "default": "default", "unknown": "unknown"}


class Origin(Struct):
    """Where a fact's value came from: the user, evidence, a default, unknown, the catalogue (with its
    citation), a formula."""

    kind: str  # input | evidence | default | unknown | catalogue | estimate | derived | formula | layout
    detail: str = ""
    cite: Citation | None = None

    @property
    def state(self) -> str:
        """An input fact's state: given, evidence, default or unknown (other facts: their kind)."""
        return STATES.get(self.kind, self.kind)


_ORIGINS: dict[tuple[str, str, int], Origin] = {}


def origin_of(kind: str, detail: str = "", cite: Citation | None = None) -> Origin:
    """An Origin, shared with every other fact of the same one (they are frozen values): a scenario's
    facts are made afresh for each answer, and again for each assumption tried."""
    key = (kind, detail, id(cite))
    found = _ORIGINS.get(key)
    if found is None or found.cite is not cite:
        if len(_ORIGINS) >= 4096:
            _ORIGINS.clear()
        found = _ORIGINS[key] = Origin(kind, detail, cite)
    return found


def input_origin(s: Scenario, path: str, value: Any) -> Origin:
    """The origin of an input fact's value: given by the user, unknown (no value, or optional hardware
    that was not stated, whose working value is its absence), or a default."""
    if path in s.given:
        return origin_of("input", "given")
    if value is None or value == "unknown":
        return origin_of("unknown", "not given")
    if optional_hardware(s, path):
        return Origin("unknown", f"optional on the {s.gpu.name} and not stated: {value} assumed")
    return origin_of("default", "not given: the default")


def optional_hardware(s: Scenario, path: str) -> bool:
    """Whether `path` is hardware the card may or may not have and the user did not state: an NVLink
    bridge (bought and fitted separately) on a node of several cards."""
    return (
        path == "hardware.nvlink"
        and path not in s.given
        and s.gpu.nvlink != s.gpu.nvlink_fitted
        and int(s.get("hardware.gpus_per_node") or 1) > 1
    )


def link_speeds(
    kb: Knowledge, g: Gpu, nvlink: str, per_node: int, node_link_gbps: float | None = None
) -> dict[str, Any]:
    """PCIe, NVLink and node-link bandwidth per direction (GB/s; the node link is stated in Gbit/s),
    and the size of the GPU's NVLink domain."""
    return {
        "node_link_gbs": float(node_link_gbps) / 8 if node_link_gbps else None,
        "pcie_gbs": kb.pcie_link(g.pcie_gen).gbs_per_direction if g.pcie_gen else None,
        "nvlink_gbs": g.nvlink_gbs_per_direction if nvlink != "none" else None,
        "nvlink_domain_size": per_node if nvlink == "nvswitch" else min(DOMAIN_SIZES.get(nvlink, 1), per_node),
    }


def link_latency(kb: Knowledge, kinds: tuple[str, ...], gbs: float | None) -> tuple[Link | None, Origin]:
    """The link of one of `kinds` at `gbs` GB/s per direction whose small all-reduce time was measured, or,
    where that link has no measurement, the measured link of the same kind nearest in bandwidth (an
    estimate, and said so)."""
    measured = [link for link in kb.links.values() if link.kind in kinds and link.latency_us is not None]
    if gbs is None or not measured:
        return None, Origin("unknown", "no measured latency for this kind of link")
    exact = next((link for link in measured if link.gbs_per_direction == gbs), None)
    if exact is not None:
        return exact, Origin("catalogue", f"{exact.name}: measured", exact.cite.get("latency_us"))
    near = min(measured, key=lambda link: abs(link.gbs_per_direction - gbs))
    return near, Origin(
        "estimate",
        f"no measurement for this link; the nearest measured one of its kind, {near.name}",
        near.cite.get("latency_us"),
    )


def gpu_memory(g: Gpu) -> tuple[float, Origin]:
    """The card's memory in GiB and where it comes from: the total nvidia-smi reports in a cited capture
    (catalogue), else a stated estimate, else the nominal decimal GB as GiB (an estimate too)."""
    if g.memory_gib_reported is not None:
        return g.memory_gib_reported, Origin(
            "catalogue", f"{g.name}: the total nvidia-smi reports", g.cite.get("memory_gib_reported")
        )
    none_found = f"{g.name}: no nvidia-smi total found"
    if g.memory_gib_estimate is not None:
        return g.memory_gib_estimate, Origin(
            "estimate", f"{none_found}; {g.memory_estimate_basis}", g.cite.get("memory_gib_estimate")
        )
    return g.memory_gib, Origin(
        "estimate", f"{none_found}; the nominal {g.memory_gb:g} GB as GiB", g.cite.get("memory_gb")
    )


def _unknown(value: Any) -> Any:
    return None if value == "unknown" else value


def _per_engine(values: Any, engine: str) -> Any:
    """A setting given per engine ({vllm: 0.057, sglang: 0.066}): the engine's value, None without one."""
    return values.get(engine) if isinstance(values, dict) else None


def _rate_origin(g: Gpu, path: str) -> tuple[str, str]:
    """Where a card's dense rate comes from: the vendor's figure, or one derived from its figures by the
    architecture's documented ratio (labelled derived)."""
    if f"tensor_tflops_{path}" in g.derived:
        return "derived", f"{g.name}: dense {path.upper()}, derived from the vendor's figures"
    return "catalogue", f"{g.name}: dense {path.upper()}"


def scenario_facts(s: Scenario, kb: Knowledge) -> tuple[dict[str, Any], dict[str, Origin]]:
    """The scenario-wide facts before any formula runs, and where each came from."""
    env: dict[str, Any] = {}
    origin: dict[str, Origin] = {}
    hw = s.data["hardware"]
    m, g, c = s.model, s.gpu, s.model.config

    def put(name: str, value: Any, how: str, detail: str = "", cite: Citation | None = None) -> None:
        env[name] = value
        origin[name] = origin_of(how, detail, cite)

    nvlink, per_node = hw["nvlink"], hw["gpus_per_node"]
    speeds = link_speeds(kb, g, nvlink, per_node, hw.get("node_link_gbps"))
    engine_defaults = {f.fact: f.default_figure for f in field_table(kb.root).fields if f.default_figure}
    for name, spec in kb.facts.items():
        if spec.kind != "input" or not spec.scenario:
            continue
        path = spec.scenario
        value = speeds[name] if name in speeds else s.get(path)  # the node link's Gbit/s as GB/s
        how = input_origin(s, path, value)
        if how.kind == "unknown" and name in engine_defaults:  # the engine's own default for the card stands
            how = Origin("default", f"not given: the engine's default ({engine_defaults[name]})")
        put(name, _unknown(value), how.kind, how.detail)

    model_cite = m.cite.get("config")
    put("model_kind", m.kind, "catalogue", m.name, model_cite)
    put("attention", m.attention, "catalogue", m.name, model_cite)
    for fact, key in (
        ("n_layers", "num_hidden_layers"),
        ("hidden", "hidden_size"),
        ("inter", "intermediate_size"),
        ("n_heads", "num_attention_heads"),
        ("n_kv_heads", "num_key_value_heads"),
        ("head_dim", "head_dim"),
        ("n_experts", "num_experts"),
        ("experts_per_tok", "num_experts_per_tok"),
        ("moe_layers", "moe_layers"),
        ("moe_inter", "moe_intermediate_size"),
        ("kv_lora_rank", "kv_lora_rank"),
        ("qk_rope_dim", "qk_rope_head_dim"),
        ("max_context", "max_position_embeddings"),
        ("vocab", "vocab_size"),
    ):
        put(fact, c.get(key), "catalogue", f"{m.name} config.json {key}", model_cite)
    put(
        "tied_embeddings",
        1 if c.get("tie_word_embeddings") else 0,
        "catalogue",
        f"{m.name} config.json tie_word_embeddings",
        model_cite,
    )
    put(
        "ep_node_limit",
        m.node_limit,
        "catalogue",
        f"{m.name}: node-limited routing" if m.node_limit else f"{m.name}: no node limit in its routing",
        m.cite.get("node_limit"),
    )
    local_cite = m.cite.get("local_attention", model_cite)
    pattern = m.local_pattern or "every layer full"
    put("local_attention", m.local_attention, "catalogue", f"{m.name}: {pattern}", local_cite)
    put("local_window", m.local_window or 0, "catalogue", f"{m.name} local attention window", local_cite)
    put("local_layers", m.local_layers, "catalogue", f"{m.name}: {pattern}", local_cite)

    if m.params_b is not None:
        put("params", m.params_b * 1e9, "catalogue", m.name, m.cite.get("params_b"))
        active = m.active_params_b if m.active_params_b is not None else m.params_b
        put("active_params", active * 1e9, "catalogue", m.name, m.cite.get("active_params_b", m.cite.get("params_b")))
    else:
        from advisor.inputs.modelconfig import estimate_params

        total, active_est = estimate_params(c)
        note = f"{m.name}: estimated from config.json shapes"
        put("params", total, "derived", note)
        put("active_params", active_est, "derived", note)
    ckpt = m.checkpoint(s.data["precision"])
    put(
        "checkpoint_bytes",
        ckpt.size_bytes if ckpt else 0,
        "catalogue" if ckpt else "default",
        f"published {ckpt.precision} checkpoint, {ckpt.stated_as}" if ckpt else "no published checkpoint size",
        ckpt.cite if ckpt else None,
    )
    prec = kb.precisions[s.data["precision"]]
    put("w_bytes", prec.weight_bytes, "catalogue", prec.name, prec.cite)
    kv = kb.precisions[s.data["kv_cache_dtype"]]
    put("kv_bytes", kv.weight_bytes, "catalogue", kv.name, kv.cite)
    for name in (
        "act_bytes",
        "grad_bytes",
        "train_weight_bytes",
        "train_batch_sequences",
        "train_sequence_tokens",
        "mem_bw_efficiency",
        "compute_efficiency",
        "vllm_sampler_fp32_copies",
        "vllm_non_torch_gib",
    ):
        put(name, kb.settings.get(name), "default", "knowledge/settings.yaml")
    engine = str(s.data.get("engine", "vllm"))
    put(
        "layer_overhead_ms",
        _per_engine(kb.settings.get("layer_overhead_ms"), engine),
        "default",
        f"knowledge/settings.yaml: fitted for {engine} on InferenceX's measured rows (python -m advisor.fit)",
        Citation("inferencex", "knowledge/fits/inferencex.csv, rows with at most 4 requests in flight"),
    )
    put(
        "expert_load_cv",
        kb.settings.get("expert_load_cv"),
        "default",
        "knowledge/settings.yaml: set from the published busiest-rank load without expert load balancing",
        Citation("trtllm-large-scale-ep-blog", "Table 1, No EPLB (8 per-rank slots and EP 32), by rank"),
    )
    put(
        "eplb_imbalance",
        kb.settings.get("eplb_imbalance"),
        "default",
        "knowledge/settings.yaml: the published busiest-rank load with expert load balancing",
        Citation("trtllm-large-scale-ep-blog", "Table 1, EPLB (9 per-rank slots and EP 32), by rank"),
    )
    for name in ("tbo_gain_prefill", "tbo_gain_decode"):
        put(
            name,
            kb.settings.get(name),
            "default",
            "knowledge/settings.yaml: the SGLang team's measured gain from two-batch overlap",
            Citation(
                "sglang-large-scale-ep-blog",
                "Ablation Study: Two-batch Overlap, Impact of Batch Size and Attention Time",
            ),
        )

    mem_gib, mem_origin = gpu_memory(g)
    put("gpu_mem_gib", mem_gib, mem_origin.kind, mem_origin.detail, mem_origin.cite)
    put("gpu_mem_reported", g.memory_gib_reported is not None, "catalogue", g.name, g.cite.get("memory_gib_reported"))
    put("mem_bw_gbs", g.memory_bandwidth_gbs, "catalogue", g.name, g.cite.get("memory_bandwidth_gbs"))
    path = prec.needs if prec.needs in ("fp8", "fp4") and getattr(g, prec.needs, False) else "bf16"
    field_name = f"tensor_tflops_{path}"
    put("gpu_tflops", getattr(g, field_name, None), *_rate_origin(g, path), g.cite.get(field_name))
    put("gpu_tflops_16bit", g.tensor_tflops_bf16, *_rate_origin(g, "bf16"), g.cite.get("tensor_tflops_bf16"))
    put("gpu_arch", g.architecture, "catalogue", g.name)
    put("gpu_form_factor", g.form_factor, "catalogue", g.name)
    put("gpu_fp8", g.fp8, "catalogue", g.name, g.cite.get("fp8"))
    put("gpu_fp4", g.fp4, "catalogue", g.name, g.cite.get("fp4"))
    put("gpu_pcie_p2p", g.pcie_p2p, "catalogue", g.name, g.cite.get("pcie_p2p"))
    put("gpu_usual_nvlink", g.nvlink, "catalogue", g.name, g.cite.get("nvlink"))
    if g.pcie_gen:
        pcie = kb.pcie_link(g.pcie_gen)
        put("pcie_gbs", speeds["pcie_gbs"], "catalogue", pcie.name, pcie.cite.get("gbs_per_direction"))
    else:
        put("pcie_gbs", None, "catalogue", f"{g.name}: no PCIe link between GPUs")
    put("nvlink_gbs", speeds["nvlink_gbs"], "catalogue", g.name, g.cite.get("nvlink_gbs_per_direction"))

    for kind, kinds in (("pcie", ("pcie",)), ("nvlink", ("nvlink", "nvlink-bridge")), ("network", ("network",))):
        gbs = env.get({"pcie": "pcie_gbs", "nvlink": "nvlink_gbs", "network": "node_link_gbs"}[kind])
        link, how = link_latency(kb, kinds, gbs)
        put(f"{kind}_latency_us", link.latency_us if link else None, how.kind, how.detail, how.cite)
        put(f"{kind}_latency_ranks", (link.latency_ranks or 2) if link else None, how.kind, how.detail, how.cite)
    socket_link, how = link_latency(kb, ("socket",), env.get("pcie_gbs"))
    put("socket_latency_us", socket_link.latency_us if socket_link else None, how.kind, how.detail, how.cite)
    put("socket_latency_ranks", (socket_link.latency_ranks or 2) if socket_link else None, how.kind, how.detail)
    put(
        "socket_gbs",
        env.get("pcie_gbs"),
        "estimate",
        "no cross-socket rate measured: the card's own PCIe rate per direction (knowledge/links.yaml)",
        socket_link.cite.get("gbs_per_direction") if socket_link else None,
    )
    if env.get("gpus_per_socket") is None:
        # unknown unless stated or read from topo -m: one socket is assumed, so nothing crosses the CPU link
        put("gpus_per_socket", None, "unknown", "not stated: one CPU socket per node assumed")
    put("total_gpus", per_node * hw["nodes"], "derived", "gpus_per_node × nodes")
    domain = speeds["nvlink_domain_size"]
    put("nvlink_domain_size", domain, "derived", f"nvlink: {nvlink}")
    put("nvlink_domains_per_node", -(-per_node // domain), "derived", f"{per_node} GPUs / {domain} per domain")
    return env, origin


class Facts(Struct, frozen=False):
    """Facts read from the evidence, each with where it was read."""

    values: dict[str, Any] = field(default_factory=dict)
    where: dict[str, Evidence] = field(default_factory=dict)

    def put(self, name: str, value: Any, evidence: Evidence | None) -> None:
        """Set a fact unless an earlier, more direct source already did."""
        if value is None or name in self.values:
            return
        self.values[name] = value
        if evidence is not None:
            self.where[name] = evidence
