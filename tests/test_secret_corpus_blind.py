"""The blind secret corpora (tests/data/secrets-blind-1/ to -7/, see their PROVENANCE.md), kept as
regression tests: 159, 110, 183, 195, 183, 113 and 104 secret kinds seven reviewers wrote from vendors'
documentation, placed in logs, shell history, compose, Kubernetes, Terraform, systemd units, /etc configs,
source code, JSON, TOML, INI, HTTP and OAuth captures and chats in up to 15 languages, with 253, 236, 515,
495, 268, 107 and 147 harmless values beside them.
Pasted into a recorded chat or gathered by collect, no planted value reaches a written file and every
harmless value comes through unchanged, except what a corpus's open.yaml lists as still wrong."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from advisor import transcripts as t
from advisor.collect import redacted
from advisor.core.engine import Engine

DATA = Path(__file__).resolve().parent / "data"
# corpus: (files, secret kinds, harmless values) as its provenance states them
CORPORA = {
    "secrets-blind-1": (17, 159, 253),
    "secrets-blind-2": (19, 110, 236),
    "secrets-blind-3": (22, 183, 515),
    "secrets-blind-4": (22, 195, 495),
    "secrets-blind-5": (22, 183, 268),
    "secrets-blind-6": (27, 113, 107),
    "secrets-blind-7": (31, 104, 147),
    "secrets-blind-8": (36, 139, 166),
}
PLANTED: dict[str, dict[str, dict]] = {
    corpus: {k: v for k, v in yaml.safe_load((DATA / corpus / "planted.yaml").read_text()).items() if k != "sources"}
    for corpus in CORPORA
}
FILES = {corpus: {name: (DATA / corpus / name).read_text() for name in PLANTED[corpus]} for corpus in CORPORA}
# what a corpus's open.yaml says is still wrong: the kinds that leak, the harmless values that are masked
OPEN = {
    corpus: yaml.safe_load(f.read_text()) if (f := DATA / corpus / "open.yaml").exists() else {} for corpus in CORPORA
}


def _open_leaks(corpus: str) -> set[str]:
    return set((OPEN[corpus] or {}).get("leaked") or {})


def _open_masked(corpus: str) -> set[str]:
    return set((OPEN[corpus] or {}).get("masked") or [])


def _secrets(corpus: str, name: str) -> list[tuple[str, str]]:
    return [(kind, v) for kind, values in PLANTED[corpus][name]["secrets"].items() for v in values]


@pytest.mark.parametrize("corpus", sorted(CORPORA))
def test_the_corpus_holds_what_its_provenance_says(corpus):
    files, kinds_said, harmless = CORPORA[corpus]
    kinds = {kind for name in PLANTED[corpus] for kind, _v in _secrets(corpus, name)}
    assert len(PLANTED[corpus]) == files and len(kinds) == kinds_said
    assert sum(len(p.get("harmless", [])) for p in PLANTED[corpus].values()) == harmless
    for name, text in FILES[corpus].items():
        assert all(v in text for _k, v in _secrets(corpus, name))
        assert all(h in text for h in PLANTED[corpus][name].get("harmless", []))


@pytest.mark.parametrize("corpus", sorted(CORPORA))
def test_a_recorded_chat_of_every_file_carries_no_planted_value_and_every_harmless_one(tmp_path, corpus):
    rec = t.Recorder.start("chat", Engine.load(), tmp_path)
    for text in FILES[corpus].values():
        rec.turn(text, "Thanks, noted.")
    md, js = rec.close()
    written = {"md": md.read_text(), "json": js.read_text(), "journal": rec.path.read_text()}
    planted = PLANTED[corpus]
    leaks = {k for text in written.values() for n in planted for k, v in _secrets(corpus, n) if v in text}
    assert leaks == _open_leaks(corpus)
    said = [turn["said"] for turn in json.loads(written["json"])["turns"]]
    masked = {h for n, s in zip(planted, said, strict=True) for h in planted[n].get("harmless", []) if h not in s}
    assert masked == _open_masked(corpus)


@pytest.mark.parametrize(("corpus", "name"), [(c, n) for c in sorted(CORPORA) for n in sorted(PLANTED[c])])
def test_a_collect_bundle_of_the_file_carries_no_planted_value(corpus, name):
    clean = redacted({"files": {name: FILES[corpus][name]}, "steps": []})["files"][name]
    assert [k for k, v in _secrets(corpus, name) if v in clean and k not in _open_leaks(corpus)] == []
    masked = [h for h in PLANTED[corpus][name].get("harmless", []) if h not in clean]
    assert [h for h in masked if h not in _open_masked(corpus)] == []
