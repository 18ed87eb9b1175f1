"""The knowledge base as typed, validated records: sources, facts, GPUs, links, models, precisions,
platforms, conflicts, formula specifications and published measurements, loaded from knowledge/**/*.yaml.

Loading checks the shape of every entry and names file, line and key on error; `advisor rules check`
adds the cross-checks (citations resolve, quotes match, every figure has a source).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import cached_property
from pathlib import Path
from typing import Any

from advisor.errors import InputError, KnowledgeError
from advisor.fuzzy import closest
from advisor.i18n import LANGS, Text
from advisor.kb.paths import knowledge_dir
from advisor.kb.schema import DERIVED, GIVEN, WHERE, Entry, Record, key, read
from advisor.structs import Struct, field
from advisor.yamlio import load_file, load_file_cached

GIB = 2**30


class Citation(Record, kw_only=False):
    """A pointer into a source: its id, where in it, and optionally its exact words."""

    source: str = key(doc="the id of a source in knowledge/sources")
    locator: str = key(default="", accept=(str, int), doc="where in the source: section, table, page or line")
    quote: str | None = key(default=None, doc="the source's exact words, checked by `advisor rules check`")

    def as_dict(self) -> dict[str, str | None]:
        """The citation as the JSON reports write it."""
        return {"id": self.source, "locator": self.locator, "quote": self.quote}


class Quote(Record):
    """Exact words of a source, with where they stand."""

    text: str = key(doc="the words, verbatim")
    locator: str = key(default="", accept=(str, int), doc="where in the source they stand")
    id: str | None = key(default=None, doc="a name to refer to the quote by")


class Source(Record):
    """A document the knowledge comes from."""

    id: str = key(doc="the id citations name")
    title: str = key(doc="the document's title")
    publisher: str = key(default="", doc="who published it")
    date: str = key(default="", accept=(str, int), doc="when it was published or read")
    language: str = key(default="en", doc="the document's language")
    kind: str = key(doc="seed | primary | vendor | measurement | config | derivation (checked by the rules check)")
    trust: str = key(default="", doc="why and how far the advisor trusts it")
    url: str | None = key(default=None, doc="where it can be read")
    file: str | None = key(default=None, doc="the file it was read from, for seeds")
    quotes: tuple[Quote, ...] = key(default=(), doc="its exact words that citations quote")
    where: str = key(default="", source=WHERE, doc="file:line of the entry")


class FactSpec(Record):
    """One name of the fact table: what it means, its type and unit, and how to ask for it."""

    name: str = key(source=GIVEN, doc="the fact's name: the key it stands under in knowledge/facts.yaml")
    kind: str = key(choices=("input", "catalogue", "derived", "evidence", "layout"), doc="where the value comes from")
    type: str = key(choices=("bool", "enum", "integer", "number", "text"), doc="the type of its value")
    doc: Text = key(doc="what it means, in every language")
    unit: str | None = key(default=None, doc="its unit")
    choices: tuple[str, ...] = key(default=(), doc="the values an enum fact may take")
    question: Text | None = key(default=None, doc="how the chat asks for an input fact")
    scenario: str | None = key(default=None, doc="its path in a scenario file, e.g. hardware.gpu")
    settle: Text | None = key(default=None, doc="how to find the value out on the host")


class Gpu(Record):
    """A GPU product with its memory, bandwidth and links, each figure cited."""

    id: str = key(doc="the catalogue id")
    name: str = key(doc="the product name")
    aliases: tuple[str, ...] = key(default=(), doc="other names it is asked for by")
    architecture: str = key(doc="the GPU architecture, e.g. Blackwell")
    form_factor: str = key(doc="PCIe card, SXM module, ...")
    memory_gb: float = key(doc="memory in decimal GB as the vendor states it")
    memory_gib_reported: float | None = key(default=None, doc="memory in GiB as nvidia-smi reports it (cited capture)")
    memory_gib_estimate: float | None = key(default=None, doc="memory in GiB estimated where no driver report exists")
    memory_estimate_basis: str = key(default="", doc="how the estimate was reached, and why it is not a driver report")
    memory_bandwidth_gbs: float | None = key(default=None, doc="memory bandwidth, GB/s")
    pcie_gen: int | None = key(default=None, doc="PCIe generation of the card's host link")
    nvlink: str = key(
        default="none",
        choices=("none", "bridge-2", "bridge-4", "nvswitch"),
        doc="the widest NVLink the card takes; a bridge-N is optional, never assumed",
    )
    nvlink_gbs_per_direction: float | None = key(default=None, doc="NVLink bandwidth per direction, GB/s")
    nvlink_options: tuple[str, ...] = key(
        default=(), doc="the NVLink setups the vendor allows: none, bridge-2, bridge-4, nvswitch (empty: not stated)"
    )
    pcie_p2p: bool | None = key(default=None, doc="whether peer-to-peer over PCIe works on this product")
    fp8: bool = key(default=False, doc="native FP8 support")
    fp4: bool = key(default=False, doc="native FP4 support")
    gpus_per_system: int | None = key(
        default=None, doc="GPUs in one system where the GPU is sold only as a whole system (DGX Spark: 1)"
    )
    system_link_gbps: float | None = key(
        default=None, doc="the network port of such a system, Gb/s per direction (the link between two units)"
    )
    tensor_tflops_bf16: float | None = key(
        default=None, doc="dense (no sparsity) BF16 tensor-core rate, TFLOPS; None where no figure was found"
    )
    tensor_tflops_fp8: float | None = key(
        default=None, doc="dense (no sparsity) FP8 tensor-core rate, TFLOPS; None without an FP8 path or a figure"
    )
    tensor_tflops_fp4: float | None = key(
        default=None, doc="dense (no sparsity) FP4 tensor-core rate, TFLOPS; None without an FP4 path or a figure"
    )
    derived: tuple[str, ...] = key(
        default=(), doc="figures not printed by the vendor but derived from its figures by a documented ratio"
    )
    cite: Mapping[str, Citation] = key(factory=dict, doc="a citation for each figure, by key")
    notes: str = key(default="", doc="remarks shown in listings")
    where: str = key(default="", source=WHERE, doc="file:line of the entry")

    @property
    def memory_gib(self) -> float:
        """Memory the driver reports; else the stated estimate; else the nominal decimal GB as GiB."""
        if self.memory_gib_reported is not None:
            return self.memory_gib_reported
        if self.memory_gib_estimate is not None:
            return self.memory_gib_estimate
        return self.memory_gb * 1e9 / GIB

    @property
    def nvlink_fitted(self) -> str:
        """The NVLink every such card has: its board's NVSwitch; none where the NVLink is a bridge, which is
        bought and fitted separately and so never assumed."""
        return "none" if self.nvlink.startswith("bridge-") else self.nvlink


class Link(Record):
    """An interconnect with its bandwidth per direction."""

    id: str = key(doc="the link id, e.g. pcie-gen5-x16")
    name: str = key(doc="its name")
    kind: str = key(doc="pcie | socket (PCIe across the CPU interconnect) | nvlink | nvlink-bridge | network")
    gbs_per_direction: float = key(doc="bandwidth per direction, GB/s")
    latency_us: float | None = key(default=None, doc="time of one small all-reduce measured on it, microseconds")
    latency_ranks: int | None = key(default=None, doc="GPUs in that measured all-reduce")
    cite: Mapping[str, Citation] = key(factory=dict, doc="a citation for each figure, by key")
    notes: str = key(default="", doc="remarks")
    where: str = key(default="", source=WHERE, doc="file:line of the entry")


class Checkpoint(Record):
    """A published checkpoint size in one precision."""

    precision: str = key(doc="the precision id of its weights")
    cite: Citation = key(doc="where the size is published")
    repo: str | None = key(default=None, doc="the repository it is published in")
    repo_cite: Citation | None = key(
        default=None, doc="where the repository is published, when the size's source names none"
    )
    size_bytes: float = key(source=DERIVED, doc="its size in bytes, from exactly one of size_gib or size_gb")
    stated_as: str = key(default="", source=DERIVED, doc="the size as the source states it, e.g. '68 GiB'")

    @staticmethod
    def derive(entry: Entry) -> dict[str, Any]:
        """size_bytes and stated_as from the one of size_gib and size_gb that is given."""
        gib, gb = entry.number("size_gib"), entry.number("size_gb")
        if (gib is None) == (gb is None):
            raise KnowledgeError("a checkpoint needs exactly one of size_gib or size_gb", where=entry.where)
        if gib is not None:
            return {"size_bytes": gib * GIB, "stated_as": f"{gib:g} GiB"}
        return {"size_bytes": gb * 1e9, "stated_as": f"{gb:g} GB"}  # type: ignore[operator]


class Model(Record):
    """A model with the config.json fields that matter for splitting it."""

    id: str = key(doc="the catalogue id")
    name: str = key(doc="the model's name")
    aliases: tuple[str, ...] = key(default=(), doc="other names it is asked for by")
    kind: str = key(choices=("dense", "moe"), doc="dense or mixture-of-experts")
    attention: str = key(doc="mha | gqa | mla: how its KV cache is shaped")
    local_attention: str = key(
        default="none",
        choices=("none", "sliding", "chunked"),
        doc="layers that see part of the context: none (all full), sliding window, chunked",
    )
    local_window: int | None = key(default=None, doc="tokens a local layer attends to: the window or the chunk")
    local_layers: int = key(default=0, doc="layers with local attention; the others attend to the full context")
    local_pattern: str = key(default="", doc="which layers are local, as config.json states it (layer_types, ...)")
    native_precision: str = key(default="bf16", doc="the precision its weights are published in")
    config: Mapping[str, Any] = key(doc="the config.json fields the formulas read")
    params_b: float | None = key(default=None, doc="parameters, billions")
    active_params_b: float | None = key(default=None, doc="parameters active per token (mixture of experts), billions")
    node_limit: int | None = key(
        default=None, doc="nodes the routing sends a token to at most (node-limited routing); none: no such limit"
    )
    checkpoints: tuple[Checkpoint, ...] = key(default=(), doc="published checkpoint sizes")
    cite: Mapping[str, Citation] = key(factory=dict, doc="a citation for each figure, by key")
    hf_repo: str | None = key(default=None, doc="its Hugging Face repository")
    notes: str = key(default="", doc="remarks shown in listings")
    where: str = key(default="", source=WHERE, doc="file:line of the entry")

    def checkpoint(self, precision: str) -> Checkpoint | None:
        """The published checkpoint in `precision`, if one is known."""
        return next((c for c in self.checkpoints if c.precision == precision), None)


class Precision(Record):
    """A number format for weights or KV cache."""

    id: str = key(doc="the precision id, e.g. fp8")
    name: str = key(doc="its name, e.g. FP8 E4M3")
    weight_bytes: float = key(doc="bytes per weight")
    aliases: tuple[str, ...] = key(default=(), doc="other names it is asked for by")
    cite: Citation = key(doc="where its size per weight is stated")
    kv_cache: bool = key(default=False, doc="whether the KV cache may be stored in it")
    needs: str | None = key(
        default=None,
        doc="the GPU feature its native kernels need (fp8, fp4); where the card has it, matrix products run at "
        "that tensor-core rate, else at BF16's",
    )
    notes: str = key(default="", doc="remarks")


class Platform(Record):
    """A machine configuration in the sizing catalogue."""

    id: str = key(doc="the platform id")
    name: str = key(doc="its name")
    gpu: str = key(doc="the GPU id it carries")
    gpus_per_node: int = key(doc="GPUs in one node")
    nodes: int = key(default=1, doc="number of nodes")
    nvlink: str | None = key(default=None, doc="its NVLink, where it differs from the card's usual")
    node_link_gbps: float | None = key(default=None, doc="network between nodes, Gb/s per direction")
    form: str = key(
        choices=("workstation", "pcie-server", "board", "system"),
        doc="how it is bought: workstation or PCIe server cards (singly), SXM boards, a system",
    )
    cite: Mapping[str, Citation] = key(factory=dict, doc="a citation for each figure, by key")
    notes: str = key(default="", doc="remarks")


class Claim(Record):
    """One side of a recorded disagreement."""

    source: str = key(doc="the id of the source that says it")
    locator: str = key(default="", accept=(str, int), doc="where in the source")
    says: str = key(doc="what it says, in short")
    quote: str | None = key(default=None, doc="its exact words")


class Question(Record):
    """A question users ask in their own words, and the answer the knowledge base gives: its own cited
    text, or a recorded disagreement's resolution."""

    id: str = key(doc="the question's id")
    asked: Text = key(doc="a regular expression per language that recognises the question")
    answer: Text | None = key(default=None, doc="the answer, in every language")
    conflict: str | None = key(default=None, doc="a conflict whose resolution answers it")
    cite: tuple[Citation, ...] = key(default=(), doc="where the answer comes from")
    where: str = key(default="", source=WHERE, doc="file:line of the entry")


