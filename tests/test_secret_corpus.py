"""The planted-secret corpus (tests/data/secrets/): a customer's chat pastes in English and German, a
launch script, a Kubernetes manifest, `nvidia-smi -q` and an NCCL log, each with the identifiers and
secrets listed in planted.yaml. Whether pasted into a recorded chat or gathered by `advisor collect`,
none may reach what is written, and the GPU names and figures a ticket needs must come through."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from advisor import transcripts as t
from advisor.collect import redacted
from advisor.core.engine import Engine

CORPUS = Path(__file__).resolve().parent / "data" / "secrets"
PLANTED: dict[str, dict[str, list[str]]] = yaml.safe_load((CORPUS / "planted.yaml").read_text())


def _leaks(text: str, name: str) -> list[str]:
    """The planted secrets of `name` still in `text` (as a whole value, not inside a longer word)."""
    return [s for s in PLANTED[name]["secrets"] if re.search(r"(?<![\w.-])" + re.escape(s) + r"(?![\w-])", text)]


def _damaged(text: str, name: str) -> list[str]:
    """The technical lines of `name` that did not come through unchanged."""
    return [k for k in PLANTED[name]["kept"] if k not in text]


def test_the_corpus_plants_at_least_forty_secrets_each_in_its_file():
    assert {p.name for p in CORPUS.iterdir()} == {*PLANTED, "planted.yaml"}
    for name, plan in PLANTED.items():
        text = (CORPUS / name).read_text()
        assert all(isinstance(v, str) and v in text for v in plan["secrets"] + plan["kept"]), name
    assert sum(len(p["secrets"]) for p in PLANTED.values()) >= 40


def test_a_recorded_chat_carries_no_planted_secret_and_every_technical_line(cli, tmp_path):
    rec = t.Recorder.start("chat", Engine.load(), tmp_path)
    for name in PLANTED:
        rec.turn((CORPUS / name).read_text(), "Thanks, noted.")
    md, js = rec.close()
    code, exported, _ = cli(
        "transcripts", "export", rec.header["id"], "--format", "json", "--transcripts", str(tmp_path)
    )
    assert code == 0
    written = {"md": md.read_text(), "json": js.read_text(), "journal": rec.path.read_text(), "export": exported}
    said = {turn["said"].splitlines()[1]: turn["said"] for turn in json.loads(written["json"])["turns"]}
    leaks = [(kind, name, s) for kind, text in written.items() for name in PLANTED for s in _leaks(text, name)]
    damaged = [(name, k) for name in PLANTED for k in _damaged(said[(CORPUS / name).read_text().splitlines()[1]], name)]
    assert leaks == [] and damaged == []


@pytest.mark.parametrize("name", sorted(PLANTED))
def test_a_collect_bundle_carries_no_planted_secret(name):
    """`advisor collect` writes every file through the same redactor (advisor.collect.redacted)."""
    clean = redacted({"files": {name: (CORPUS / name).read_text()}, "steps": []})["files"][name]
    assert _leaks(clean, name) == []
    assert _damaged(clean, name) == []


def test_collect_redacts_what_the_tools_print_and_the_audit_still_reads_it(cli, tmp_path, monkeypatch):
    from tests.test_audit import _fake

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    _fake(bin_dir, "nvidia-smi", (CORPUS / "nvidia-smi-q.txt").read_text().split("\n", 2)[2])
    monkeypatch.setenv("PATH", str(bin_dir))
    code, _, _ = cli("collect", "-o", str(tmp_path / "bundle"))
    assert code == 0
    bundle = tmp_path / "bundle"
    manifest = json.loads((bundle / "manifest.json").read_text())
    assert manifest["redacted"] is True
    text = (bundle / "nvidia-smi-q.txt").read_text()
    assert _leaks(text, "nvidia-smi-q.txt") == [] and "NVIDIA H100 80GB HBM3" in text and "81559 MiB" in text
    code, out, _ = cli("audit", str(bundle), "--format", "json")
    assert json.loads(out)["facts"]["gpu"] == "NVIDIA H100 80GB HBM3"
    code, _, _ = cli("collect", "-o", str(tmp_path / "kept"), "--no-redact")
    assert "GPU-4c2e8a1f-7b3d-4e9a-a1c2-5f6e7d8c9b0a" in (tmp_path / "kept" / "nvidia-smi-q.txt").read_text()
    assert json.loads((tmp_path / "kept" / "manifest.json").read_text())["redacted"] is False
