"""Launch commands for vLLM, SGLang and TensorRT-LLM that match a layout, valid by construction.

Every flag comes from the engines' documented flag table (knowledge/engine_flags.yaml): `Command.add`
refuses a flag the table lacks or a value not of the documented form, so a line the advisor prints
can only hold documented flags. Words are shell-quoted (a config.json model launches from its folder,
quoted); a value the user must supply is a shell variable (`"$HEAD_IP"`), never a placeholder that
breaks the shell. The model served is the published checkpoint of the requested precision where the
catalogue names its repository; online FP8 quantization of the original weights is offered only where
those weights, loaded first at their own precision, fit the GPUs (vLLM's FP8 documentation). Multi-node
expert parallelism, and any whose scenario names DeepEP (`ep_backend`), names its all-to-all backend; with
two-batch overlap each engine gets its documented overlap switch. A training job gets no serving command,
and says why.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from advisor.core.layouts import Layout
from advisor.errors import KnowledgeError
from advisor.inputs.scenario import Scenario
from advisor.kb.knowledge import EngineFlag, Knowledge, ServingEngine
from advisor.structs import Struct, field

ONLINE_QUANT = "fp8"  # the one precision both engines quantize to at load time (--quantization fp8)
SHELL_VARIABLE = re.compile(r"\$[A-Z][A-Z0-9_]*(:[0-9]+)?")
HEAD_PORT = {"vllm": 13345, "sglang": 50000}  # the ports the engines' multi-node examples use
_COUNT = re.compile(r"0|[1-9][0-9]*")


def value_fits(spec: EngineFlag, value: str | None) -> bool:
    """Whether `value` has the form the engine documents for the flag (None: no value given)."""
    if spec.value == "switch":
        return value is None
    if value is None:
        return False
    if spec.value == "count":
        return bool(_COUNT.fullmatch(value))
    if spec.value == "positive":
        return bool(_COUNT.fullmatch(value)) and int(value) >= 1
    if spec.value == "fraction":
        try:
            number = float(value)
        except ValueError:
            return False
        return 0 < number <= 1
    if spec.value == "choice":
        return value in spec.choices
    if spec.value == "address":
        host, _, port = value.rpartition(":")
        return bool(host) and port.isdigit() or bool(SHELL_VARIABLE.fullmatch(value))
    return bool(value) and not value.startswith("-")  # text


@lru_cache(maxsize=4096)  # a multi-node launch repeats the same words on every node's line
def shell_word(word: str) -> str:
    """`word` quoted for a POSIX shell; a shell variable stays expandable ("$HEAD_IP")."""
    if SHELL_VARIABLE.fullmatch(word):
        return f'"{word}"'
    return shlex.quote(word)


class Command(Struct, frozen=False):
    """One engine command line, built flag by flag from the engine's documented table."""

    engine: ServingEngine
    model: str
    words: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.words = list(self.engine.program)
        if self.engine.model_flag:
            self.add(self.engine.model_flag, self.model)
        else:
            self.words.append(self.model)

    def add(self, flag: str, value: object = None) -> Command:
        """Append `flag` (and its value); KnowledgeError if the engine's table does not document it so."""
        spec = self.engine.flag(flag)
        text = None if value is None else (f"{value:g}" if isinstance(value, float) else str(value))
        if spec is None:
            raise KnowledgeError(f"{self.engine.name} has no documented flag {flag}", where=self.engine.where)
        if not value_fits(spec, text):
            raise KnowledgeError(
                f"{self.engine.name} {flag} takes a {spec.value} value, not {text!r}", where=self.engine.where
            )
        self.words.append(flag)
        if text is not None:
            self.words.append(text)
        return self

    def copy(self) -> Command:
        """A copy to extend without changing this one (its words checked already: not built again)."""
        twin = object.__new__(Command)
        twin.__dict__.update(self.__dict__)
        twin.words = list(self.words)
        return twin

    def line(self) -> str:
        """The command as one shell line."""
        return " ".join(shell_word(w) for w in self.words)


class ModelSource(Struct, frozen=False):
    """What the engines load: a repository, a folder or a shell variable; the quantization flag; why."""

    ref: str
    quantize: bool = False
    notes: list[str] = field(default_factory=list)


def _gib(value: float) -> str:
    return f"{value:,.1f} GiB"


