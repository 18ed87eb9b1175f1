"""Peer-to-peer between each pair of GPUs, weighed from every piece of evidence: the driver's claims (topo -p2p,
CAN Access Peer), the transfers that were made or measured (p2pBandwidthLatencyTest, simpleP2P, NCCL's
transports, the IOMMU's faults), what the platform does (ACS), what the cards are (a GeForce card has no
P2P by design) and what NVLink joins.

Each pair ends in one state: ok (transfers work), unsupported (no P2P by design: not a fault), blocked
(the cards have it, the platform turns it away), broken (transfers hang, fail or corrupt), unknown (only a
claim that it could). The strongest evidence decides (a transfer over a claim, a claim over what a card
is known to do); at equal strength the worse state wins, so that a fault is never outvoted by a claim.
NCCL choosing shared memory is read with the cards: blocked between cards that have P2P, expected
between cards that have not. Guarantees: every state names the evidence it rests on.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from itertools import combinations
from typing import Any

from advisor.core.facts import Facts
from advisor.inputs.evidence import ALL_PAIRS, Evidence, PairState, pair_key

WORSE = {"capable": 0, "ok": 1, "unsupported": 2, "blocked": 3, "broken": 4}
FINAL = {"capable": "unknown"}
STATES = ("ok", "unsupported", "blocked", "broken", "unknown")
MAX_HOST_GPUS = 64  # the pairs of a larger "host" are not listed one by one: only those the evidence names


def matrix(
    observations: Iterable[PairState], gpus: Sequence[int], card_has_p2p: bool | None, topology: Mapping[str, Any]
) -> dict[str, dict[str, Any]]:
    """The state of every pair of `gpus` (or of the pairs the evidence names, where the GPUs are not
    known), with the evidence for it: {"0-1": {"state": ..., "why": [...], "evidence": [Evidence ...]}}.
    `card_has_p2p`: the catalogue's word on the card's PCIe P2P; `topology`: topo -m's, for NVLink by pair."""
    nvlink: Mapping[str, int] = topology.get("nvlinks") or {}
    seen = list(observations)
    if not seen:
        return {}
    host = sorted(set(gpus))
    keys = [pair_key(a, b) for a, b in combinations(host, 2)] if len(host) <= MAX_HOST_GPUS else []
    keys = keys or sorted({o.pair for o in seen if o.pair != ALL_PAIRS}, key=_order)
    if not keys and any(o.pair == ALL_PAIRS for o in seen):
        keys = [ALL_PAIRS]
    out: dict[str, dict[str, Any]] = {}
    for key in keys:
        on_pair = [_read(o, key, card_has_p2p, nvlink) for o in seen if o.pair in (key, ALL_PAIRS)]
        if card_has_p2p is False and not _nvlink(key, nvlink):
            on_pair.append(PairState(key, "unsupported", 1, None, "the card has no peer-to-peer over PCIe"))
        if on_pair:
            out[key] = _decided(on_pair)
    return out


def _order(key: str) -> tuple[int, ...]:
    return tuple(int(x) for x in key.split("-"))


def _nvlink(key: str, nvlink: Mapping[str, int]) -> bool:
    a, _, b = key.partition("-")
    return bool(nvlink.get(f"{a}-{b}") or nvlink.get(f"{b}-{a}"))


def _read(o: PairState, key: str, card_has_p2p: bool | None, nvlink: Mapping[str, int]) -> PairState:
    """An observation as it bears on the pair: NCCL's shared-memory transport is blocked P2P between cards
    that have it (over NVLink, or on a card with PCIe P2P), and what is expected between cards without.
    An engine that found no P2P (`refused`) is read the same way, except that between cards not known it
    is blocked too, more weakly: the engine tried, and the host gave it none."""
    if o.state not in ("shm", "refused"):
        return o
    capable = _nvlink(key, nvlink) or card_has_p2p is True
    if o.state == "refused" and card_has_p2p is None and not capable:
        return PairState(o.pair, "blocked", 1, o.evidence, o.why)
    if capable:
        return PairState(o.pair, "blocked", 2, o.evidence, f"{o.why}, though the cards have peer-to-peer")
    return PairState(o.pair, "unsupported" if card_has_p2p is False else "capable", 1, o.evidence, o.why)


def _decided(found: list[PairState]) -> dict[str, Any]:
    strongest = max(o.strength for o in found)
    top = [o for o in found if o.strength == strongest]
    state = max((o.state for o in top), key=lambda s: WORSE[s])
    chosen = [o for o in top if o.state == state]
    return {
        "state": FINAL.get(state, state),
        "why": list(dict.fromkeys(o.why for o in chosen)),
        "evidence": [o.evidence for o in chosen if o.evidence is not None],
    }


def pair_facts(f: Facts, pairs: Mapping[str, Mapping[str, Any]]) -> None:
    """The facts the rules read: the pairs in each state (GPU0-GPU1, ...), why, and the host's `p2p` (broken
    where any pair is broken or blocked, or every pair is without P2P by design; ok where every known pair
    works; unknown for a mix of working pairs and pairs without), each with its first line."""
    by_state: dict[str, list[str]] = {s: [] for s in STATES}
    for key, verdict in pairs.items():
        by_state[verdict["state"]].append(key)
    for state in ("ok", "unsupported", "blocked", "broken"):
        keys = by_state[state]
        if not keys:
            continue
        first = pairs[keys[0]]
        where = next(iter(first["evidence"]), None)
        f.put(f"p2p_{state}_pairs", _named(keys), where)
        if state != "ok":
            f.put(f"p2p_{state}_why", "; ".join(first["why"]), where)
    failing = by_state["broken"] or by_state["blocked"]
    if not failing and by_state["unsupported"] and len(by_state["unsupported"]) == len(pairs):
        failing = by_state["unsupported"]  # none by design: it does not work either, though nothing is at fault
    if failing:
        f.put("p2p", "broken", next(iter(pairs[failing[0]]["evidence"]), None))
    elif by_state["ok"] and len(by_state["ok"]) == len(pairs):
        f.put("p2p", "ok", next(iter(pairs[by_state["ok"][0]]["evidence"]), None))


def _named(keys: list[str]) -> str:
    if keys == [ALL_PAIRS]:
        return "every pair of GPUs"
    return ", ".join("GPU{}-GPU{}".format(*k.split("-")) for k in keys)


def as_json(pairs: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The matrix as the audit's JSON object: state, reasons and evidence lines per pair."""
    return {
        key: {
            "state": v["state"],
            "why": list(v["why"]),
            "evidence": [e.as_dict() for e in v["evidence"] if isinstance(e, Evidence)],
        }
        for key, v in pairs.items()
    }
