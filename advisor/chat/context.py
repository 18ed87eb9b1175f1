"""What a line means given what was said before it, as a listener hears it in a conversation: a
value said again is no change; a card named by its family where one of its variants was given is that
variant; a variant's own words alone ("the Server Edition", "die PCIe-Variante") pick it from the card's
family; "4, not 8" corrects the fact that was 8; a value outside its usual range, or a context longer
than the model reads, is held to be confirmed; a name that only may be meant is offered only where no
such thing is known yet or it was asked for."""

from __future__ import annotations

import re
from typing import Any

from advisor.inputs import entities
from advisor.inputs.fields import field_table
from advisor.inputs.freetext import Understood, item_id_name
from advisor.kb.knowledge import Knowledge

NAMES = ("model", "hardware.gpu")  # catalogue names: said again, they are a reference, not an answer


def supposed(got: Understood, known: dict[str, Any], kb: Knowledge) -> None:
    """A what-if in the terms of what is known: the card named by its family is the known variant, and
    what stands already is no change ("would R1 fit on the H200s with one node": the node count)."""
    _same_family(got, known, kb)
    for path in [p for p, v in got.fields.items() if known.get(p) == v]:
        del got.fields[path]


def settle(got: Understood, known: dict[str, Any], kb: Knowledge, asked: str | None, said: str) -> None:
    """Adjust what was read from one line (`got`) to the facts known before it, in place."""
    _variant_by_words(got, known, kb, said)
    _same_family(got, known, kb)
    _correction(got, known, said)
    asked_path = field_table(kb.root).paths().get(asked or "")
    for path in [p for p, v in got.fields.items() if known.get(p) == v and p in NAMES and p != asked_path]:
        del got.fields[path]  # "die L4 haben doch kein NVLink": the card named again is a reference, no answer
    if "model" in known and asked != "model":
        got.unsure.pop("model", None)
    if "hardware.gpu" in known and asked != "gpu":
        got.unsure.pop("gpu", None)
    _hold(got, known, kb, said)


def _family(kb: Knowledge, gpu_name: str) -> tuple[str, tuple[str, ...]] | None:
    """The family of a catalogue card (its shortest name that names several cards) and its variants."""
    from advisor.errors import AdvisorError

    try:
        gpu = kb.find_gpu(gpu_name)
    except AdvisorError:
        return None
    index = kb.names_of("gpu")
    for name in sorted((n for n, i in index.items() if i == gpu.id), key=len):
        words = name.split()
        for k in range(1, len(words)):
            stem = " ".join(words[:k])
            if stem in index:
                family = entities.Entity("gpu", index[stem], 0, 0, 100.0, stem)
                ids = entities.variants(kb, family, "")
                if len(ids) > 1 and gpu.id in ids:
                    return stem, ids
    return None


def _variant_by_words(got: Understood, known: dict[str, Any], kb: Knowledge, said: str) -> None:
    """'the Server Edition, 2 of them': a variant of the known card's family named by its own words."""
    if "hardware.gpu" in got.fields or "hardware.gpu" not in known:
        return
    family = _family(kb, str(known["hardware.gpu"]))
    if family is None:
        return
    stem, ids = family
    text = entities.spaced(said.lower())
    hits = [i for i in ids if any(_said_as_variant(w, text) for w in entities.own_words(kb, i, stem, ids))]
    if len(hits) == 1:
        got.fields["hardware.gpu"] = item_id_name(kb, "gpu", hits[0])


COMMON = {"server", "edition", "workstation", "max", "board", "card"}  # words of names that are words too


def _said_as_variant(word: str, text: str) -> bool:
    """A variant's word said as its name: a common word ('server') only with the name's other word
    ('Server Edition', 'Max-Q')."""
    if word in COMMON:
        return bool(re.search(rf"\b{word}[ -]?(edition|q)\b|\b(edition|q)[ -]?{word}\b", text))
    return entities.said_word(word, text)


def _same_family(got: Understood, known: dict[str, Any], kb: Knowledge) -> None:
    """'die 4090 hat doch kein NVLink', 'the H100s': a card named by its family, where one of its
    variants is known, is that variant (no change, no question)."""
    gpu = got.fields.get("hardware.gpu")
    if gpu is None or "hardware.gpu" not in known or len(got.variants) < 2:
        return
    current = kb.find_gpu(str(known["hardware.gpu"])).id
    if current in got.variants:
        got.fields["hardware.gpu"] = known["hardware.gpu"]
        got.variants = (current,)


def _correction(got: Understood, known: dict[str, Any], said: str) -> None:
    """'sorry, 4 not 8': the number ruled out names the fact it corrects, whatever was asked."""
    from advisor.inputs.quantities import ruled_out

    text = said.lower()
    for name in (n for n in got.names if n):  # "a PRO 6000 instead of two 5090s": no 6000 of anything
        text = text.replace(name, " " * len(name))
    out = ruled_out(text)
    if not out:
        return
    wrong, right = out
    paths = [p for p, v in known.items() if isinstance(v, (int, float)) and not isinstance(v, bool) and v == wrong]
    if len(paths) != 1 or right is None:
        return
    value = int(right) if float(right).is_integer() else right
    for path in [p for p, v in got.fields.items() if v == value]:
        del got.fields[path]
    got.fields[paths[0]] = value


def _bytes_rate() -> str:
    from advisor.inputs.acts import document

    return str(document()["bytes_rate"])


def _hold(got: Understood, known: dict[str, Any], kb: Knowledge, said_raw: str) -> None:
    """Values the engine would take but a listener would confirm first: outside the field's usual range,
    or a context longer than the model reads."""
    for f in field_table(kb.root).fields:
        value = got.fields.get(f.path)
        if not isinstance(value, (int, float)) or isinstance(value, bool) or f.usual is None:
            continue
        if 1 <= value <= (f.max or value) and not f.usual[0] <= value <= f.usual[1]:
            got.held[f.path] = got.fields.pop(f.path)
            got.ranged.pop(f.path, None)
    rate = got.fields.get("hardware.node_link_gbps")
    if rate is not None and re.search(_bytes_rate(), said_raw):  # "400 GB/s InfiniBand": bytes or bits?
        got.held["hardware.node_link_gbps"] = got.fields.pop("hardware.node_link_gbps")
        got.held_why["hardware.node_link_gbps"] = "bytes"
    context = got.fields.get("workload.context_tokens")
    model = got.fields.get("model") or known.get("model")
    if isinstance(context, int) and model and context <= 10**7:  # beyond every field's limit: refused, not asked
        longest = _longest(kb, str(model))
        if longest and context > longest:
            got.held["workload.context_tokens"] = got.fields.pop("workload.context_tokens")
            got.ranged.pop("workload.context_tokens", None)


def _longest(kb: Knowledge, model: str) -> int | None:
    """The longest context the model's config reads (max_position_embeddings), where known."""
    from advisor.errors import AdvisorError

    try:
        found = kb.find_model(model)
    except AdvisorError:
        return None
    value = (found.config or {}).get("max_position_embeddings")
    return int(value) if isinstance(value, int) else None
