"""Free-text answers, in English or German, turned into scenario fields.

"llama 70b in fp8", "zwei RTX Pro 6000", "8x h200 nvl with 4-way bridges", "about 60 users, 8k
context", "kein NVLink", "iommu=pt". Names are fuzzy-matched against the catalogue; when unsure,
the result carries "did you mean" candidates instead of a guess.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from advisor.kb.knowledge import Knowledge
from advisor.inputs.scenario import SUFFIXES

WORDS = {
    "one": 1, "a": 1, "an": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "twelve": 12, "sixteen": 16, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50,
    "sixty": 60, "hundred": 100,
    "ein": 1, "eine": 1, "einer": 1, "eins": 1, "zwei": 2, "drei": 3, "vier": 4, "fünf": 5, "sechs": 6, "sieben": 7,
    "acht": 8, "neun": 9, "zehn": 10, "zwölf": 12, "sechzehn": 16, "zwanzig": 20, "dreißig": 30, "vierzig": 40,
    "fünfzig": 50, "sechzig": 60, "hundert": 100,
}
PRECISIONS = {
    "nvfp4": "nvfp4", "mxfp4": "mxfp4", "fp8": "fp8", "bf16": "bf16", "bfloat16": "bf16", "fp16": "fp16",
    "int8": "int8", "int4": "int4", "awq": "int4", "gptq": "int4", "w4a16": "int4",
}
USERS = r"(users?|nutzer(?:n|innen)?|conversations?|gespräche?n?|sessions?|concurrent|gleichzeitig|clients?|anfragen|requests)"
CONTEXT = r"(context|kontext|ctx|tokens?|token)"
GPUS = r"(gpus?|cards?|karten?|grafikkarten?|x|×)"


@dataclass
class Understood:
    """Fields read from one answer, the words that looked like a name but matched nothing surely, and notes."""

    fields: dict[str, Any] = field(default_factory=dict)
    unsure: dict[str, list[str]] = field(default_factory=dict)
    skipped: bool = False


def _numbers(text: str) -> str:
    """Number words replaced by digits, '8k' kept, '1.000' (German thousands) joined."""
    text = re.sub(r"(?<=\d)[.,](?=\d{3}\b)", "", text)
    out = []
    for token in re.split(r"(\W+)", text):
        out.append(str(WORDS[token.lower()]) if token.lower() in WORDS and token.lower() not in ("a", "an") else token)
    return "".join(out)


def _count(value: str) -> int:
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([kKmM]?)", value.strip())
    if not m:
        raise ValueError(value)
    number = float(m.group(1)) * SUFFIXES[m.group(2).lower()]
    return int(number)


def understand(text: str, kb: Knowledge, expecting: str | None = None) -> Understood:
    """Every scenario field the text states; `expecting` is the fact the last question asked for."""
    out = Understood()
    raw = text.strip()
    lowered = _numbers(raw.lower())
    if lowered in ("skip", "weiter", "überspringen", "egal", "don't know", "weiß nicht", "keine ahnung", "?", "-"):
        out.skipped = True
        return out
    f = out.fields

    m = re.search(rf"(\d+(?:\.\d+)?\s*[km]?)\s*(?:{CONTEXT})", lowered) or re.search(rf"{CONTEXT}\D{{0,12}}(\d+(?:\.\d+)?\s*[km]?)\b", lowered)
    if m:
        value = m.group(1) if m.group(1) and m.group(1)[0].isdigit() else m.group(2)
        f["workload.context_tokens"] = _count(value)
        lowered = lowered.replace(m.group(0), " ")
    m = re.search(rf"(\d+)\s*(?:{USERS})", lowered) or re.search(rf"{USERS}\D{{0,12}}(\d+)", lowered)
    if m:
        f["workload.concurrent_conversations"] = int(m.group(1) if m.group(1).isdigit() else m.group(2))
        lowered = lowered.replace(m.group(0), " ")
    m = re.search(r"(\d+)\s*(?:nodes?|knoten|server)\b", lowered)
    if m:
        f["hardware.nodes"] = int(m.group(1))
    m = re.search(r"(\d+)\s*(?:gb/?s|gbit|gbps|gb)\b.*?(network|netz|infiniband|ib|roce|ethernet|link)", lowered)
    if m:
        f["hardware.node_link_gbps"] = float(m.group(1))

    for m in re.finditer(r"\b(" + "|".join(PRECISIONS) + r")\b", lowered):
        before, after = lowered[max(0, m.start() - 12) : m.start()], lowered[m.end() : m.end() + 12]
        if re.search(r"(kv|cache)[ :-]*(-?cache)?[ :-]*(in|als|as)?[ :-]*$", before) or re.match(r"[ -]?(kv|cache)", after):
            f["kv_cache_dtype"] = PRECISIONS[m.group(1)]
        else:
            f.setdefault("precision", PRECISIONS[m.group(1)])

    if re.search(r"nvswitch|sxm|hgx|dgx", lowered):
        f["hardware.nvlink"] = "nvswitch" if "nvswitch" in lowered else None
    if re.search(r"(4|vier)[- ]?(way|fach|er)[- ]?(bridge|brücke)|bridge-4|4er", lowered):
        f["hardware.nvlink"] = "bridge-4"
    elif re.search(r"(2|zwei)[- ]?(way|fach|er)[- ]?(bridge|brücke)|bridge-2|2er", lowered):
        f["hardware.nvlink"] = "bridge-2"
    elif re.search(r"\b(no|kein|ohne|without)\s+nvlink|pcie only|nur pcie", lowered):
        f["hardware.nvlink"] = "none"
    if f.get("hardware.nvlink") is None:
        f.pop("hardware.nvlink", None)

    if re.search(r"\b(latency|latenz|one user|ein(em)? nutzer|single[- ]stream|schnell)", lowered):
        f["workload.goal"] = "latency"
    elif re.search(r"\b(throughput|durchsatz)", lowered):
        f["workload.goal"] = "throughput"
    elif re.search(r"\b(capacity|kapazität|most conversations|meiste)", lowered):
        f["workload.goal"] = "capacity"
    if re.search(r"\b(training|train|trainieren|fine-?tun)", lowered):
        f["workload.kind"] = "training"
    elif re.search(r"\b(inference|serving|inferenz)", lowered):
        f["workload.kind"] = "inference"
    if re.search(r"\b(vm|virtual machine|virtuelle[rn]? maschine|cloud instance|hypervisor)\b", lowered):
        f["hardware.virtualized"] = True
    elif re.search(r"\b(bare[- ]metal|kein[e]? vm|no vm)\b", lowered):
        f["hardware.virtualized"] = False
    if re.search(r"iommu\s*=\s*pt|passthrough", lowered):
        f["hardware.iommu"] = "passthrough"
    elif re.search(r"iommu\s*(=\s*)?(off|aus)|intel_iommu=off|amd_iommu=off", lowered):
        f["hardware.iommu"] = "off"
    elif re.search(r"translated|intel_iommu=on|übersetz", lowered):
        f["hardware.iommu"] = "translated"
    if re.search(r"acs\W+(enabled|on|an|aktiv)|srcvalid\+", lowered):
        f["hardware.acs"] = "enabled"
    elif re.search(r"acs\W+(disabled|off|aus)", lowered):
        f["hardware.acs"] = "disabled"
    if re.search(r"p2p\W+(works|ok|funktioniert|geht)|peer.to.peer\W+(works|funktioniert)", lowered):
        f["hardware.p2p"] = "ok"
    elif re.search(r"(p2p|peer.to.peer)\W+(broken|fails|not supported|kaputt|geht nicht|defekt)|no p2p|kein p2p|\bns\b", lowered):
        f["hardware.p2p"] = "broken"
    if re.search(r"\bsglang\b", lowered):
        f["engine"] = "sglang"
    elif re.search(r"\bvllm\b", lowered):
        f["engine"] = "vllm"

    _names(raw, lowered, kb, out)
    if expecting and not f and not out.unsure:
        spec = kb.facts.get(expecting)
        _expected(lowered, spec.scenario if spec and spec.scenario else expecting, out)
    return out


def _names(raw: str, lowered: str, kb: Knowledge, out: Understood) -> None:
    """The model and the GPU (with a count) named in the text, fuzzy-matched with the numbers kept."""
    from rapidfuzz import fuzz, process

    from advisor.kb.knowledge import name_index, norm_name

    for kind, items, key in (("gpu", kb.gpus.values(), "hardware.gpu"), ("model", kb.models.values(), "model")):
        index = name_index(items)
        text = norm_name(lowered)
        best: tuple[float, str, str] | None = None
        for name, item_id in index.items():
            if len(name) < 3:
                continue
            digits = set(re.findall(r"\d+", name))
            if not digits <= set(re.findall(r"\d+", text)):
                continue
            score = fuzz.partial_ratio(name, text) if len(name) <= len(text) else fuzz.ratio(name, text)
            if score >= 90 and (best is None or (score, len(name)) > (best[0], len(best[1]))):
                best = (score, name, item_id)
        if best:
            out.fields[key] = item_id_name(kb, kind, best[2])
            if kind == "gpu":
                m = re.search(rf"(\d+)\s*(?:{GPUS})?\s*(?:x\s*)?[^\d]{{0,3}}{re.escape(best[1].split()[0])}", text)
                if m:
                    out.fields.setdefault("hardware.gpus_per_node", int(m.group(1)))
        elif kind == "model" and re.search(r"\b(l+ama|qwen|mistral|mixtral|deepseek|gpt|gemma|phi)", lowered):
            found = process.extract(text, list(index), scorer=fuzz.token_set_ratio, limit=3, score_cutoff=60)
            out.unsure["model"] = list(dict.fromkeys(kb.models[index[m]].name for m, _s, _i in found))


def item_id_name(kb: Knowledge, kind: str, item_id: str) -> str:
    """The catalogue name for an id, as scenarios spell it."""
    return kb.gpus[item_id].name if kind == "gpu" else kb.models[item_id].name


def _expected(lowered: str, path: str, out: Understood) -> None:
    """A bare answer ("60", "yes", "8k") to the question just asked, about the scenario field `path`."""
    m = re.fullmatch(r"\s*(?:about|circa|ca\.?|etwa|rund|~)?\s*(\d+(?:\.\d+)?\s*[km]?)\s*", lowered)
    yes = re.fullmatch(r"\s*(yes|ja|y|j|jawohl|sure|klar)\s*", lowered)
    no = re.fullmatch(r"\s*(no|nein|n|nope)\s*", lowered)
    counts = ("workload.concurrent_conversations", "hardware.gpus_per_node", "hardware.nodes", "workload.micro_batches",
              "workload.prompt_tokens", "workload.context_tokens")
    if path in counts and m:
        out.fields[path] = _count(m.group(1))
    elif path == "workload.memory_utilization" and m:
        out.fields[path] = float(m.group(1))
    elif path == "hardware.virtualized" and (yes or no):
        out.fields[path] = bool(yes)
    elif path == "hardware.p2p" and (yes or no):
        out.fields[path] = "ok" if yes else "broken"
    elif path == "hardware.acs" and (yes or no):
        out.fields[path] = "enabled" if yes else "disabled"
    elif path in ("hardware.iommu", "hardware.nvlink", "workload.goal", "precision", "kv_cache_dtype", "engine") and lowered.strip():
        out.fields[path] = lowered.strip()