class Failure(Record):
    """A recurring multi-GPU failure seen in public threads: its signature in evidence, what it means,
    the fix the thread used, how to verify it, and the versions it was reported with."""

    id: str = key(doc="lowercase words joined by '-'; its audit rule is failure-ID, its fact failure_ID")
    severity: str = key(choices=("info", "advice", "warning", "error"), doc="how bad a match is")
    topics: tuple[str, ...] = key(doc="the rule topics it belongs to")
    signature: tuple[str, ...] = key(
        default=(), doc="line patterns (bounded, linear; see advisor.kb.signatures) beyond its catalogued messages"
    )
    title: Text = key(doc="a short title, in every language")
    explain: Text = key(doc="what the match means, in every language")
    fix: Text = key(doc="what the thread's resolution did, in every language")
    verify: tuple[str, ...] = key(default=(), doc="commands that show the fix worked")
    versions: Mapping[str, str] = key(default={}, doc="versions the thread reports: nccl, driver, cuda, engine")
    cite: tuple[Citation, ...] = key(doc="the public threads, with the words of their resolution")
    unless: tuple[str, ...] = key(
        default=(), doc="failures that explain this one better where they match too ('*': any without `unless: ['*']`)"
    )
    unsuppressible: bool = key(default=False, doc="whether a deployment's accepted findings may not silence it")
    where: str = key(default="", source=WHERE, doc="file:line of the entry")

    @property
    def fact(self) -> str:
        """The evidence fact a match sets (and the failure's rule reads)."""
        return "failure_" + self.id.replace("-", "_")


