"""The drawings: a bar per GPU of its memory (weights, KV cache, reserve, free) and the GPUs grouped
as the recommendation uses them (nodes, NVLink domains, copies, pipeline stages, TP groups).

Placement follows advisor.core.layouts: a TP group takes consecutive GPUs, pipeline stages follow, copies
after that. `draw` is a plain function of the recommendation, so tests can read the drawing as text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.widgets import Static

from advisor.chat.strings import t
from advisor.i18n import localize_digits

if TYPE_CHECKING:
    from advisor.core.records import Machine, Recommendation

BAR = 28
STYLES = {"weights": "bold #5fafff", "kv_cache": "#87d787", "reserve": "#808080", "free": "#3a3a3a", "idle": "#3a3a3a"}
GLYPHS = {"weights": "█", "kv_cache": "▓", "reserve": "▒", "free": "░", "idle": "·"}
MAX_ROWS = 16


def _gib(value: float, lang: str) -> str:
    return localize_digits(f"{value:.1f}", lang)  # German writes 95,6


def memory_split(machine: Machine) -> dict[str, float]:
    """GiB of one used GPU: weights, KV cache, the reserve the engine leaves, and what is free."""
    total = machine.gpu_mem_gib
    usable = machine.usable_gib_per_gpu
    weights = max(machine.weights_gib_per_gpu, 0.0)
    cache = max(machine.cache_gib_per_gpu, 0.0)
    weights = min(weights, total)
    cache = min(cache, max(usable - weights, 0.0))
    reserve = max(total - usable, 0.0)
    free = max(total - weights - cache - reserve, 0.0)
    return {"weights": weights, "kv_cache": cache, "reserve": reserve, "free": free}


def _bar(split: dict[str, float], total: float) -> Text:
    out = Text()
    if total <= 0:
        return out
    cells = {k: int(round(v / total * BAR)) for k, v in split.items()}
    over = sum(cells.values()) - BAR
    order = ["free", "reserve", "kv_cache", "weights"]
    i = 0
    while over > 0 and i < 16:
        key = order[i % len(order)]
        if cells[key] > 0:
            cells[key] -= 1
            over -= 1
        i += 1
    if over < 0:
        cells["free"] += -over
    for key in ("weights", "kv_cache", "reserve", "free"):
        out.append(GLYPHS[key] * cells[key], style=STYLES[key])
    return out


def placement(rec: Recommendation) -> list[dict[str, int]]:
    """For every GPU of the machine: node, NVLink domain, copy, stage and TP rank (-1 where idle)."""
    m = rec.machine
    per_node, total, domain = m.gpus_per_node, m.total_gpus, m.nvlink_domain_size
    layout = rec.layout
    out = []
    for g in range(total):
        item = {
            "gpu": g,
            "node": g // per_node,
            "domain": (g % per_node) // max(domain, 1),
            "copy": -1,
            "stage": -1,
            "rank": -1,
        }
        if layout is not None and g < layout.gpus:
            item["copy"] = g // layout.gpus_per_replica
            inner = g % layout.gpus_per_replica
            item["stage"] = inner // layout.tp
            item["rank"] = inner % layout.tp
        out.append(item)
    return out


def draw(rec: Recommendation | None, lang: str) -> Text:
    """The memory bars and the grouping, as styled text."""
    out = Text()
    if rec is None or not rec.env:
        out.append(t("no_rec", lang), style="italic")
        return out
    total_mem = rec.machine.gpu_mem_gib
    split = memory_split(rec.machine)
    places = placement(rec)
    layout = rec.layout
    out.append(t("memory_head", lang, total=_gib(total_mem, lang)) + "\n", style="bold")
    shown = places if len(places) <= MAX_ROWS else places[:MAX_ROWS]
    width = len(f"GPU{len(places) - 1}")
    for p in shown:
        out.append(f"GPU{p['gpu']}".ljust(width) + " ", style="bold")
        if p["copy"] < 0:
            out.append(GLYPHS["idle"] * BAR, style=STYLES["idle"])
            out.append(f" {t('idle', lang)}\n")
            continue
        out.append_text(_bar(split, total_mem))
        where = []
        if layout is not None and layout.replicas > 1:
            where.append(f"{t('copy', lang)} {p['copy'] + 1}")
        if layout is not None and layout.pp > 1:
            where.append(f"{t('stage', lang)} {p['stage'] + 1}")
        if layout is not None and layout.tp > 1:
            where.append(f"TP {p['rank']}")
        out.append("  " + " · ".join(where) + "\n")
    if len(places) > len(shown):
        out.append(t("more_gpus", lang, n=len(places) - len(shown)) + "\n", style="italic")
    out.append(GLYPHS["weights"], style=STYLES["weights"])
    out.append(f" {t('weights', lang)} {_gib(split['weights'], lang)}  ")
    out.append(GLYPHS["kv_cache"], style=STYLES["kv_cache"])
    out.append(f" {t('kv_cache', lang)} {_gib(split['kv_cache'], lang)}\n")
    out.append(GLYPHS["reserve"], style=STYLES["reserve"])
    out.append(f" {t('reserve', lang)} {_gib(split['reserve'], lang)}  ")
    out.append(GLYPHS["free"], style=STYLES["free"])
    out.append(f" {t('free', lang)} {_gib(split['free'], lang)} GiB\n\n")
    out.append_text(groups(rec, lang))
    return out


def _ids(gpus: list[int]) -> str:
    return " ".join(str(g) for g in gpus)


def groups(rec: Recommendation, lang: str) -> Text:
    """The GPUs grouped: per node its NVLink domains, then each copy's stages and TP groups."""
    out = Text()
    layout = rec.layout
    places = placement(rec)
    out.append(t("groups_head", lang) + "\n", style="bold")
    nodes = sorted({p["node"] for p in places})
    nvlink = rec.machine.nvlink != "none" and rec.machine.nvlink_domain_size > 1
    for node in nodes:
        in_node = [p for p in places if p["node"] == node]
        out.append(f"{t('node', lang)} {node + 1}: ", style="bold")
        if nvlink:
            domains: dict[int, list[int]] = {}
            for p in in_node:
                domains.setdefault(p["domain"], []).append(p["gpu"])
            out.append(f"{t('nvlink_domain', lang)} ")
            out.append(" ".join(f"⟦{_ids(d)}⟧" for d in domains.values()), style="#d7af5f")
        else:
            out.append(f"⟦{_ids([p['gpu'] for p in in_node])}⟧ {t('pcie_only', lang)}", style="#d7af5f")
        out.append("\n")
    if layout is None:
        return out
    copies = sorted({p["copy"] for p in places if p["copy"] >= 0})
    shown = copies if len(copies) <= 8 else copies[:8]
    for c in shown:
        out.append(f"{t('copy', lang)} {c + 1}: ", style="bold")
        stages = []
        for s in range(layout.pp):
            members = [p["gpu"] for p in places if p["copy"] == c and p["stage"] == s]
            label = f"TP[{_ids(members)}]" if layout.tp > 1 else f"[{_ids(members)}]"
            stages.append((f"{t('stage', lang)} {s + 1} " if layout.pp > 1 else "") + label)
        out.append(" → ".join(stages), style="#87afd7")
        out.append("\n")
    if len(copies) > len(shown):
        out.append(t("more_gpus", lang, n=(len(copies) - len(shown)) * layout.gpus_per_replica) + "\n", style="italic")
    if layout.ep > 1:
        out.append(t("ep_group", lang, n=layout.ep) + "\n", style="#87afd7")
    idle = [p["gpu"] for p in places if p["copy"] < 0]
    if idle:
        out.append(f"{t('idle', lang)}: [{_ids(idle)}]\n", style="#808080")
    return out


class GpuDrawing(Static):
    """The drawing of the current recommendation."""

    def show(self, rec: Recommendation | None, lang: str) -> None:
        """Draw this recommendation."""
        self.update(draw(rec, lang))
