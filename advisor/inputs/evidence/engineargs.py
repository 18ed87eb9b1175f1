"""vLLM's startup line of the arguments it was given beyond its defaults:
`INFO 09-03 16:28:10 [utils.py:328] non-default args: {'model': ..., 'tensor_parallel_size': 2}`.

The mapping is read as a Python literal (never evaluated as code); the launch facts it holds are those a
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


def looks_like_args(text: str) -> bool:
    """A vLLM log with its non-default arguments line."""
    return "non-default args: {" in text


def parse_args(text: str, file: str) -> Parsed:
    """The first non-default arguments line, as a launch item (engine vLLM)."""
    out = Parsed("vllm-args", file)
    for no, line in enumerate(clean(text).split("\n"), 1):
        m = LINE.search(line)
        if m is None:
            continue
        try:
            args = ast.literal_eval(m.group(1))
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            out.notes.append(f"line {no}: the arguments are not a literal mapping")
            continue
        if isinstance(args, dict):
            item: dict[str, Any] = {"engine": "vllm", "env": {}}
            item.update({KEYS[k]: v for k, v in args.items() if k in KEYS and v is not None})
            out.data = {"launches": [item]}
            out.at("launch:0", no, line)
            return out
    out.notes.append("no non-default args line found")
    return out


def args_facts(parsed: Parsed) -> Iterator[Contribution]:
    """What the arguments say of the launch, as a launch line would."""
    yield from launch_facts(parsed)


ARGS = Reader("vllm-args", looks_like_args, parse_args, args_facts, first_only=True, yields=LAUNCH.yields)
