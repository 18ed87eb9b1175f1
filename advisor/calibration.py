"""The speed estimates set against published measurements (knowledge/measurements.yaml).

Each measurement becomes the scenario it describes (model, precision, cards, nodes and their link,
users, prompt and answer lengths) evaluated at the measured layout; the row holds the advisor's
estimate of the measured metric and the ratio estimate / measured. A relative measurement ("TP 2 is
37 % faster than PP 2") is compared as the ratio of the two layouts' estimates. `python -m
advisor.calibration` prints the table that docs/calibration.md carries.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from advisor.core.engine import Engine
from advisor.core.layouts import Layout
from advisor.inputs.scenario import build
from advisor.kb.knowledge import MeasuredLayout, Measurement

# The advisor's figure for each measured metric: how to read it from the estimates, and what it is divided by
# (the GPUs or the nodes of the deployment, or nothing). Decode and prefill throughput alone are what
# prefill-decode disaggregated runs measure: each phase on its own GPUs, the other phase's time not counted.
METRIC_FIGURE: dict[str, tuple[Callable[[Mapping[str, Any]], Any], str | None]] = {
    "one_user_tokens_per_s": (lambda env: env.get("one_user_tps"), None),
    "throughput_tokens_per_s": (lambda env: env.get("throughput_tps"), None),
    "throughput_tokens_per_s_per_gpu": (lambda env: env.get("throughput_tps"), "gpus"),
    "decode_tokens_per_s_per_gpu": (lambda env: _per_second(env, "decode_batch", "decode_cycle_ms"), "gpus"),
    "decode_tokens_per_s_per_node": (lambda env: _per_second(env, "decode_batch", "decode_cycle_ms"), "nodes"),
    "prefill_tokens_per_s_per_node": (lambda env: _per_second(env, "prompt_tokens", "prefill_busy_ms"), "nodes"),
    "ttft_ms": (lambda env: env.get("ttft_ms"), None),
    "tpot_ms": (lambda env: env.get("one_user_tpot_ms"), None),
}


def _per_second(env: Mapping[str, Any], tokens: str, ms: str) -> float | None:
    """Tokens per second of all copies: each copy moves `tokens` in `ms` milliseconds."""
    n, t, copies = env.get(tokens), env.get(ms), env.get("replicas")
    if not isinstance(n, int | float) or not isinstance(t, int | float) or not isinstance(copies, int) or not t:
        return None
    return copies * n * 1000 / t


# Quantized checkpoints served for throughput keep an FP8 cache in the published runs' engines.
FP8_CACHE_PRECISIONS = ("fp8", "nvfp4")


@dataclass(frozen=True)
class Row:
    """One measurement beside the advisor's estimate of it, and the band the estimate must keep."""

    measurement: Measurement
    measured: float
    estimate: float | None
    band: float

    @property
    def ratio(self) -> float | None:
        """Estimate over measurement (1.0: exact)."""
        return None if self.estimate is None or not self.measured else self.estimate / self.measured

    @property
    def inside(self) -> bool:
        """Whether the estimate lies within the band around the measurement."""
        return self.ratio is not None and 1 / self.band <= self.ratio <= self.band

    @property
    def held(self) -> bool:
        """Whether the estimate keeps its band, or the measurement is listed as not reproduced."""
        return self.inside or not self.measurement.reproduced


def layout_of(m: MeasuredLayout) -> Layout:
    """The advisor's layout for a measured one: data-parallel attention ranks count as copies."""
    return Layout(m.replicas * m.dp, m.tp, m.pp, m.ep if m.ep > 1 else 1)


def scenario_of(m: Measurement, engine: Engine) -> dict[str, Any]:
    """The scenario a measurement describes, in the advisor's input fields."""
    hardware: dict[str, Any] = {"gpu": m.gpu, "gpus_per_node": max(m.gpus // m.nodes, 1), "nodes": m.nodes}
    if m.node_link:
        hardware["node_link_gbps"] = engine.kb.links[m.node_link].gbs_per_direction * 8
    workload: dict[str, Any] = {}
    if m.concurrency:
        workload["concurrent_conversations"] = m.concurrency
    if m.input_tokens:
        workload["prompt_tokens"] = m.input_tokens
    if m.output_tokens:
        workload["output_tokens"] = m.output_tokens
    if m.input_tokens and m.output_tokens:
        workload["context_tokens"] = m.input_tokens + m.output_tokens
    raw: dict[str, Any] = {"model": m.model, "precision": m.precision, "hardware": hardware, "workload": workload}
    if m.ep_backend:
        raw["ep_backend"] = m.ep_backend
    if m.expert_load_balancer:
        raw["expert_load_balancer"] = m.expert_load_balancer
    if m.precision in FP8_CACHE_PRECISIONS and m.engine == "trtllm":
        raw["kv_cache_dtype"] = "fp8"
    if m.engine != "unknown":  # its fixed time per layer; an unknown engine takes the scenario's default
        raw["engine"] = m.engine
    return raw


def _figure(engine: Engine, raw: Mapping[str, Any], layout: Layout, m: Measurement) -> float | None:
    read, per = METRIC_FIGURE[m.metric]
    rec = engine.evaluate(
        build(dict(raw), engine.kb, where=f"measurement {raw['model']}"), only=layout, explained=False
    )
    value = read(rec.env)
    if not isinstance(value, int | float):
        return None
    return value / {"gpus": m.gpus, "nodes": m.nodes, None: 1}[per]


def compare(engine: Engine, measurements: Iterable[Measurement]) -> list[Row]:
    """Every measurement beside the advisor's estimate."""
    rows = []
    bands = engine.kb.settings.get("calibration_bands") or {}
    for m in measurements:
        band = float(m.band or bands.get(m.metric) or 2.0)
        raw = scenario_of(m, engine)
        estimate = _figure(engine, raw, layout_of(m.layout), m)
        if m.versus is not None and m.ratio is not None:
            other = _figure(engine, raw, layout_of(m.versus), m)
            rows.append(Row(m, m.ratio, estimate / other if estimate is not None and other else None, band))
        elif m.value is not None:
            rows.append(Row(m, m.value, estimate, band))
    return rows


def table(rows: Iterable[Row]) -> str:
    """The Markdown table of docs/calibration.md."""
    out = [
        "| measurement | setup | metric | measured | estimate | ratio | band | gap |",
        "|---|---|---|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        m = r.measurement
        what = f"{m.metric} (ratio to {m.versus.label})" if m.versus is not None else m.metric
        setup = f"{m.model} {m.precision}, {m.gpus} × {m.gpu}, {m.layout.label}, {m.concurrency or 'full'} in flight"
        est = "n/a" if r.estimate is None else f"{r.estimate:.3g}"
        ratio = "n/a" if r.ratio is None else f"{r.ratio:.2f}"
        mark = "" if r.inside else (" (not reproduced)" if not m.reproduced else " (outside)")
        cells = [f"{m.id} [{m.source}]", setup, what, f"{r.measured:g}", est, f"{ratio}{mark}", f"×{r.band:g}", m.gap]
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


def main() -> int:
    """Print the calibration table."""
    engine = Engine.load()
    sys.stdout.write(table(compare(engine, engine.kb.measurements.values())) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
