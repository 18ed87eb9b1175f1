"""The engines' startup lines of the arguments they run with: vLLM's
`INFO 09-03 16:28:10 [utils.py:328] non-default args: {'model': ..., 'tensor_parallel_size': 2}`, SGLang's
`server_args=ServerArgs(model_path='...', tp_size=2, context_length=4096, ...)`, and vLLM's KV-cache line
`Maximum concurrency for 65,536 tokens per request: 8.99x` (the context the engine was started with).

Values are read as Python literals (never evaluated as code); the launch facts they hold are those a
launch line gives (advisor.inputs.evidence.launch): a log pasted without its command still names the
model, the layout, the context and the engine's limits.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from typing import Any

from advisor.inputs.evidence import Parsed, clean
from advisor.inputs.evidence.launch import LAUNCH, launch_facts
from advisor.inputs.evidence.reader import Contribution, Reader

LINE = re.compile(r"non-default args: (\{[^\n]{1,4000}\})[ \t]{0,8}$")
SERVER_ARGS = re.compile(r"server_args=ServerArgs\(")
# one keyword of ServerArgs' repr: a quoted string, or a bare number, name or constant
KEYWORD = re.compile(r"\b([a-z_]{1,60})=('[^'\n]{0,500}'|\"[^\"\n]{0,500}\"|[\w.+-]{1,60})")
CONCURRENCY = re.compile(r"Maximum concurrency for ([0-9][0-9,]{0,12}) tokens per request")
# vLLM's argument names, to the launch item's keys (launch.FLAGS' names)
KEYS = {
    "model": "model",
    "tensor_parallel_size": "tp",
    "pipeline_parallel_size": "pp",
    "data_parallel_size": "dp",
    "max_model_len": "max_model_len",
    "gpu_memory_utilization": "memory_utilization",
    "max_num_seqs": "max_num_seqs",
    "max_num_batched_tokens": "max_num_batched_tokens",
    "quantization": "quantization",
    "kv_cache_dtype": "kv_cache_dtype",
    "served_model_name": "served_model_name",
}


# SGLang's ServerArgs fields (server_args.py), to the launch item's keys
SGLANG_KEYS = {
    "model_path": "model",
    "tp_size": "tp",
    "pp_size": "pp",
    "dp_size": "dp",
    "ep_size": "ep",
    "context_length": "max_model_len",
    "mem_fraction_static": "memory_utilization",
    "max_running_requests": "max_num_seqs",
    "quantization": "quantization",
    "kv_cache_dtype": "kv_cache_dtype",
    "served_model_name": "served_model_name",
}


def looks_like_args(text: str) -> bool:
    """A vLLM log with its non-default arguments line or its KV-cache concurrency line, or SGLang's
    server arguments."""
    if "non-default args: {" in text or "server_args=ServerArgs(" in text:
        return True
    return "Maximum concurrency for" in text and bool(CONCURRENCY.search(text))


def parse_args(text: str, file: str) -> Parsed:
    """The first arguments line, as a launch item (its engine's); vLLM's context from the KV-cache
    line where no arguments line gives it."""
    out = Parsed("engine-args", file)
    item: dict[str, Any] | None = None
    for no, line in enumerate(clean(text).split("\n"), 1):
        if item is None:
            item = _vllm_args(line, no, out) or _sglang_args(line)
            if item is not None:
                out.at("launch:0", no, line)
                continue
        m = CONCURRENCY.search(line)
        if m and "context" not in out.evidence:
            out.data["context"] = int(m.group(1).replace(",", ""))
            out.at("context", no, line)
    if item is None and "context" in out.data:
        item = {"engine": "vllm", "env": {}}
    if item is None:
        out.notes.append("no arguments line found")
        return out
    if "context" in out.data:
        item.setdefault("max_model_len", out.data.pop("context"))
    out.data = {"launches": [item]}
    return out


def _vllm_args(line: str, no: int, out: Parsed) -> dict[str, Any] | None:
    """vLLM's non-default arguments on this line, as a launch item."""
    m = LINE.search(line)
    if m is None:
        return None
    try:
        args = ast.literal_eval(m.group(1))
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        out.notes.append(f"line {no}: the arguments are not a literal mapping")
        return None
    if not isinstance(args, dict):
        return None
    item: dict[str, Any] = {"engine": "vllm", "env": {}}
    item.update({KEYS[k]: v for k, v in args.items() if k in KEYS and v is not None})
    return item


def _sglang_args(line: str) -> dict[str, Any] | None:
    """SGLang's ServerArgs on this line, as a launch item: each keyword whose value is a literal."""
    start = SERVER_ARGS.search(line)
    if start is None:
        return None
    item: dict[str, Any] = {"engine": "sglang", "env": {}}
    for m in KEYWORD.finditer(line, start.end()):
        key = SGLANG_KEYS.get(m.group(1))
        if key is None or key in item:
            continue
        try:
            value = ast.literal_eval(m.group(2))
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            continue  # a name, not a literal: not read
        if value is not None:
            item[key] = value
    return item


def args_facts(parsed: Parsed) -> Iterator[Contribution]:
    """What the arguments say of the launch, as a launch line would."""
    yield from launch_facts(parsed)


ARGS = Reader("engine-args", looks_like_args, parse_args, args_facts, first_only=True, yields=LAUNCH.yields)
