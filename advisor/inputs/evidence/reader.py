"""The reader protocol: what an evidence reader declares, and what it contributes to an audit.

A reader is a `Reader` declaration in its own module plus one line of READERS in registry.py. It
names the kind of output it reads, how it recognises one (`recognise`), how it reads it (`parse`),
what the audit may take from what it read (`facts`), and, beforehand, every target it can
contribute to (`yields`), so that a test can hold it to its word.

A contribution is a target, a value and the line it was read from (`Evidence`, or None). Targets:

- `fact:NAME`: a host fact of the knowledge base (knowledge/facts.yaml), e.g. `fact:p2p`. When the
  fact base gives NAME a place in the scenario (`p2p` has `scenario: hardware.p2p`), the value also
  fills that place unless an earlier source did: the host's word stays the audit's fact, while a
  plan that states the setting keeps it for the scenario.
- a place in the mapping the audit evaluates: `model`, `engine`, `precision`, `kv_cache_dtype`,
  `hardware.NAME` and `workload.NAME` (the scenario's keys, as the fact base names them),
  `deployment.NAME` (tp, pp, dp, ep, gpus: the deployed layout) and `topology` (the GPU matrix the
  TP groups are checked against). A mapping value (a plan's whole `hardware:` section, target
  `hardware`) fills the keys not yet set. With `as_fact`, a value that sets its place is also the
  host fact of that place (the topology's NVLink setting: a fact only where no plan names one).
  `names` (for `model`): other names the catalogue may know the model by, tried after the value.
  `ALL_RANKS` as `deployment.ep` means expert parallel over every TP x DP rank of the layout.
- `p2p_pairs`: what the file says of peer-to-peer between pairs of GPUs (a tuple of PairState); unlike
  every other target these are not first-wins: every reader's observations are kept and weighed
  together (advisor.audit.p2p).

Precedence: an earlier, more direct source wins. The first contribution to a target sets it:
readers in the order of READERS (the plan first), files in the order given, contributions in the
order a reader yields them; a `fallback` contribution (what was asked for rather than what is:
the kernel's parameters against the IOMMU mode the kernel logged) comes after every other. A
reader with `first_only` reads one file, the first of its kind that contributes anything: one
plan, one topology, one launch; a second is not merged into the first.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from advisor.inputs.evidence import Evidence, Parsed

FACT = "fact:"
PAIRS = "p2p_pairs"
PLACES = ("model", "engine", "precision", "kv_cache_dtype", "hardware", "workload", "deployment", "topology")
ALL_RANKS = "all"


@dataclass(frozen=True)
class Contribution:
    """One thing a reader read: the target it fills, its value, and the line it came from."""

    target: str
    value: Any
    evidence: Evidence | None = None
    names: tuple[str, ...] = ()
    as_fact: bool = False
    fallback: bool = False

    @property
    def fact(self) -> str | None:
        """The host fact this contributes to, or None for a place in the scenario."""
        return self.target[len(FACT) :] if self.target.startswith(FACT) else None


def fact(name: str, value: Any, evidence: Evidence | None = None, fallback: bool = False) -> Contribution:
    """A contribution to the host fact `name`."""
    return Contribution(FACT + name, value, evidence, fallback=fallback)


@dataclass(frozen=True)
class Reader:
    """One kind of evidence: how it is recognised and read, and the targets it contributes to."""

    kind: str
    recognise: Callable[[str], bool]
    parse: Callable[[str, str], Parsed]
    facts: Callable[[Parsed], Iterable[Contribution]]
    yields: tuple[str, ...]
    first_only: bool = False
    gpu_evidence: bool = False  # what it reads comes only from a host whose NVIDIA GPUs answered


def pairs(observations: Iterable[Any]) -> Contribution:
    """A contribution of peer-to-peer observations (PairState) between pairs of GPUs."""
    return Contribution(PAIRS, tuple(observations))


def is_place(target: str) -> bool:
    """Whether a target names a place in the scenario mapping (not a host fact)."""
    return not target.startswith(FACT) and target.split(".", 1)[0] in PLACES
