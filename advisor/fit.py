"""The speed constants fitted on one public table, InferenceX's measured rows (knowledge/fits/inferencex.csv),
and the estimates' accuracy on that table.

Each row becomes the scenario it ran (model, checkpoint, GPU, layout, engine, lengths, requests in flight)
evaluated at its layout. The engine's fixed time per layer (`layer_overhead_ms` in knowledge/settings.yaml)
is the median, over the rows with few requests in flight, of what the measured time per output token
exceeds the estimate without it, per layer. `python -m advisor.fit` prints the fitted values beside the
settings and, per engine and concurrency class, how many estimates lie within ±25 % of the measurement.
"""

from __future__ import annotations

import csv
import math
import statistics
import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from advisor.core.engine import Engine
from advisor.core.layouts import Layout
from advisor.inputs.scenario import build
from advisor.kb.paths import knowledge_dir

TABLE = "fits/inferencex.csv"
MAPPING = "fits/inferencex.yaml"


@dataclass(frozen=True)
class Point:
    """One measured row beside the advisor's estimates of it."""

    row: Mapping[str, str]
    engine: str
    layers: int
    concurrency: int
    tpot_ms: float  # measured, median over requests
    throughput_per_gpu: float  # measured output tokens/s per GPU
    est_tpot_ms: float  # the advisor's time per output token at that load
    est_throughput_per_gpu: float
    overhead_ms: float  # the per-layer time the estimate holds (the settings' value for the engine)

    @property
    def excess_per_layer_ms(self) -> float:
        """What the measured time per token exceeds the estimate without the per-layer time, per layer."""
        return (self.tpot_ms - (self.est_tpot_ms - self.layers * self.overhead_ms)) / self.layers


def rows(root: Path | None = None) -> list[dict[str, str]]:
    """The table's rows (its `#` header lines skipped)."""
    path = (root or knowledge_dir()) / TABLE
    with path.open(encoding="utf-8") as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def mapping(root: Path | None = None) -> dict[str, Any]:
    """How the table's names become the catalogue's (knowledge/fits/inferencex.yaml)."""
    data = yaml.safe_load(((root or knowledge_dir()) / MAPPING).read_text(encoding="utf-8"))
    return data if isinstance(data, dict) else {}


def scenario(row: Mapping[str, str], names: Mapping[str, Any]) -> tuple[dict[str, Any], Layout] | None:
    """The advisor's scenario and layout for one row, or None where the catalogue lacks its model,
    checkpoint, GPU or engine."""
    model = names["models"].get(row["model"])
    precision = (names["precisions"].get(model) or {}).get(row["precision"]) if model else None
    gpu, engine = names["gpus"].get(row["gpu"]), names["engines"].get(row["framework"])
    if not (model and precision and gpu and engine):
        return None
    tp, ep = int(row["tp"]), int(row["ep"] or 1)
    share = float(names["length_share"])
    isl, osl = int(row["isl"]), int(row["osl"])
    workload = {
        "concurrent_conversations": int(float(row["concurrency"])),
        "prompt_tokens": round(isl * share),
        "output_tokens": round(osl * share),
        "context_tokens": isl + osl,
    }
    raw = {
        "model": model,
        "precision": precision,
        "engine": engine,
        "hardware": {"gpu": gpu, "gpus_per_node": tp, "nodes": 1},
        "workload": workload,
    }
    # data-parallel attention: each GPU a copy of the attention, the experts shared over EP
    layout = Layout(tp, 1, 1, ep) if row["dp_attention"] == "true" else Layout(1, tp, 1, ep if ep > 1 else 1)
    return raw, layout