def model_source(s: Scenario, env: Mapping[str, Any], kb: Knowledge) -> ModelSource:
    """The checkpoint to serve for the scenario's precision, with the reason where it is not the obvious one."""
    m = s.model
    precision = s.data["precision"]
    if m.id.startswith("config:"):
        # model_from_config records the config.json path it read in `where`; the engine wants its folder
        base = str(Path(m.where).parent)
        return ModelSource(base) if precision == m.native_precision else _other_precision(s, env, kb, base)
    ckpt = m.checkpoint(precision)
    if ckpt and ckpt.repo:
        return ModelSource(ckpt.repo)
    repo = m.hf_repo or m.id
    if precision == m.native_precision or {precision, m.native_precision} <= {"bf16", "fp16"}:
        return ModelSource(repo)
    return _other_precision(s, env, kb, repo)


def _other_precision(s: Scenario, env: Mapping[str, Any], kb: Knowledge, base: str) -> ModelSource:
    """A precision other than the weights' own: online FP8 where the original weights fit, else a variable."""
    precision = s.data["precision"]
    native = s.model.native_precision
    variable = re.sub(r"\W", "_", precision).upper() + "_CHECKPOINT"
    prec_name = kb.precisions[precision].name if precision in kb.precisions else precision
    ckpt = s.model.checkpoint(precision)
    missing = (
        f"the catalogue's {prec_name} figure for {base} ({ckpt.stated_as}) names no repository"
        if ckpt
        else f"the catalogue names no published {prec_name} checkpoint of {base}"
    )
    ask = f"# set {variable} to a {prec_name} checkpoint (a Hugging Face repository or a local folder)"
    native_bytes = kb.precisions[native].weight_bytes if native in kb.precisions else 2.0
    per_gpu, total, params = env.get("weights_gib_per_gpu"), env.get("weights_gib"), env.get("params")
    gpu_gib = env.get("gpu_mem_gib")
    if precision == ONLINE_QUANT and native in ("bf16", "fp16") and per_gpu and total and params and gpu_gib:
        # every weight at the native precision (embeddings included), split as the layout splits the weights
        native_per_gpu = params * native_bytes / 2**30 * per_gpu / total
        load = (
            f"the engine loads the {native.upper()} weights at their own precision before quantizing "
            f"(vLLM's FP8 documentation): {_gib(native_per_gpu)} ({native_per_gpu * 2**30 / 1e9:,.1f} GB) "
            "per GPU"
        )
        if native_per_gpu <= gpu_gib:
            return ModelSource(
                base,
                True,
                [
                    f"# {missing}: online FP8 quantization (--quantization fp8); "
                    f"{load}, within the {_gib(gpu_gib)} of each GPU"
                ],
            )
        return ModelSource(
            f"${variable}",
            False,
            [
                f"# {missing}, and online quantization (--quantization fp8) is not offered: "
                f"{load}, more than the {_gib(gpu_gib)} of each GPU",
                ask,
            ],
        )
    return ModelSource(f"${variable}", False, [f"# {missing}", ask])