class Message(Record):
    """A message GPU software prints, as its own source prints it: the format string at a file and line of
    a release, and the failure (cause) it stands for. Its pattern follows from the format
    (advisor.kb.signatures.from_format), so that the catalogue holds the source's words, not a regex."""

    source: str = key(doc="the id of the software's source in knowledge/sources (its release or commit)")
    file: str = key(doc="the file of the source that prints it, or the page that lists it")
    format: str = key(doc="the format string, verbatim: printf conversions or Python fields where values go")
    cause: str = key(doc="the id of the failure of knowledge/failures.yaml it stands for")
    level: str = key(default="", doc="how it is printed: WARN, INFO, an exception's class, Xid, cudaError")
    line: int | None = key(default=None, doc="the line of the file that prints it")
    code: int | None = key(default=None, doc="its number: a CUDA error code, an Xid")
    name: str = key(default="", doc="its symbolic name: cudaErrorNoDevice, an Xid's mnemonic")
    note: str = key(default="", doc="what the source shows around it: the values, a macro, other causes")
    branch: int | None = key(
        default=None, doc="the conversion (1 = the first) whose printed value the source branches on"
    )
    causes: Mapping[str, str] = key(
        default={}, doc="for that value, the failure it stands for, as the source's branch says"
    )
    shows: int = key(
        default=0,
        doc="of a format printed over several lines, the line (1 = the first) the pattern reads, where the"
        " first is the first line of other messages too; 0: its first line that says enough",
    )
    where: str = key(default="", source=WHERE, doc="file:line of the entry")

    @property
    def locator(self) -> str:
        """Where the source prints it, as a citation names it."""
        if self.line:
            return f"{self.file}:{self.line}"
        if self.code is not None or not self.file:
            return f"{self.name or self.level} {self.code if self.code is not None else ''}".strip()
        return self.file

    @cached_property
    def pattern(self) -> str | None:
        """The line pattern of its format (None: too little literal text to match on its own); worked out
        once per message, though the load's check, the catalogue and its variants all ask for it."""
        from advisor.kb.signatures import from_format

        return from_format(self.format, self.shows)

    def variants(self) -> tuple[tuple[str, Message], ...]:
        """Its pattern for each value of `causes`: the format with that value printed at `branch`, kept
        through the value however long the prefix, and the message standing for that value's cause."""
        from advisor.kb.signatures import with_value

        out = []
        for value, cause in self.causes.items():
            if self.branch is not None and (pattern := with_value(self.format, self.branch, value)) is not None:
                fields = {f.name: self.__dict__[f.name] for f in self._fields}
                fields.update(cause=cause, causes={}, branch=None, note=f"{self.format} with {value}")
                out.append((pattern, Message(**fields)))
        return tuple(out)


