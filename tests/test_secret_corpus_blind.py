"""The first blind secret corpus (tests/data/secrets-blind-1/, see its PROVENANCE.md), kept as a regression
test: 159 secret kinds a reviewer wrote from vendors' documentation, placed in logs, shell history, compose,
Kubernetes, JSON, TOML, INI, HTTP dumps and chats in English and German, and 253 harmless values beside
them. Pasted into a recorded chat or gathered by collect, no planted value reaches a written file, and
every harmless value comes through unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from advisor import transcripts as t
from advisor.collect import redacted
from advisor.core.engine import Engine

CORPUS = Path(__file__).resolve().parent / "data" / "secrets-blind-1"
PLANTED: dict[str, dict] = {
    k: v for k, v in yaml.safe_load((CORPUS / "planted.yaml").read_text()).items() if k != "sources"
}
FILES = {name: (CORPUS / name).read_text() for name in PLANTED}


def _secrets(name: str) -> list[tuple[str, str]]:
    return [(kind, v) for kind, values in PLANTED[name]["secrets"].items() for v in values]


def test_the_corpus_holds_what_its_provenance_says():
    kinds = {kind for name in PLANTED for kind, _v in _secrets(name)}
    assert len(PLANTED) == 17 and len(kinds) == 159
    assert sum(len(p.get("harmless", [])) for p in PLANTED.values()) == 253
    for name, text in FILES.items():
        assert all(v in text for _k, v in _secrets(name)) and all(h in text for h in PLANTED[name].get("harmless", []))


def test_a_recorded_chat_of_every_file_carries_no_planted_value_and_every_harmless_one(tmp_path):
    rec = t.Recorder.start("chat", Engine.load(), tmp_path)
    for text in FILES.values():
        rec.turn(text, "Thanks, noted.")
    md, js = rec.close()
    written = {"md": md.read_text(), "json": js.read_text(), "journal": rec.path.read_text()}
    leaks = [(w, n, k) for w, text in written.items() for n in PLANTED for k, v in _secrets(n) if v in text]
    assert leaks == []
    said = [turn["said"] for turn in json.loads(written["json"])["turns"]]
    masked = [(n, h) for n, s in zip(PLANTED, said, strict=True) for h in PLANTED[n].get("harmless", []) if h not in s]
    assert masked == []


@pytest.mark.parametrize("name", sorted(PLANTED))
def test_a_collect_bundle_of_the_file_carries_no_planted_value(name):
    clean = redacted({"files": {name: FILES[name]}, "steps": []})["files"][name]
    assert [k for k, v in _secrets(name) if v in clean] == []
    assert [h for h in PLANTED[name].get("harmless", []) if h not in clean] == []