def _nodes(layout: Layout, env: Mapping[str, Any]) -> int:
    return max(1, -(-layout.gpus // int(env["gpus_per_node"])))


def _all2all(env: Mapping[str, Any]) -> str:
    """vLLM's DeepEP kernels: low latency for decode-bound serving, high throughput otherwise (its guide)."""
    return "deepep_low_latency" if env.get("goal") == "latency" else "deepep_high_throughput"


def _deepep(env: Mapping[str, Any]) -> bool:
    """Whether the scenario names DeepEP as the all-to-all backend (ep_backend deepep or deepep-tbo)."""
    return str(env.get("ep_backend", "nccl")).startswith("deepep")


def _vllm(engine: ServingEngine, src: ModelSource, s: Scenario, layout: Layout, env: Mapping[str, Any]) -> list[str]:
    wl = s.data["workload"]
    nodes = _nodes(layout, env)
    per_node = int(env["gpus_per_node"])

    def base(dp_local: int | None = None, start: int | None = None, headless: bool = False) -> Command:
        cmd = Command(engine, src.ref)
        if headless:
            cmd.add("--headless")
        if layout.tp > 1:
            cmd.add("--tensor-parallel-size", layout.tp)
        if layout.pp > 1:
            cmd.add("--pipeline-parallel-size", layout.pp)
        if layout.replicas > 1:
            cmd.add("--data-parallel-size", layout.replicas)
        if dp_local is not None:
            cmd.add("--data-parallel-size-local", dp_local)
            if start:
                cmd.add("--data-parallel-start-rank", start)
            cmd.add("--data-parallel-address", "$HEAD_IP").add("--data-parallel-rpc-port", HEAD_PORT["vllm"])
        if layout.ep > 1:
            cmd.add("--enable-expert-parallel")
            if nodes > 1 or _deepep(env):
                cmd.add("--all2all-backend", _all2all(env))
            if env.get("ep_backend") == "deepep-tbo" and layout.replicas > 1:  # DBO needs DP > 1 (its docs)
                cmd.add("--enable-dbo")
        if src.quantize:
            cmd.add("--quantization", ONLINE_QUANT)
        cmd.add("--max-model-len", wl["context_tokens"])
        cmd.add("--gpu-memory-utilization", float(wl["memory_utilization"]))
        if s.data["kv_cache_dtype"] == "fp8":
            cmd.add("--kv-cache-dtype", "fp8")
        return cmd

    lines = list(src.notes)
    if nodes > 1 and layout.ep > 1:
        lines.append("# expert parallelism across nodes: install DeepEP on every node first (vLLM's EP prerequisites)")
    copy = layout.gpus_per_replica
    if nodes == 1:
        lines.append(base().line())
    elif layout.replicas == 1 or per_node % copy:
        lines.append(
            f"# {nodes} nodes: start a Ray cluster first (ray start --head on node 0, "
            "ray start --address=$HEAD_IP:6379 on the others), then on node 0:"
        )
        lines.append(base().add("--distributed-executor-backend", "ray").line())
    else:
        local = per_node // copy
        lines.append(
            f"# {nodes} nodes, {local} data-parallel ranks on each: set HEAD_IP to node 0's address on every node"
        )
        for node in range(nodes):
            ranks = min(local, layout.replicas - node * local)
            lines.append(f"# node {node}")
            lines.append(base(ranks, node * local, headless=node > 0).line())
    return lines


def _sglang(engine: ServingEngine, src: ModelSource, s: Scenario, layout: Layout, env: Mapping[str, Any]) -> list[str]:
    wl = s.data["workload"]
    nodes = _nodes(layout, env)
    cmd = Command(engine, src.ref)
    if layout.pp > 1 and layout.ep == 1:
        cmd.add("--tp", layout.tp).add("--pp-size", layout.pp)
    elif (layout.ep if layout.ep > 1 else layout.tp) > 1:  # with EP, SGLang's --tp is the expert-parallel width
        cmd.add("--tp", layout.ep if layout.ep > 1 else layout.tp)
    if layout.ep > 1:
        cmd.add("--dp", layout.replicas).add("--enable-dp-attention").add("--ep-size", layout.ep)
        if nodes > 1 or _deepep(env):
            cmd.add("--moe-a2a-backend", "deepep")
        if env.get("ep_backend") == "deepep-tbo":
            cmd.add("--enable-two-batch-overlap")
    elif layout.replicas > 1:
        cmd.add("--dp", layout.replicas)
    if src.quantize:
        cmd.add("--quantization", ONLINE_QUANT)
    cmd.add("--context-length", wl["context_tokens"]).add("--mem-fraction-static", float(wl["memory_utilization"]))
    if s.data["kv_cache_dtype"] == "fp8":
        cmd.add("--kv-cache-dtype", "fp8_e4m3")
    if layout.tp > 1 and env.get("tp_link") == "pcie":
        cmd.add("--enable-p2p-check")
    lines = list(src.notes)
    if nodes == 1:
        return lines + [cmd.line()]
    if layout.ep > 1:
        lines.append("# expert parallelism across nodes: DeepEP must be installed on every node")
    lines.append(f"# {nodes} nodes: set HEAD_IP to node 0's address on every node")
    for node in range(nodes):
        on_node = cmd.copy().add("--nnodes", nodes).add("--node-rank", node)
        on_node.add("--dist-init-addr", f"$HEAD_IP:{HEAD_PORT['sglang']}")
        lines += [f"# node {node}", on_node.line()]
    return lines


def config_file(engine: ServingEngine, name: str, keys: Mapping[str, object]) -> list[str]:
    """A here-document writing the engine's YAML config file, as its deployment recipe does; every key
    from the engine's documented config keys, in the documented form (KnowledgeError otherwise)."""
    tree: dict[str, Any] = {}
    for path, value in keys.items():
        spec = next((k for k in engine.config_keys if k.flag == path), None)
        text = None if value is True else str(value)
        if spec is None or not value_fits(spec, text):
            raise KnowledgeError(f"{engine.name} has no documented config key {path}={value!r}", where=engine.where)
        *parents, leaf = path.split(".")
        node = tree
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = "true" if value is True else text
    return [f"cat << 'EOF' > {name}", *_yaml_lines(tree, 0), "EOF"]


def _yaml_lines(tree: Mapping[str, Any], depth: int) -> list[str]:
    lines: list[str] = []
    for key, value in tree.items():
        if isinstance(value, Mapping):
            lines += [f"{'  ' * depth}{key}:", *_yaml_lines(value, depth + 1)]
        else:
            lines.append(f"{'  ' * depth}{key}: {value}")
    return lines


def _kv_fraction(env: Mapping[str, Any]) -> float | None:
    """TensorRT-LLM's KV share: the plan's cache over what is free once the weights are loaded."""
    values = [env.get(k) for k in ("cache_gib_per_gpu", "gpu_mem_gib", "weights_gib_per_gpu")]
    numbers = [float(v) for v in values if isinstance(v, int | float)]
    if len(numbers) < len(values):
        return None
    cache, total, weights = numbers
    if total <= weights or cache <= 0:
        return None
    return max(0.01, min(1.0, int(cache / (total - weights) * 100) / 100))


def _trtllm(engine: ServingEngine, src: ModelSource, s: Scenario, layout: Layout, env: Mapping[str, Any]) -> list[str]:
    wl = s.data["workload"]
    nodes = _nodes(layout, env)
    lines = list(src.notes)
    model = src.ref
    if src.quantize:  # trtllm-serve has no load-time quantization: a quantized checkpoint is served
        lines.append(
            f"# TensorRT-LLM does not quantize at load time: quantize {src.ref} to FP8 with NVIDIA ModelOpt "
            "first and set FP8_CHECKPOINT to its folder"
        )
        model = "$FP8_CHECKPOINT"
    attention_dp = layout.ep > 1 and layout.replicas > 1  # the EP group's ranks each hold attention
    width = layout.ep if attention_dp else layout.tp
    cmd = Command(engine, model)
    if width > 1:
        cmd.add("--tp_size", width)
    if layout.pp > 1:
        cmd.add("--pp_size", layout.pp)
    if layout.ep > 1:
        cmd.add("--ep_size", layout.ep)
    cmd.add("--max_seq_len", wl["context_tokens"])
    fraction = _kv_fraction(env)
    if fraction is not None:
        cmd.add("--kv_cache_free_gpu_memory_fraction", fraction)
    keys: dict[str, object] = {}
    if attention_dp:
        keys["enable_attention_dp"] = True
    if s.data["kv_cache_dtype"] == "fp8":
        keys["kv_cache_config.dtype"] = "fp8"
    if keys:
        lines += config_file(engine, "trtllm-config.yml", keys)
        cmd.add("--extra_llm_api_options", "trtllm-config.yml")
    copies = 1 if attention_dp else layout.replicas
    if copies > 1:
        own = "GPU" if layout.gpus_per_replica == 1 else f"{layout.gpus_per_replica} GPUs"
        lines.append(
            f"# {copies} independent copies: start this line once per copy, each on its own {own} "
            "(CUDA_VISIBLE_DEVICES naming them, --port a port of its own), behind a load balancer"
        )
    if nodes > 1:
        per_node = int(env["gpus_per_node"])
        lines.append(
            f"# {nodes} nodes: one MPI rank per GPU under Slurm (TensorRT-LLM's multi-node example): "
            f"srun -N {nodes} --ntasks {nodes * per_node} --ntasks-per-node {per_node} --mpi=pmix "
            "trtllm-llmapi-launch followed by this line"
        )
    return lines + [cmd.line()]


def launch_commands(s: Scenario, layout: Layout, env: Mapping[str, Any], kb: Knowledge) -> dict[str, str]:
    """One shell snippet per engine for `layout`; a training job gets one line saying why there is none."""
    if env.get("workload_kind") == "training":
        return {
            "training": "# no serving command: this is a training job; vLLM, SGLang and TensorRT-LLM serve a trained "
            "model, they do not train it (launch the training script with your framework's launcher)"
        }
    src = model_source(s, env, kb)
    every = {"vllm": _vllm, "sglang": _sglang, "trtllm": _trtllm}
    chosen = str(s.data.get("engine") or "vllm")
    builders = dict(sorted(every.items(), key=lambda item: item[0] != chosen))  # the chosen engine first
    head: list[str] = []
    if layout.ep > 1 and layout.ep_copies < layout.replicas:  # several expert-parallel instances
        instances = layout.replicas // layout.ep_copies
        layout = Layout(layout.ep_copies, layout.tp, layout.pp, layout.ep)
        where = (
            "one per node"
            if layout.gpus == int(env["gpus_per_node"])
            else f"each on its own {layout.gpus} GPUs (CUDA_VISIBLE_DEVICES naming them)"
        )
        head = [f"# {instances} independent instances of what follows, {where}, behind a load balancer"]
    return {
        engine_id: "\n".join(head + build(kb.engine_flags[engine_id], src, s, layout, env))
        for engine_id, build in builders.items()
    }
