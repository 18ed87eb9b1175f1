"""What the knowledge entries name must be in the catalogue: every GPU, model, precision, link, conflict
and source an entry (a measurement, a failure, a platform, a question, any citation) refers to by id.

Guarantees: `unknown_references` lists each unknown id with the entry that names it and the entry's
file:line, in file order; it only looks ids up (linear in the entries, no quote matching, which
`advisor rules check` does), so the knowledge load runs it on every uncached load and refuses a
knowledge base whose entries point nowhere: no command advises on it, `rules check` included.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

# the records are typed in advisor.kb.knowledge, which calls this module: Any here keeps the import one-way
Knowledge = Any
Citation = Any


@dataclass(frozen=True)
class Unknown:
    """One id an entry names that the catalogue does not hold."""

    entry: str  # "measurement dl380a-70b-split-four-one-user"
    message: str  # "names unknown GPU 'h999'"
    where: str  # file:line of the entry

    def line(self) -> str:
        """The entry and the unknown id, as one line."""
        return f"{self.entry}: {self.message}"


def _citations(record: Any) -> Iterator[Citation]:
    """Every citation a record holds: one, a tuple of them, or a mapping of them by figure."""
    cite = getattr(record, "cite", None)
    if cite is None:
        return
    if isinstance(cite, Mapping):
        yield from cite.values()
    elif isinstance(cite, tuple):
        yield from cite
    else:
        yield cite


def _entries(kb: Knowledge) -> Iterator[tuple[str, Any]]:
    """(name, record) of every knowledge entry that can cite a source."""
    for kind, table in (
        ("gpu", kb.gpus),
        ("link", kb.links),
        ("model", kb.models),
        ("precision", kb.precisions),
        ("platform", kb.platforms),
        ("question", kb.questions),
        ("measurement", kb.measurements),
        ("failure", kb.failures),
        ("engine", kb.engine_flags),
    ):
        for key, record in table.items():
            yield f"{kind} {key}", record


def unknown_references(kb: Knowledge) -> list[Unknown]:
    """Every id an entry names that is not in the catalogue, with the entry; empty when all resolve."""
    out: list[Unknown] = []

    def named(entry: str, record: Any, what: str, value: str | None, table: Mapping[str, Any]) -> None:
        if value is not None and value not in table:
            out.append(Unknown(entry, f"names unknown {what} {value!r}", getattr(record, "where", "")))

    def cited(entry: str, record: Any, citation: Citation | None) -> None:
        if citation is not None and citation.source not in kb.sources:
            out.append(Unknown(entry, f"cites unknown source {citation.source!r}", getattr(record, "where", "")))

    for entry, record in _entries(kb):
        for citation in _citations(record):
            cited(entry, record, citation)
    for mid, model in kb.models.items():
        for ck in model.checkpoints:
            cited(f"model {mid} checkpoint {ck.precision}", model, ck.cite)
            cited(f"model {mid} checkpoint {ck.precision}", model, ck.repo_cite)
    for sid, serving in kb.engine_flags.items():
        for flag in serving.flags:
            cited(f"engine {sid} flag {flag.flag}", serving, flag.cite)
    for cid, conflict in kb.conflicts.items():
        for claim in conflict.claims:
            named(f"conflict {cid}", conflict, "source", claim.source, kb.sources)
    for pid, platform in kb.platforms.items():
        named(f"platform {pid}", platform, "GPU", platform.gpu, kb.gpus)
    for qid, question in kb.questions.items():
        named(f"question {qid}", question, "conflict", question.conflict, kb.conflicts)
    for mid, m in kb.measurements.items():
        entry = f"measurement {mid}"
        named(entry, m, "model", m.model, kb.models)
        named(entry, m, "precision", m.precision, kb.precisions)
        named(entry, m, "GPU", m.gpu, kb.gpus)
        named(entry, m, "link", m.node_link, kb.links)
    return out