def points(engine: Engine, table: Iterable[Mapping[str, str]], names: Mapping[str, Any]) -> Iterator[Point]:
    """Every row the advisor can evaluate, with its estimates."""
    overhead = engine.kb.settings.get("layer_overhead_ms") or {}
    for row in table:
        found = scenario(row, names)
        if found is None or not row["tpot_median_ms"]:
            continue
        raw, layout = found
        rec = engine.evaluate(build(raw, engine.kb, where="inferencex"), only=layout, explained=False)
        env = rec.env
        cycle, tps, layers = env.get("decode_cycle_ms"), env.get("throughput_tps"), env.get("n_layers")
        if not isinstance(cycle, int | float) or not isinstance(tps, int | float) or not isinstance(layers, int):
            continue
        yield Point(
            row,
            raw["engine"],
            layers,
            raw["workload"]["concurrent_conversations"],
            float(row["tpot_median_ms"]),
            float(row["throughput_tok_s_per_gpu"] or 0),
            float(cycle),
            float(tps) / int(row["tp"]),  # InferenceX divides by the GPUs of the node (tp)
            float(overhead.get(raw["engine"], 0.0)),
        )


def fitted(found: Iterable[Point], fit_concurrency: int) -> dict[str, float]:
    """Each engine's per-layer time: the median excess per layer over its rows at low concurrency."""
    excess: dict[str, list[float]] = {}
    for p in found:
        if p.concurrency <= fit_concurrency:
            excess.setdefault(p.engine, []).append(p.excess_per_layer_ms)
    return {name: round(statistics.median(values), 3) for name, values in sorted(excess.items())}


def within(ratios: list[float], band: float = 1.25) -> str:
    """'n of m within ±25 % (median |log ratio|)' for a list of estimate / measurement ratios."""
    if not ratios:
        return "none"
    near = sum(1 / band <= r <= band for r in ratios)
    spread = statistics.median(abs(math.log(r)) for r in ratios)
    return f"{near} of {len(ratios)} within ±{round((band - 1) * 100)} % (median |log ratio| {spread:.2f})"


def report(found: list[Point]) -> str:
    """Accuracy on the table per engine and concurrency class: time per output token at the load (the
    tokens per second each user sees) and output throughput per GPU."""
    lines = []
    classes: dict[tuple[str, str], list[Point]] = {}
    for p in found:
        load = "1-4" if p.concurrency <= 4 else ("5-64" if p.concurrency <= 64 else "65+")
        classes.setdefault((p.engine, load), []).append(p)
        classes.setdefault(("all", "all"), []).append(p)
    for (engine, load), group in sorted(classes.items()):
        tpot = [p.est_tpot_ms / p.tpot_ms for p in group]
        thr = [p.est_throughput_per_gpu / p.throughput_per_gpu for p in group if p.throughput_per_gpu]
        lines.append(f"| {engine} | {load} | {len(group)} | {within(tpot)} | {within(thr)} |")
    head = "| engine | requests in flight | rows | time per output token | throughput per GPU |\n|---|---|---:|---|---|"
    return head + "\n" + "\n".join(lines)


def unfitted(engine: Engine, names: Mapping[str, Any]) -> list[str]:
    """The table's engines that have no per-layer time yet: they are evaluated with none (0 ms) for their
    first fit, so that the excess over the estimate is the whole fixed time."""
    overhead = engine.kb.settings.setdefault("layer_overhead_ms", {})
    missing = sorted({e for e in names["engines"].values() if e not in overhead})
    for name in missing:
        overhead[name] = 0.0
    return missing


def main() -> int:
    engine = Engine.load()
    names = mapping()
    missing = unfitted(engine, names)
    found = list(points(engine, rows(), names))
    if missing:
        sys.stdout.write(f"no per-layer time yet, evaluated with 0 ms: {', '.join(missing)}\n")
    fit = fitted(found, int(names["fit_concurrency"]))
    sys.stdout.write(f"fitted layer_overhead_ms: {fit}\n")
    sys.stdout.write(f"settings layer_overhead_ms: {engine.kb.settings.get('layer_overhead_ms')}\n\n")
    sys.stdout.write(report(found) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