class Conflict(Record):
    """A disagreement between sources, with the resolution and why."""

    id: str = key(doc="the conflict id rules name")
    topic: str = key(doc="what it is about")
    title: Text = key(doc="its title, in every language")
    claims: tuple[Claim, ...] = key(doc="what each side says")
    resolution: Text = key(doc="what the advisor does about it")
    why: Text = key(doc="why")
    where: str = key(default="", source=WHERE, doc="file:line of the entry")


class FormulaSpec(Record):
    """A formula as written in knowledge/formulas.yaml."""

    id: str = key(doc="the formula id")
    result: str = key(doc="the fact it computes")
    expr: str = key(accept=(str, int, float), doc="the expression, in the language of advisor.kb.expr")
    unit: str = key(accept=(str, int), doc="the result's unit")
    kind: str = key(doc="exact | estimate | upper-bound | lower-bound")
    title: Text = key(doc="its title, in every language")
    assumptions: Text = key(doc="what it assumes, in every language")
    cite: Citation = key(doc="where it comes from")
    when: str | None = key(default=None, doc="a condition: the formula applies only where it holds")
    display: str = key(
        default="formula",
        choices=("formula", "input"),
        doc="formula, or input: a unit conversion that shows where its input came from",
    )
    where: str = key(default="", source=WHERE, doc="file:line of the entry")


