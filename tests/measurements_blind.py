"""The held-out measurements of issue #24 (tests/data/measurements-blind-*/measurements.yaml), each complete
row evaluated as the scenario it states at its layout; `python -m tests.measurements_blind [dir]` prints how
many speeds and throughputs lie within ±25 % and each row's ratio. The names in the rows are the publishers'
own; NAMES maps them to the catalogue (a row whose names it lacks is reported, not guessed)."""

from __future__ import annotations

import math
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from advisor.core.engine import Engine
from advisor.core.layouts import Layout
from advisor.inputs.scenario import build

DATA = Path(__file__).resolve().parent / "data"
GPUS = {
    "A100 SXM4 40GB (form factor not stated; Lambda instance)": "a100-sxm4-40gb",
    "A100 SXM4 80GB": "a100-sxm4-80gb",
    "A40": "a40",
    "B200": "b200",
    "DGX Spark (GB10)": "gb10-dgx-spark",
    "H100": "h100-sxm",
    "H100 SXM": "h100-sxm",
    "H200": "h200-sxm",
    "H200 SXM": "h200-sxm",
    "H100 PCIe": "h100-pcie",
    "RTX 3090": "rtx-3090",
    "RTX 4090": "rtx-4090",
    "RTX PRO 6000 Blackwell Workstation": "rtx-pro-6000-ws",
}
MODELS = {
    "DeepSeek R1": "deepseek-r1",
    "DeepSeek R1 (R1-0528)": "deepseek-r1",
    "Llama 3.1 8B": "llama-3.1-8b",
    "Qwen3 235B-A22B (Instruct-2507)": "qwen3-235b-a22b",
    "Qwen3 30B-A3B (Qwen3-Coder-30B-A3B-Instruct)": "qwen3-30b-a3b",
    "Qwen3 32B": "qwen3-32b",
    "Qwen3 8B": "qwen3-8b",
    "gpt-oss 120b": "gpt-oss-120b",
    "gpt-oss 20b": "gpt-oss-20b",
    "DeepSeek-R1": "deepseek-r1",
    "Llama 3.1 405B": "llama-3.1-405b",
    "Mixtral 8x22B": "mixtral-8x22b",
    "Mixtral 8x7B": "mixtral-8x7b",
    "Qwen3-235B-A22B": "qwen3-235b-a22b",
    "Qwen3-30B-A3B": "qwen3-30b-a3b",
    "Qwen3-8B": "qwen3-8b",
    "gpt-oss-120b": "gpt-oss-120b",
    "gpt-oss-20b": "gpt-oss-20b",
}
# the first named in the row's text; llama.cpp's 4-bit GGUF types (q4_0, q4_k_m: 4.5-4.9 bits a weight)
# as the catalogue's nearest, int4
PRECISIONS = {
    "nvfp4": "nvfp4",
    "mxfp4": "mxfp4",
    "int8": "int8",
    "fp8": "fp8",
    "q4": "int4",
    "fp16": "fp16",
    "bf16": "bf16",
}
EIGHT_BIT_CACHE = ("fp8", "q8_0")  # llama.cpp's q8_0 cache: one byte a value, as FP8


@dataclass(frozen=True)
class Result:
    """One complete row beside the advisor's estimate of its metric."""

    row: dict[str, Any]
    estimate: float | None

    @property
    def ratio(self) -> float | None:
        return None if not self.estimate else self.estimate / float(self.row["value"])

    @property
    def inside(self) -> bool:
        band = 1.35 if self.row["metric"] == "ttft_ms" else 1.25
        return self.ratio is not None and 1 / band <= self.ratio <= band


def engine_of(row: dict[str, Any]) -> str:
    """The advisor's engine for the row's: SGLang and TensorRT-LLM by name, anything else as vLLM (the
    default; llama.cpp is not modelled)."""
    name = str(row["engine"]).lower()
    if "sglang" in name:
        return "sglang"
    return "trtllm" if "tensorrt" in name or "trt-llm" in name or "trtllm" in name else "vllm"


