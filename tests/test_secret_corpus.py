"""The planted-secret corpus (tests/data/secrets/): chat pastes in English and German, a support chat
log, a launch script, an env file, a compose file, Kubernetes manifests, a docker config, a Google Cloud
key file, shell history, `nvidia-smi -q` and an NCCL log, each with the identifiers and secrets listed
by kind in planted.yaml. Whether pasted into a recorded chat or gathered by `advisor collect`, none may
reach what is written, and the GPU names, figures and formula names a ticket needs must come through."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from advisor import transcripts as t
from advisor.collect import redacted
from advisor.core.engine import Engine
from advisor.redact import Redactor

CORPUS = Path(__file__).resolve().parent / "data" / "secrets"
PLANTED: dict[str, dict] = yaml.safe_load((CORPUS / "planted.yaml").read_text())
KINDS = 40  # issue 16: planted secrets of at least 40 kinds


def _secrets(name: str) -> list[tuple[str, str]]:
    """(kind, value) of every secret planted in `name`."""
    return [(kind, value) for kind, values in PLANTED[name]["secrets"].items() for value in values]


def _present(value: str, text: str) -> bool:
    """Whether `value` is still in `text`: a long value anywhere (a key body after a JSON "\\n"), a short
    one as a whole value, not inside a longer word or a placeholder."""
    if len(value) >= 16:
        return value in text
    return re.search(r"(?<![\w.-])" + re.escape(value) + r"(?![\w-])", text) is not None


def _tally(texts: dict[str, str]) -> tuple[dict[str, list[int]], list[str], list[tuple[str, str]]]:
    """Per kind [planted, leaked]; the leaks as 'file kind value'; the damaged kept lines (file, line)."""
    per_kind: dict[str, list[int]] = {}
    leaks, damaged = [], []
    for name, text in texts.items():
        for kind, value in _secrets(name):
            row = per_kind.setdefault(kind, [0, 0])
            row[0] += 1
            if _present(value, text):
                row[1] += 1
                leaks.append(f"{name} {kind} {value}")
        damaged += [(name, k) for k in PLANTED[name]["kept"] if k not in text]
    return per_kind, leaks, damaged


def _report(per_kind: dict[str, list[int]], damaged: list[tuple[str, str]]) -> str:
    kept = sum(len(p["kept"]) for p in PLANTED.values())
    rows = [f"{kind:32} planted {n:2}  leaked {leaked}" for kind, (n, leaked) in sorted(per_kind.items())]
    return "\n".join([*rows, f"{len(per_kind)} kinds; kept lines {kept}, damaged {len(damaged)}", *map(str, damaged)])


def test_the_corpus_plants_secrets_of_at_least_forty_kinds_each_in_its_file():
    assert {p.name for p in CORPUS.iterdir()} == {*PLANTED, "planted.yaml"}
    for name, plan in PLANTED.items():
        text = (CORPUS / name).read_text()
        assert all(v in text for _kind, v in _secrets(name)), name
        assert all(isinstance(k, str) and k in text for k in plan["kept"]), name
    kinds = {kind for name in PLANTED for kind, _v in _secrets(name)}
    assert len(kinds) >= KINDS, sorted(kinds)


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
    for kind, text in written.items():
        per_kind, leaks, _ = _tally(dict.fromkeys(PLANTED, text))
        assert leaks == [], (kind, leaks)
    # each pasted file is one turn: its technical lines come through in that turn's text unchanged
    said = {turn["said"].splitlines()[1]: turn["said"] for turn in json.loads(written["json"])["turns"]}
    turns = {name: said[(CORPUS / name).read_text().splitlines()[1]] for name in PLANTED}
    per_kind, leaks, damaged = _tally(turns)
    print("\n" + _report(per_kind, damaged))
    assert leaks == [] and damaged == [], _report(per_kind, damaged)
    assert len(per_kind) >= KINDS


@pytest.mark.parametrize("name", sorted(PLANTED))
def test_a_collect_bundle_carries_no_planted_secret(name):
    """`advisor collect` writes every file through the same redactor (advisor.collect.redacted)."""
    clean = redacted({"files": {name: (CORPUS / name).read_text()}, "steps": []})["files"][name]
    per_kind, leaks, damaged = _tally({name: clean})
    assert leaks == [] and damaged == [], _report(per_kind, damaged)


def test_formula_and_fact_names_come_through_untouched_wherever_they_are_written():
    """A ticket quotes the advisor's own names (allreduce_bytes_per_token, kv_cache_bytes_per_token,
    ttft_ms ...) as keys, flags, assignments and in prose: none is a credential or a host."""
    kb = Engine.load().kb
    names = sorted({*kb.facts, *kb.formulas})
    forms = ("{n}: 12.5", "{n}=3", "--{n} 4", '"{n}": 5', "the {n} is 6", "{n} = 2048 tokens", "{n}")
    text = "\n".join(form.format(n=n) for n in names for form in forms)
    redactor = Redactor()
    assert redactor.text(text) == text
    assert redactor.mapping == {}


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
    assert _tally({"nvidia-smi-q.txt": text})[1] == []
    assert "NVIDIA H100 80GB HBM3" in text and "81559 MiB" in text
    code, out, _ = cli("audit", str(bundle), "--format", "json")
    assert json.loads(out)["facts"]["gpu"] == "NVIDIA H100 80GB HBM3"
    code, _, _ = cli("collect", "-o", str(tmp_path / "kept"), "--no-redact")
    assert "GPU-4c2e8a1f-7b3d-4e9a-a1c2-5f6e7d8c9b0a" in (tmp_path / "kept" / "nvidia-smi-q.txt").read_text()
    assert json.loads((tmp_path / "kept" / "manifest.json").read_text())["redacted"] is False
