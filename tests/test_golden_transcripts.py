"""The golden transcripts in `transcripts/` replay unchanged: the consultations the advisor must keep
answering the same way (layout, figures, findings). A deliberate change of an answer means recording
them again with `python -m tests.golden` (see transcripts/README.md), so the diff shows the change."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.golden import CASES, FOLDER, record


def test_every_golden_transcript_is_a_recorded_case():
    on_disk = {p.stem for p in FOLDER.glob("*.json")}
    assert on_disk == {c.name for c in CASES}
    assert {p.stem for p in FOLDER.glob("*.md")} == on_disk | {"README"}
    kinds = {json.loads((FOLDER / f"{c.name}.json").read_text())["kind"] for c in CASES}
    langs = {json.loads((FOLDER / f"{c.name}.json").read_text())["lang"] for c in CASES}
    assert kinds == {"recommend", "audit", "chat"} and langs == {"en", "de"}


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_the_golden_transcript_replays_unchanged(cli, case):
    code, out, err = cli("replay", str(FOLDER / f"{case.name}.json"))
    assert code == 0 and out.startswith("no change"), (
        f"{case.name} answers differently now:\n{out}{err}\n"
        f"if the change is meant, record it again: python -m tests.golden {case.name}"
    )


def test_a_changed_figure_is_named_by_the_replay(cli, tmp_path):
    doc = json.loads((FOLDER / "recommend-seed-60-users-en.json").read_text())
    assert doc["result"]["figures"]["conversations"] == 83  # the seed article's TP 2 figure
    doc["result"]["figures"]["conversations"] = 84
    changed = tmp_path / "changed.json"
    changed.write_text(json.dumps(doc))
    code, out, _ = cli("replay", str(changed), "--fail-on-change")
    assert code == 1
    assert "figures changed: conversations 84 then, 83 now" in out


def test_a_ticket_reads_the_question_the_answer_and_the_launch_first():
    text = (FOLDER / "recommend-seed-60-users-en.md").read_text()
    summary = text[text.index("## Summary") : text.index("## Conversation")]
    assert "**Question:** Llama 3.3 70B Instruct · FP8 (KV FP8) · 2 × NVIDIA RTX PRO 6000" in summary
    assert "- Layout: **TP 2** — 2 GPUs per copy" in summary
    assert "| Conversations that fit | 83 |" in summary
    assert "vllm serve RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic --tensor-parallel-size 2" in summary
    assert "- **2 × 1 GPU** — why not: holds 28 conversations, 32 fewer than the 60 users" in summary
    assert "weights_gib" not in text  # words, not raw keys


def test_a_german_ticket_has_its_assumptions_and_alternatives_in_german():
    text = (FOLDER / "chat-qwen3-235b-h200-nvl-de.md").read_text()
    summary = text[text.index("## Zusammenfassung") : text.index("## Gesprächsverlauf")]
    assert "**Frage:** Qwen3-235B-A22B · FP8" in summary and "- Aufteilung: **TP 4** — 4 GPUs je Kopie" in summary
    assert "## Geprüfte Alternativen" in summary and "warum nicht:" in summary
    assert "## Annahmen" in summary and "nvlink = keine Verbindung" in summary and "sonst: bridge-4: TP 4" in summary
    for english in ("## Summary", "why not", "Alternatives considered", "Assumptions", "otherwise"):
        assert english not in text


def test_an_audit_ticket_names_the_finding_with_its_evidence_line():
    text = (FOLDER / "audit-esc8000a-pcie-link-de.md").read_text()
    summary = text[text.index("## Zusammenfassung") : text.index("## Gesprächsverlauf")]
    assert "(`audit-pcie-link-downgraded`)" in summary
    assert (
        "*Beleg:* `lspci_01_rtx6000ada_esc8000a_gpu_lnksta_2.5GT_downgraded_bar64G.txt:45: LnkSta: Speed 2.5GT/s"
        in summary
    )


def test_recording_a_case_again_gives_the_same_answer(tmp_path):
    """The re-record command reproduces the golden answer (only ids and times differ)."""
    case = next(c for c in CASES if c.name == "recommend-seed-20-users-en")
    fresh, _ = record(case, tmp_path)
    then = json.loads((FOLDER / f"{case.name}.json").read_text())["result"]
    now = json.loads(Path(fresh).read_text())["result"]
    assert now == then