class EngineFlag(Record):
    """One documented command-line flag of a serving engine, with the form of its value."""

    flag: str = key(doc="the flag as the engine's documentation spells it, e.g. --tensor-parallel-size")
    value: str = key(
        choices=("switch", "count", "positive", "fraction", "choice", "text", "address"),
        doc="switch: no value; count: integer >= 0; positive: integer >= 1; fraction: 0 < x <= 1; "
        "choice: one of `choices`; text: any word; address: host:port or a shell variable",
    )
    choices: tuple[str, ...] = key(default=(), doc="the values the engine accepts, for value: choice")
    cite: Citation = key(doc="where the engine documents the flag")


class ServingEngine(Record):
    """A serving engine's launch command: program, how it takes the model, and its documented flags."""

    id: str = key(doc="the engine id, e.g. vllm")
    name: str = key(doc="its name")
    program: tuple[str, ...] = key(doc="the words that start the command, e.g. [vllm, serve]")
    model_flag: str | None = key(
        default=None, doc="the flag that names the model; none: the model is the first argument"
    )
    version: str = key(doc="the engine version or commit whose documentation the table follows")
    flags: tuple[EngineFlag, ...] = key(doc="the flags the advisor may write")
    config_keys: tuple[EngineFlag, ...] = key(
        default=(), doc="the keys of the engine's YAML config file the advisor may write (dotted for nested keys)"
    )
    cite: Citation = key(doc="where the program and the model argument are documented")
    where: str = key(default="", source=WHERE, doc="file:line of the entry")

    def flag(self, name: str) -> EngineFlag | None:
        """The documented flag called `name`, if the table has it."""
        return self._by_flag.get(name)

    @cached_property
    def _by_flag(self) -> dict[str, EngineFlag]:
        # a multi-node launch writes a line per node: looked up by name, not searched
        found: dict[str, EngineFlag] = {}
        for f in self.flags:
            found.setdefault(f.flag, f)
        return found


METRICS = (
    "one_user_tokens_per_s",
    "throughput_tokens_per_s",
    "throughput_tokens_per_s_per_gpu",
    "decode_tokens_per_s_per_gpu",
    "decode_tokens_per_s_per_node",
    "prefill_tokens_per_s_per_node",
    "ttft_ms",
    "tpot_ms",
)


class MeasuredLayout(Record):
    """How a measured deployment split the model: copies, and inside one copy TP, PP, data-parallel
    attention ranks and the expert-parallel group (which spans the copy's TP x DP ranks)."""

    replicas: int = key(default=1, doc="independent copies of the model")
    tp: int = key(default=1, doc="tensor-parallel size inside one copy")
    pp: int = key(default=1, doc="pipeline stages inside one copy")
    dp: int = key(default=1, doc="data-parallel attention ranks inside one copy (DEP: attention DP with EP)")
    ep: int = key(default=1, doc="expert-parallel size: 1, or a divisor of tp x dp")

    @property
    def gpus(self) -> int:
        """GPUs the layout occupies."""
        return self.replicas * self.tp * self.pp * self.dp

    @property
    def label(self) -> str:
        """The layout in words, e.g. 'TP 2 x PP 2, EP 2'."""
        parts = [f"{name} {n}" for name, n in (("DP", self.dp), ("TP", self.tp), ("PP", self.pp)) if n > 1]
        inner = " x ".join(parts) or "1 GPU"
        if self.ep > 1:
            inner += f", EP {self.ep}"
        return inner if self.replicas == 1 else f"{self.replicas} replicas of {inner}"