def in_flight(row: dict[str, Any]) -> int:
    """Requests in flight: the stated concurrency; without one, a run that releases all its prompts at once
    (request rate inf) has them all in flight; else one."""
    if row.get("concurrency"):
        return int(row["concurrency"])
    if str(row.get("request_rate")) == "inf" and row.get("num_prompts"):
        return int(row["num_prompts"])
    return 1


def scenario(row: dict[str, Any]) -> tuple[dict[str, Any], Layout]:
    """The scenario a row states, and its layout (data-parallel attention ranks as copies sharing EP)."""
    lay = {k: int(v) for k, v in (row.get("layout") or {}).items() if v}
    tp, pp, ep, dp, reps = (lay.get(k, 1) for k in ("tp", "pp", "ep", "dp", "replicas"))
    layout = Layout(reps * dp, 1, pp, ep if ep > 1 else tp) if dp > 1 else Layout(reps, tp, pp, ep)
    workload: dict[str, Any] = {"concurrent_conversations": in_flight(row)}
    if row.get("input_tokens"):
        workload["prompt_tokens"] = int(row["input_tokens"])
    if row.get("output_tokens"):
        workload["output_tokens"] = int(row["output_tokens"])
    if row.get("input_tokens") and row.get("output_tokens"):
        workload["context_tokens"] = int(row["input_tokens"]) + int(row["output_tokens"])
    nodes = int(row.get("nodes") or 1)
    raw: dict[str, Any] = {
        "model": MODELS[row["model"]],
        "precision": next(v for k, v in PRECISIONS.items() if k in str(row["precision"])),
        "engine": engine_of(row),
        "hardware": {"gpu": GPUS[row["gpu"]], "gpus_per_node": int(row["gpus"]) // nodes, "nodes": nodes},
        "workload": workload,
    }
    if str(row.get("kv_cache_dtype")) in EIGHT_BIT_CACHE:
        raw["kv_cache_dtype"] = "fp8"
    return raw, layout


def estimate(engine: Engine, row: dict[str, Any]) -> float | None:
    """The advisor's figure for the row's metric."""
    raw, layout = scenario(row)
    env = engine.evaluate(build(raw, engine.kb, where=row["id"]), only=layout, explained=False).env
    alone = in_flight(row) <= 1
    at_load = env.get("user_tps_at_load")
    figures = {
        "one_user_tokens_per_s": env.get("one_user_tps") if alone else at_load,
        "tokens_per_s_per_user_at_load": at_load,
        "tokens_per_s_per_user": env.get("one_user_tps") if alone else at_load,
        "throughput_tokens_per_s": env.get("throughput_tps"),
        "throughput_tokens_per_s_per_gpu": (env.get("throughput_tps") or 0) / int(row["gpus"]) or None,
        "ttft_ms": env.get("ttft_ms"),
        "tpot_ms": env.get("one_user_tpot_ms") if alone else (1000 / at_load if at_load else None),
    }
    value = figures.get(row["metric"])
    return float(value) if isinstance(value, int | float) else None


def results(engine: Engine, folder: Path) -> list[Result]:
    """Every complete row of the set with the advisor's estimate."""
    rows = yaml.safe_load((folder / "measurements.yaml").read_text(encoding="utf-8"))
    return [Result(r, estimate(engine, r)) for r in rows if r.get("complete")]


def speeds(found: list[Result]) -> list[Result]:
    """The rows of speeds and throughputs (time to first token apart: the issue bands it differently)."""
    return [r for r in found if r.row["metric"] != "ttft_ms" and r.ratio is not None]


def main(argv: list[str]) -> int:
    folder = Path(argv[0]) if argv else DATA / "measurements-blind-1"
    found = results(Engine.load(), folder)
    for r in sorted(found, key=lambda r: r.ratio or 0):
        ratio = "none" if r.ratio is None else f"{r.ratio:.2f}"
        print(f"{ratio:>5} {r.row['metric']:<32} {r.row['engine'][:24]:<24} {r.row['id']}")
    sp = speeds(found)
    spread = statistics.median(abs(math.log(r.ratio)) for r in sp if r.ratio)
    near = sum(r.inside for r in sp)
    print(f"speeds and throughputs within ±25 %: {near} of {len(sp)}; median |log ratio| {spread:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
