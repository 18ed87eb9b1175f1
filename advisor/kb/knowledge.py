"""The knowledge base as typed, validated records: sources, facts, GPUs, links, models, precisions,
platforms, conflicts and formula specifications, loaded from knowledge/**/*.yaml.

Loading checks the shape of every entry and names file, line and key on error; `advisor rules check`
adds the cross-checks (citations resolve, quotes match, every figure has a source).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from advisor.errors import InputError, KnowledgeError
from advisor.fuzzy import closest
from advisor.i18n import Text
from advisor.kb.paths import knowledge_dir
from advisor.yamlio import line_of, load_file

GIB = 2**30


@dataclass(frozen=True)
class Citation:
    """A pointer into a source: its id, where in it, and optionally its exact words."""

    source: str
    locator: str
    quote: str | None = None

    def as_dict(self) -> dict[str, str | None]:
        """The citation as the JSON reports write it."""
        return {"id": self.source, "locator": self.locator, "quote": self.quote}


@dataclass(frozen=True)
class Quote:
    """Exact words of a source, with where they stand and how they were checked."""

    text: str
    locator: str
    id: str | None = None
    verified: str | bool | None = None


@dataclass(frozen=True)
class Source:
    """A document the knowledge comes from."""

    id: str
    title: str
    publisher: str
    date: str
    language: str
    kind: str
    trust: str
    url: str | None = None
    file: str | None = None
    authors: str | None = None
    quotes: tuple[Quote, ...] = ()
    where: str = ""


@dataclass(frozen=True)
class FactSpec:
    """One name of the fact table: what it means, its type and unit, and how to ask for it."""

    name: str
    kind: str
    type: str
    doc: Text
    unit: str | None = None
    choices: tuple[str, ...] = ()
    question: Text | None = None
    scenario: str | None = None
    settle: Text | None = None


@dataclass(frozen=True)
class Gpu:
    """A GPU product with its memory, bandwidth and links, each figure cited."""

    id: str
    name: str
    aliases: tuple[str, ...]
    architecture: str
    form_factor: str
    memory_gb: float
    memory_gib_reported: float | None
    memory_bandwidth_gbs: float | None
    pcie_gen: int | None
    nvlink: str
    nvlink_gbs_per_direction: float | None
    pcie_p2p: bool | None
    fp8: bool
    fp4: bool
    cite: Mapping[str, Citation]
    memory_type: str | None = None
    pcie_lanes: int | None = 16
    nvlink_generation: int | None = None
    tdp_w: float | None = None
    notes: str = ""
    where: str = ""

    @property
    def memory_gib(self) -> float:
        """Memory the driver reports, or the nominal decimal GB converted to GiB where unknown."""
        if self.memory_gib_reported is not None:
            return self.memory_gib_reported
        return self.memory_gb * 1e9 / GIB


@dataclass(frozen=True)
class Link:
    """An interconnect with its bandwidth per direction."""

    id: str
    name: str
    kind: str
    gbs_per_direction: float
    cite: Mapping[str, Citation]
    latency_us: float | None = None
    notes: str = ""
    where: str = ""


@dataclass(frozen=True)
class Checkpoint:
    """A published checkpoint size in one precision."""

    precision: str
    size_bytes: float
    cite: Citation
    repo: str | None = None
    stated_as: str = ""


@dataclass(frozen=True)
class Model:
    """A model with the config.json fields that matter for splitting it."""

    id: str
    name: str
    aliases: tuple[str, ...]
    kind: str
    attention: str
    native_precision: str
    config: Mapping[str, Any]
    params_b: float | None
    active_params_b: float | None
    checkpoints: tuple[Checkpoint, ...]
    cite: Mapping[str, Citation]
    hf_repo: str | None = None
    notes: str = ""
    where: str = ""

    def checkpoint(self, precision: str) -> Checkpoint | None:
        """The published checkpoint in `precision`, if one is known."""
        return next((c for c in self.checkpoints if c.precision == precision), None)


@dataclass(frozen=True)
class Precision:
    """A number format for weights or KV cache."""

    id: str
    name: str
    weight_bytes: float
    aliases: tuple[str, ...]
    cite: Citation
    needs: str | None = None
    kv_cache: bool = False
    notes: str = ""


@dataclass(frozen=True)
class Platform:
    """A machine configuration in the sizing catalogue."""

    id: str
    name: str
    gpu: str
    gpus_per_node: int
    nodes: int = 1
    nvlink: str | None = None
    node_link_gbps: float | None = None
    notes: str = ""


@dataclass(frozen=True)
class Claim:
    """One side of a recorded disagreement."""

    source: str
    locator: str
    says: str
    quote: str | None = None


@dataclass(frozen=True)
class Conflict:
    """A disagreement between sources, with the resolution and why."""

    id: str
    topic: str
    title: Text
    claims: tuple[Claim, ...]
    resolution: Text
    why: Text
    where: str = ""


@dataclass(frozen=True)
class FormulaSpec:
    """A formula as written in knowledge/formulas.yaml."""

    id: str
    result: str
    expr: str
    unit: str
    kind: str
    title: Text
    assumptions: Text
    cite: Citation
    when: str | None = None
    display: str = "formula"  # formula | input (a unit conversion: show where the input came from)
    where: str = ""


# --- shape checking ---------------------------------------------------------------------------


class _Entry:
    """Typed access to one YAML mapping, with errors naming file, line and key."""

    def __init__(self, data: Any, where: str) -> None:
        if not isinstance(data, dict):
            raise KnowledgeError("expected a mapping", where=where)
        self.data = data
        self.where = f"{where}:{line_of(data)}" if line_of(data) else where

    def get(self, key: str, kind: type | tuple[type, ...], default: Any = ..., *, nullable: bool = False) -> Any:
        if key not in self.data or (self.data[key] is None and default is not ...):
            if default is ...:
                raise KnowledgeError(f"missing key {key!r}", where=self.where)
            return default
        value = self.data[key]
        if value is None and nullable:
            return None
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            return float(value)
        if not isinstance(value, kind) or (isinstance(value, bool) and kind in (int, float)):
            raise KnowledgeError(f"key {key!r} should be {_kind_name(kind)}, not {value!r}", where=self.where)
        return value

    def text(self, key: str, default: Any = ...) -> Text | None:
        raw = self.get(key, dict, default)
        if raw is None or raw is default:
            return raw
        return Text.checked(raw, key, self.where, KnowledgeError)

    def citations(self, key: str = "cite") -> dict[str, Citation]:
        raw = self.get(key, dict, {})
        return {name: citation(value, f"{self.where} {key}.{name}") for name, value in raw.items()}


def _kind_name(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(k.__name__ for k in kinds)


def citation(raw: Any, where: str) -> Citation:
    """A citation from its YAML form {source, locator, quote?}."""
    entry = _Entry(raw, where)
    return Citation(
        source=entry.get("source", str),
        locator=str(entry.get("locator", (str, int), "")),
        quote=entry.get("quote", str, None),
    )


def _entries(path: Path, top: str) -> list[tuple[Any, str]]:
    data = load_file(path, KnowledgeError)
    if data is None:
        return []
    if not isinstance(data, dict) or top not in data:
        raise KnowledgeError(f"expected a top-level {top!r} key", where=str(path))
    items = data[top]
    if isinstance(items, dict):
        return [({"id": k, **v} if isinstance(v, dict) else v, str(path)) for k, v in items.items()]
    if not isinstance(items, list):
        raise KnowledgeError(f"{top!r} should be a list", where=str(path))
    return [(item, str(path)) for item in items]


def _files(root: Path, name: str) -> list[Path]:
    single = root / f"{name}.yaml"
    folder = root / name
    found = [single] if single.is_file() else []
    if folder.is_dir():
        found += sorted(folder.glob("*.yaml"))
    return found


def _unique(items: Iterable[Any], what: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items:
        if item.id in out:
            raise KnowledgeError(f"duplicate {what} id {item.id!r}", where=getattr(item, "where", ""))
        out[item.id] = item
    return out


def _source(raw: Any, where: str) -> Source:
    e = _Entry(raw, where)
    quotes = []
    for q in e.get("quotes", list, []):
        qe = _Entry(q, e.where)
        quotes.append(
            Quote(
                text=qe.get("text", str),
                locator=str(qe.get("locator", (str, int), "")),
                id=qe.get("id", str, None),
                verified=qe.get("verified", (str, bool), None),
            )
        )
    return Source(
        id=e.get("id", str),
        title=e.get("title", str),
        publisher=e.get("publisher", str, ""),
        date=str(e.get("date", (str, int), "")),
        language=e.get("language", str, "en"),
        kind=e.get("kind", str),
        trust=e.get("trust", str, ""),
        url=e.get("url", str, None),
        file=e.get("file", str, None),
        authors=e.get("authors", str, None),
        quotes=tuple(quotes),
        where=e.where,
    )


def _fact(name: str, raw: Any, where: str) -> FactSpec:
    e = _Entry(raw, f"{where} fact {name}")
    return FactSpec(
        name=name,
        kind=e.get("kind", str),
        type=e.get("type", str),
        doc=e.text("doc"),  # type: ignore[arg-type]
        unit=e.get("unit", str, None),
        choices=tuple(e.get("choices", list, [])),
        question=e.text("question", None),
        scenario=e.get("scenario", str, None),
        settle=e.text("settle", None),
    )


def _gpu(raw: Any, where: str) -> Gpu:
    e = _Entry(raw, where)
    return Gpu(
        id=e.get("id", str),
        name=e.get("name", str),
        aliases=tuple(str(a) for a in e.get("aliases", list, [])),
        architecture=e.get("architecture", str),
        form_factor=e.get("form_factor", str),
        memory_gb=e.get("memory_gb", float),
        memory_gib_reported=e.get("memory_gib_reported", float, None),
        memory_bandwidth_gbs=e.get("memory_bandwidth_gbs", float, None),
        memory_type=e.get("memory_type", str, None),
        pcie_gen=e.get("pcie_gen", int, None),
        pcie_lanes=e.get("pcie_lanes", int, None),
        nvlink=e.get("nvlink", str, "none"),
        nvlink_gbs_per_direction=e.get("nvlink_gbs_per_direction", float, None),
        nvlink_generation=e.get("nvlink_generation", int, None),
        pcie_p2p=e.get("pcie_p2p", bool, None),
        fp8=e.get("fp8", bool, False),
        fp4=e.get("fp4", bool, False),
        tdp_w=e.get("tdp_w", float, None),
        cite=e.citations(),
        notes=e.get("notes", str, ""),
        where=e.where,
    )


def _link(raw: Any, where: str) -> Link:
    e = _Entry(raw, where)
    return Link(
        id=e.get("id", str),
        name=e.get("name", str),
        kind=e.get("kind", str),
        gbs_per_direction=e.get("gbs_per_direction", float),
        latency_us=e.get("latency_us", float, None),
        cite=e.citations(),
        notes=e.get("notes", str, ""),
        where=e.where,
    )


def _model(raw: Any, where: str) -> Model:
    e = _Entry(raw, where)
    checkpoints = []
    for c in e.get("checkpoints", list, []):
        ce = _Entry(c, e.where)
        gib = ce.get("size_gib", float, None)
        gb = ce.get("size_gb", float, None)
        if (gib is None) == (gb is None):
            raise KnowledgeError("a checkpoint needs exactly one of size_gib or size_gb", where=ce.where)
        checkpoints.append(
            Checkpoint(
                precision=ce.get("precision", str),
                size_bytes=gib * GIB if gib is not None else gb * 1e9,  # type: ignore[operator]
                cite=citation(ce.get("cite", dict), ce.where),
                repo=ce.get("repo", str, None),
                stated_as=f"{gib:g} GiB" if gib is not None else f"{gb:g} GB",
            )
        )
    return Model(
        id=e.get("id", str),
        name=e.get("name", str),
        aliases=tuple(str(a) for a in e.get("aliases", list, [])),
        kind=e.get("kind", str),
        attention=e.get("attention", str),
        native_precision=e.get("native_precision", str, "bf16"),
        config=e.get("config", dict),
        params_b=e.get("params_b", float, None),
        active_params_b=e.get("active_params_b", float, None),
        checkpoints=tuple(checkpoints),
        cite=e.citations(),
        hf_repo=e.get("hf_repo", str, None),
        notes=e.get("notes", str, ""),
        where=e.where,
    )


def _precision(raw: Any, where: str) -> Precision:
    e = _Entry(raw, where)
    return Precision(
        id=e.get("id", str),
        name=e.get("name", str),
        weight_bytes=e.get("weight_bytes", float),
        aliases=tuple(str(a) for a in e.get("aliases", list, [])),
        cite=citation(e.get("cite", dict), e.where),
        needs=e.get("needs", str, None),
        kv_cache=e.get("kv_cache", bool, False),
        notes=e.get("notes", str, ""),
    )


def _platform(raw: Any, where: str) -> Platform:
    e = _Entry(raw, where)
    return Platform(
        id=e.get("id", str),
        name=e.get("name", str),
        gpu=e.get("gpu", str),
        gpus_per_node=e.get("gpus_per_node", int),
        nodes=e.get("nodes", int, 1),
        nvlink=e.get("nvlink", str, None),
        node_link_gbps=e.get("node_link_gbps", float, None),
        notes=e.get("notes", str, ""),
    )


def _conflict(raw: Any, where: str) -> Conflict:
    e = _Entry(raw, where)
    claims = []
    for c in e.get("claims", list):
        ce = _Entry(c, e.where)
        claims.append(
            Claim(
                source=ce.get("source", str),
                locator=str(ce.get("locator", (str, int), "")),
                says=ce.get("says", str),
                quote=ce.get("quote", str, None),
            )
        )
    return Conflict(
        id=e.get("id", str),
        topic=e.get("topic", str),
        title=e.text("title"),  # type: ignore[arg-type]
        claims=tuple(claims),
        resolution=e.text("resolution"),  # type: ignore[arg-type]
        why=e.text("why"),  # type: ignore[arg-type]
        where=e.where,
    )


def _formula(raw: Any, where: str) -> FormulaSpec:
    e = _Entry(raw, where)
    return FormulaSpec(
        id=e.get("id", str),
        result=e.get("result", str),
        expr=str(e.get("expr", (str, int, float))),
        unit=str(e.get("unit", (str, int))),
        kind=e.get("kind", str),
        title=e.text("title"),  # type: ignore[arg-type]
        assumptions=e.text("assumptions"),  # type: ignore[arg-type]
        cite=citation(e.get("cite", dict), e.where),
        when=e.get("when", str, None),
        display=e.get("display", str, "formula"),
        where=e.where,
    )


@dataclass
class Knowledge:
    """Everything under knowledge/, with look-ups by id and by fuzzy name."""

    root: Path
    sources: dict[str, Source] = field(default_factory=dict)
    facts: dict[str, FactSpec] = field(default_factory=dict)
    gpus: dict[str, Gpu] = field(default_factory=dict)
    links: dict[str, Link] = field(default_factory=dict)
    models: dict[str, Model] = field(default_factory=dict)
    precisions: dict[str, Precision] = field(default_factory=dict)
    platforms: dict[str, Platform] = field(default_factory=dict)
    conflicts: dict[str, Conflict] = field(default_factory=dict)
    formulas: dict[str, FormulaSpec] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)

    @cached_property
    def _gpu_names(self) -> dict[str, str]:
        return name_index(self.gpus.values())

    @cached_property
    def _model_names(self) -> dict[str, str]:
        return name_index(self.models.values())

    def find_gpu(self, name: str) -> Gpu:
        """The GPU called `name` (id, name or alias, fuzzy); InputError with the closest names."""
        return self.gpus[_find(name, self._gpu_names, "GPU", "advisor gpus")]

    def find_model(self, name: str) -> Model:
        """The model called `name` (id, name, alias or HF repo, fuzzy); InputError with the closest names."""
        return self.models[_find(name, self._model_names, "model", "advisor models")]

    @cached_property
    def _precision_names(self) -> dict[str, str]:
        return name_index(self.precisions.values())

    def find_precision(self, name: str) -> Precision:
        """The precision called `name`, e.g. 'fp8' or 'FP8 E4M3'."""
        index = self._precision_names
        key = norm_name(name)
        if key in index:
            return self.precisions[index[key]]
        raise InputError(
            f"unknown precision {name!r}", hint="choose one of " + ", ".join(self.precisions)
        )

    def link(self, link_id: str) -> Link:
        """The link with this id; KnowledgeError when the knowledge base lacks it."""
        try:
            return self.links[link_id]
        except KeyError:
            raise KnowledgeError(f"no link {link_id!r} in knowledge/links.yaml") from None

    def pcie_link(self, gen: int) -> Link:
        """The PCIe x16 link of a generation."""
        return self.link(f"pcie-gen{gen}-x16")


def norm_name(text: str) -> str:
    return " ".join(text.lower().replace("-", " ").replace("_", " ").replace("/", " ").split())


def name_index(items: Iterable[Any]) -> dict[str, str]:
    index: dict[str, str] = {}
    for item in items:
        names = [item.id, item.name, *item.aliases]
        repo = getattr(item, "hf_repo", None)
        if repo:
            names += [repo, repo.split("/")[-1]]
        for n in names:
            index.setdefault(norm_name(n), item.id)
    return index


def _find(name: str, index: dict[str, str], what: str, listing: str) -> str:
    from rapidfuzz import fuzz, process

    key = norm_name(name)
    if not key:
        raise InputError(f"empty {what} name")
    if key in index:
        return index[key]
    numbers = set(re.findall(r"\d+", key))
    pool = [name for name in index if numbers <= set(re.findall(r"\d+", name))]
    found = process.extract(key, pool, scorer=fuzz.WRatio, limit=5, score_cutoff=85)
    ids = list(dict.fromkeys(index[m] for m, _s, _i in found))
    if len(ids) == 1:
        return ids[0]
    if len(ids) > 1 and found[0][1] - found[1][1] >= 6 and index[found[0][0]] != index[found[1][0]]:
        return index[found[0][0]]
    hint = closest(name, sorted({v for v in index.values()})) or f"see `{listing}`"
    if len(ids) > 1:
        raise InputError(f"{what} name {name!r} is ambiguous", hint="it could be " + ", ".join(repr(i) for i in ids[:4]))
    raise InputError(f"unknown {what} {name!r}", hint=hint)


def load(root: Path | None = None) -> Knowledge:
    """Load and shape-check every knowledge file under `root` (default: the packaged knowledge/)."""
    root = root or knowledge_dir()
    if not root.is_dir():
        raise KnowledgeError("knowledge folder not found", where=str(root))
    kb = Knowledge(root=root)
    readers: list[tuple[str, str, Any, str]] = [
        ("sources", "sources", _source, "source"),
        ("gpus", "gpus", _gpu, "GPU"),
        ("links", "links", _link, "link"),
        ("models", "models", _model, "model"),
        ("precisions", "precisions", _precision, "precision"),
        ("platforms", "platforms", _platform, "platform"),
        ("conflicts", "conflicts", _conflict, "conflict"),
        ("formulas", "formulas", _formula, "formula"),
    ]
    for attr, name, reader, what in readers:
        items = [reader(raw, where) for path in _files(root, name) for raw, where in _entries(path, name)]
        setattr(kb, attr, _unique(items, what))
    for path in _files(root, "facts"):
        data = load_file(path, KnowledgeError)
        if not isinstance(data, dict) or not isinstance(data.get("facts"), dict):
            raise KnowledgeError("expected a top-level 'facts' mapping", where=str(path))
        for name, raw in data["facts"].items():
            if name in kb.facts:
                raise KnowledgeError(f"duplicate fact {name!r}", where=str(path))
            kb.facts[name] = _fact(name, raw, str(path))
    for path in _files(root, "settings"):
        data = load_file(path, KnowledgeError)
        if isinstance(data, dict):
            kb.settings.update(data.get("settings") or {})
    return kb