class Measurement(Record):
    """One published performance figure of a serving deployment: the setup as the source states it, the
    metric and its value (or its ratio against another layout of the same setup), cited word for word."""

    id: str = key(doc="the measurement id")
    source: str = key(doc="the id of the source in knowledge/sources that reports it")
    locator: str = key(accept=(str, int), doc="where in the source: section, table, row")
    quote: str = key(doc="the source's exact words or output line that carry the number")
    model: str = key(doc="the model id in knowledge/models.yaml (the nearest, where notes say so)")
    precision: str = key(doc="the weights' precision id in knowledge/precisions.yaml")
    gpu: str = key(doc="the GPU id in knowledge/gpus.yaml")
    gpus: int = key(doc="GPUs the measured deployment used")
    nodes: int = key(default=1, doc="machines the deployment spanned")
    node_link: str | None = key(default=None, doc="the link id between the nodes (knowledge/links.yaml), if several")
    engine: str = key(choices=("vllm", "sglang", "trtllm", "unknown"), doc="the serving engine")
    ep_backend: str | None = key(
        default=None,
        choices=("nccl", "deepep", "deepep-tbo"),
        doc="the expert all-to-all backend the run used, where the source names it; none: the scenario's default",
    )
    expert_load_balancer: str | None = key(
        default=None,
        choices=("off", "on"),
        doc="whether the run placed experts with a load balancer (EPLB), where the source says; none: the default",
    )
    layout: MeasuredLayout = key(doc="the measured layout")
    concurrency: int | None = key(default=None, doc="requests in flight (batch); none where not stated")
    input_tokens: int | None = key(default=None, doc="prompt length in tokens; none where not stated")
    output_tokens: int | None = key(default=None, doc="output length in tokens; none where not stated")
    metric: str = key(choices=METRICS, doc="what was measured (units in the name: tokens/s or ms)")
    value: float | None = key(default=None, doc="the measured value, in the metric's unit")
    versus: MeasuredLayout | None = key(default=None, doc="for a relative result: the other layout, same setup")
    ratio: float | None = key(default=None, doc="the metric of `layout` divided by that of `versus`")
    notes: str = key(default="", doc="what is uncertain or assumed")
    band: float | None = key(
        default=None,
        doc="the factor within which the advisor's estimate must lie (estimate between value / band and "
        "value × band); none: the metric's band in knowledge/settings.yaml",
    )
    gap: str = key(default="", doc="what explains the estimate's distance from the measurement, where it is known")
    reproduced: bool = key(
        default=True, doc="false where the model does not reproduce the measurement at all; `gap` must say why"
    )
    where: str = key(default="", source=WHERE, doc="file:line of the entry")

    @property
    def cite(self) -> Citation:
        """The measurement's citation."""
        return Citation(self.source, self.locator, self.quote)


# --- reading the files ------------------------------------------------------------------------


def citation(raw: Any, where: str) -> Citation:
    """A citation from its YAML form {source, locator, quote?}."""
    return read(Citation, raw, where)


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


class Knowledge(Struct, frozen=False):
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
    engine_flags: dict[str, ServingEngine] = field(default_factory=dict)
    questions: dict[str, Question] = field(default_factory=dict)
    measurements: dict[str, Measurement] = field(default_factory=dict)
    failures: dict[str, Failure] = field(default_factory=dict)
    messages: tuple[Message, ...] = ()
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

    def names_of(self, kind: str) -> dict[str, str]:
        """Every GPU's or model's ('gpu' or 'model') normalised names, each to its id; built once."""
        return self._gpu_names if kind == "gpu" else self._model_names

    def has_model_name(self, name: str) -> bool:
        """Whether `name` is exactly a model's id, name, alias, HF repo or its last part (no fuzzy match)."""
        return norm_name(name) in self._model_names

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
        raise InputError(f"unknown precision {name!r}", hint="choose one of " + ", ".join(self.precisions))

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
    key = norm_name(name)
    if not key:
        raise InputError(f"empty {what} name")
    if key in index:
        return index[key]
    from rapidfuzz import fuzz, process  # only a name that is not in the index pays for the fuzzy matcher

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
        raise InputError(
            f"{what} name {name!r} is ambiguous", hint="it could be " + ", ".join(repr(i) for i in ids[:4])
        )
    raise InputError(f"unknown {what} {name!r}", hint=hint)


