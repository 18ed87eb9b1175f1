"""Launch commands for vLLM and SGLang that match a layout.

The flags are those of the engines' documentation: vLLM's --tensor-parallel-size,
--pipeline-parallel-size, --data-parallel-size and --enable-expert-parallel (EP = TP x DP); SGLang's
--tp / --dp / --ep-size, where --tp counts every GPU of a DP-attention deployment.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from advisor.core.layouts import Layout
from advisor.inputs.scenario import Scenario

ONLINE_QUANT = {"fp8": "fp8"}  # precisions vLLM and SGLang can quantize to at load time


def _model_ref(s: Scenario) -> tuple[str, list[str], str]:
    """The model argument, quantization flags, and a note when a pre-quantized checkpoint is needed."""
    m = s.model
    precision = s.data["precision"]
    ckpt = m.checkpoint(precision)
    if ckpt and ckpt.repo:
        return ckpt.repo, [], ""
    repo = m.hf_repo or m.name
    if precision == m.native_precision or precision in ("bf16", "fp16"):
        return repo, [], ""
    if precision in ONLINE_QUANT:
        return repo, ["--quantization", ONLINE_QUANT[precision]], ""
    return repo, [], f"# use a pre-quantized {precision} checkpoint of {repo} in place of the model below"


def launch_commands(s: Scenario, layout: Layout, env: Mapping[str, Any]) -> dict[str, str]:
    """One shell snippet per engine for `layout`, with comments where more than one command is needed."""
    model, quant, note = _model_ref(s)
    wl = s.data["workload"]
    util = wl["memory_utilization"]
    context = wl["context_tokens"]
    kv_fp8 = s.data["kv_cache_dtype"] == "fp8"
    nodes_used = max(1, -(-layout.gpus // env["gpus_per_node"]))
    header = [note] if note else []

    vllm = ["vllm", "serve", model]
    if layout.tp > 1:
        vllm += ["--tensor-parallel-size", str(layout.tp)]
    if layout.pp > 1:
        vllm += ["--pipeline-parallel-size", str(layout.pp)]
    if layout.replicas > 1:
        vllm += ["--data-parallel-size", str(layout.replicas)]
    if layout.ep > 1:
        vllm += ["--enable-expert-parallel"]
    vllm += quant + ["--max-model-len", str(context), "--gpu-memory-utilization", f"{util:g}"]
    if kv_fp8:
        vllm += ["--kv-cache-dtype", "fp8"]
    vllm_lines = list(header)
    if nodes_used > 1 and layout.replicas == 1:
        vllm_lines.append(f"# {nodes_used} nodes: start a Ray cluster first (ray start --head on node 0, ray start --address=<head>:6379 on the others)")
        vllm += ["--distributed-executor-backend", "ray"]
    elif nodes_used > 1:
        vllm_lines.append(f"# {nodes_used} nodes: see vLLM's data-parallel deployment (--data-parallel-size-local, --data-parallel-address) for one command per node")
    vllm_lines.append(" ".join(vllm))

    sglang = ["python", "-m", "sglang.launch_server", "--model-path", model]
    if layout.pp > 1 and layout.ep == 1:
        sglang += ["--tp", str(layout.tp), "--pp-size", str(layout.pp)]
    elif (layout.ep if layout.ep > 1 else layout.tp) > 1:  # with EP, SGLang's --tp is the expert-parallel width
        sglang += ["--tp", str(layout.ep if layout.ep > 1 else layout.tp)]
    if layout.ep > 1:
        sglang += ["--dp", str(layout.replicas), "--enable-dp-attention", "--ep-size", str(layout.ep)]
    elif layout.replicas > 1:
        sglang += ["--dp", str(layout.replicas)]
    sglang += quant + ["--context-length", str(context), "--mem-fraction-static", f"{util:g}"]
    if kv_fp8:
        sglang += ["--kv-cache-dtype", "fp8_e4m3"]
    if layout.tp > 1 and env.get("tp_link") == "pcie":
        sglang += ["--enable-p2p-check"]
    sglang_lines = list(header)
    if nodes_used > 1:
        sglang_lines.append(f"# {nodes_used} nodes: add --nnodes {nodes_used} --node-rank <i> --dist-init-addr <node0>:50000 on each node")
    sglang_lines.append(" ".join(sglang))
    return {"vllm": "\n".join(vllm_lines), "sglang": "\n".join(sglang_lines)}