def load(root: Path | None = None) -> Knowledge:
    """Load and shape-check every knowledge file under `root` (default: the packaged knowledge/)."""
    root = root or knowledge_dir()
    if not root.is_dir():
        raise KnowledgeError("knowledge folder not found", where=str(root))
    kb = Knowledge(root=root)
    for attr, record, what in RECORDS:
        items = [read(record, raw, where) for path in _files(root, attr) for raw, where in _entries(path, attr)]
        setattr(kb, attr, _unique(items, what))
    for path in _files(root, "facts"):
        data = load_file(path, KnowledgeError)
        if not isinstance(data, dict) or not isinstance(data.get("facts"), dict):
            raise KnowledgeError("expected a top-level 'facts' mapping", where=str(path))
        for name, raw in data["facts"].items():
            if name in kb.facts:
                raise KnowledgeError(f"duplicate fact {name!r}", where=str(path))
            kb.facts[name] = read(FactSpec, raw, f"{path} fact {name}", name=name)
    _facts_of_fields(kb, root / "fields.yaml")
    kb.messages = tuple(
        read(Message, raw, where) for path in _files(root, "messages") for raw, where in _entries(path, "messages")
    )
    _facts_of_failures(kb)
    for path in _files(root, "settings"):
        data = load_file(path, KnowledgeError)
        if isinstance(data, dict):
            kb.settings.update(data.get("settings") or {})
    _refuse_unknown_references(kb)
    return kb


def _refuse_unknown_references(kb: Knowledge) -> None:
    """KnowledgeError, one line naming the entry and the id, where an entry names a GPU, model, link,
    precision, conflict or source the catalogue does not hold: no advice rests on an entry pointing nowhere."""
    from advisor.kb.references import unknown_references

    unknown = unknown_references(kb)
    if unknown:
        more = len(unknown) - 1
        hint = f"and {more} more unknown id{'s' if more > 1 else ''}; fix the first, then run advisor rules check"
        raise KnowledgeError(unknown[0].line(), where=unknown[0].where or None, hint=hint if more else None)


def load_failures(root: Path | None = None) -> tuple[Failure, ...]:
    """The failure catalogue alone (knowledge/failures.yaml), for the evidence reader that matches its
    signatures; the whole knowledge base (`load`) checks the same entries and their patterns."""
    root = root or knowledge_dir()
    return tuple(
        read(Failure, raw, where) for path in _files(root, "failures") for raw, where in _entries(path, "failures")
    )


def load_messages(root: Path | None = None) -> tuple[Message, ...]:
    """The message catalogue alone (knowledge/messages.yaml)."""
    root = root or knowledge_dir()
    return tuple(
        read(Message, raw, where) for path in _files(root, "messages") for raw, where in _entries(path, "messages")
    )


def signatures(
    failures: Iterable[Failure], messages: Iterable[Message]
) -> tuple[tuple[Failure, tuple[tuple[str, Message | None], ...]], ...]:
    """Each failure with its line patterns: those it states, then those of the messages that stand for
    it, each with the message it comes from (None for a stated one)."""
    of: dict[str, list[tuple[str, Message | None]]] = {}
    for m in messages:
        for pattern, variant in m.variants():
            of.setdefault(variant.cause, []).append((pattern, variant))
        if m.pattern is not None:
            of.setdefault(m.cause, []).append((m.pattern, m))
    return tuple((f, tuple((p, None) for p in f.signature) + tuple(of.get(f.id, ()))) for f in failures)


MATCHED = {"en": "its signature matched in the evidence", "de": "seine Signatur steht in der Evidenz"}
ANY_FAILURE = "*"
SPECIFIC_FAILURE = "failure_specific_seen"  # true where a failure without unless: ['*'] matched


def _facts_of_failures(kb: Knowledge) -> None:
    """One evidence fact per catalogued failure (true where its signature matched), so that a failure is
    one entry of knowledge/failures.yaml: its fact, reader pattern and audit rule all follow from it."""
    from advisor.kb.signatures import problem

    for m in kb.messages:
        if m.cause not in kb.failures:
            raise KnowledgeError(
                f"message {m.format[:50]!r} stands for an unknown failure {m.cause!r}",
                where=m.where,
                hint=closest(m.cause, kb.failures),
            )
        why = "holds too little literal text to match" if m.pattern is None else problem(m.pattern)
        if why:
            raise KnowledgeError(f"message {m.format[:50]!r} {why}", where=m.where)
    said = {m.cause for m in kb.messages} | {c for m in kb.messages for c in m.causes.values()}  # a branch's too
    for failure in kb.failures.values():
        for other in failure.unless:
            if other != ANY_FAILURE and other not in kb.failures:
                raise KnowledgeError(
                    f"failure {failure.id!r}: unless names an unknown failure {other!r}",
                    where=failure.where,
                    hint=closest(other, kb.failures),
                )
        if not failure.signature and failure.id not in said:  # a failure no line can match would never be reported
            raise KnowledgeError(
                f"failure {failure.id!r}: needs a signature pattern or a message of knowledge/messages.yaml",
                where=failure.where,
            )
        for pattern in failure.signature:
            why = problem(pattern)
            if why:
                raise KnowledgeError(f"failure {failure.id!r}: signature {pattern[:60]!r} {why}", where=failure.where)
        if failure.fact in kb.facts:
            raise KnowledgeError(
                f"fact {failure.fact!r} of failure {failure.id!r} is declared twice", where=failure.where
            )
        doc = {lang: f"{failure.title.get(lang)} ({MATCHED[lang]})" for lang in LANGS}
        kb.facts[failure.fact] = read(
            FactSpec, {"kind": "evidence", "type": "bool", "doc": doc}, failure.where, name=failure.fact
        )
    doc = {
        "en": "A catalogued failure that explains itself matched the evidence (one no other failure explains better).",
        "de": "Ein katalogisierter Fehler, der für sich spricht, steht in der Evidenz "
        "(keiner, den ein anderer besser erklärt).",
    }
    kb.facts[SPECIFIC_FAILURE] = read(
        FactSpec, {"kind": "evidence", "type": "bool", "doc": doc}, "", name=SPECIFIC_FAILURE
    )


# The fact type of each field type of knowledge/fields.yaml (the first where a field admits two).
FACT_TYPES = {
    "text": ("text", "enum"),
    "count": ("integer",),
    "tokens": ("integer",),
    "enum": ("enum",),
    "bool": ("bool",),
    "share": ("number",),
    "gbps": ("number",),
}


def _facts_of_fields(kb: Knowledge, path: Path) -> None:
    """Input facts declared in their field's row (its `fact:` block: doc, question, settle, unit), so that
    a new input fact is one row of the field table; a fact may not be declared both there and in facts."""
    if not path.is_file():
        return
    data = load_file_cached(path, KnowledgeError)
    rows = data.get("fields") if isinstance(data, dict) else None
    if not isinstance(rows, dict):
        return  # advisor.inputs.fields reports a malformed table with its own words
    for name, row in rows.items():
        if not isinstance(row, dict) or not isinstance(row.get("fact"), dict):
            continue
        where = f"{path} field {name}"
        if name in kb.facts:
            raise KnowledgeError(f"fact {name!r} is declared in facts and in its field's row; keep one", where=where)
        if row.get("type") not in FACT_TYPES:
            raise KnowledgeError(f"type {row.get('type')!r} is not one of {', '.join(FACT_TYPES)}", where=where)
        raw = {**row["fact"], "kind": "input", "type": FACT_TYPES[row["type"]][0], "scenario": row.get("path")}
        if row.get("choices"):
            raw = {**raw, "type": "enum", "choices": row["choices"]}
        kb.facts[name] = read(FactSpec, raw, where, name=name)


RECORDS: tuple[tuple[str, type, str], ...] = (
    ("sources", Source, "source"),
    ("gpus", Gpu, "GPU"),
    ("links", Link, "link"),
    ("models", Model, "model"),
    ("precisions", Precision, "precision"),
    ("platforms", Platform, "platform"),
    ("conflicts", Conflict, "conflict"),
    ("formulas", FormulaSpec, "formula"),
    ("engine_flags", ServingEngine, "serving engine"),
    ("questions", Question, "question"),
    ("measurements", Measurement, "measurement"),
    ("failures", Failure, "failure"),
)
