"""Transcripts for support tickets: recorded, redacted, recoverable after a kill, replayable."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from advisor import transcripts as t
from advisor.core.engine import Engine
from advisor.kb.paths import knowledge_dir, rules_dir
from advisor.redact import Redactor
from tests.evidence_data import verbatim

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "tests" / "data" / "scenario-rtx-pro-60-users.yaml"


def _record(cli, folder: Path, *extra: str) -> dict:
    code, _, err = cli("recommend", str(SCENARIO), "--record", "--transcripts", str(folder), *extra)
    assert code == 0 and "transcript recorded" in err
    return json.loads(next(folder.glob("*.json")).read_text())


def test_recommend_records_markdown_and_json(cli, tmp_path):
    doc = _record(cli, tmp_path)
    assert doc["schema"] == "advisor.transcript/1" and doc["complete"]
    assert doc["result"]["layout_label"] == "TP 2"
    assert "split-for-capacity" in doc["result"]["rules"] and "seed-002" in doc["result"]["sources"]
    assert len(doc["rule_hashes"]) == len(Engine.load().rules.rules)
    md = next(tmp_path.glob("*.md")).read_text()
    assert "**User:** advisor recommend" in md and "Layout: **TP 2**" in md


def test_replaying_an_unchanged_session_says_no_change(cli, tmp_path):
    _record(cli, tmp_path)
    code, out, _ = cli("replay", str(next(tmp_path.glob("*.json"))))
    assert code == 0 and out.startswith("no change")


def test_replay_names_the_rule_that_changed(cli, tmp_path, monkeypatch):
    _record(cli, tmp_path / "t")
    rules = tmp_path / "rules"
    shutil.copytree(rules_dir(), rules)
    p2p = rules / "p2p.yaml"
    p2p.write_text(
        p2p.read_text().replace(
            "when: workload_kind == 'inference' and tp > 1 and (tp_link == 'pcie' or tp_link == 'socket')\n",
            "when: workload_kind == 'inference' and tp > 1 and (tp_link == 'pcie' or tp_link == 'socket')"
            " and users > 100\n",
            1,
        )
    )
    monkeypatch.setenv("ADVISOR_RULES_DIR", str(rules))
    code, out, _ = cli("replay", str(next((tmp_path / "t").glob("*.json"))))
    assert code == 0  # a change is a report; 1 is audit --fail-on's (issue #25)
    assert "rules that no longer fire: tp-over-pcie" in out and "rules changed: tp-over-pcie" in out
    code, _out, _ = cli("replay", str(next((tmp_path / "t").glob("*.json"))), "--fail-on-change")
    assert code == 1


def test_two_transcripts_of_the_same_inputs_differ_only_in_timestamps_and_ids(cli, tmp_path):
    a = _record(cli, tmp_path / "a")
    b = _record(cli, tmp_path / "b")
    for doc in (a, b):
        for key in ("id", "started_at", "ended_at"):
            doc.pop(key)
        for turn in doc["turns"]:
            turn.pop("at")
            turn["said"] = turn["said"].replace(str(tmp_path / "a"), "X").replace(str(tmp_path / "b"), "X")
    assert a == b


def test_redaction_of_real_evidence_keeps_placeholders_stable():
    r = Redactor()
    topo = verbatim("topo_13_5xRTX50_epyc_1numa_node_phb_tabs.txt")
    smi = verbatim("smi_01_h800_hgx_nvidia_smi_q_i0.txt")
    launch = (
        "HF_TOKEN=hf_QwErTyUiOpAsDfGhJkLzXcVbNm123456 vllm serve meta-llama/Llama-3.3-70B-Instruct "
        "--tensor-parallel-size 2 --api-key sk-live-0123456789abcdefghij\n"
    )
    out = r.text(topo + smi + launch + "again: epyc and GPU-34bf77d1-c686-6821-79a8-32d326c5039c")
    assert "root@host-1" in out and "epyc" not in out
    assert "GPU-34bf77d1" not in out and "gpu-uuid-1" in out and out.count("gpu-uuid-1") == 2
    assert "1651323018291" not in out and "serial-1" in out
    assert "hf_QwErTy" not in out and "sk-live" not in out and "HF_TOKEN=secret-1" in out
    assert "meta-llama/Llama-3.3-70B-Instruct --tensor-parallel-size 2" in out  # what matters stays
    cmdline = r.text(verbatim("cmdline_04_ryzen_x570_amd_iommu_on_iommu_pt.txt"))
    assert "feada7a3-0ea8-461e-a256-3a6d514aefd8" not in cmdline and "root=UUID=uuid-1" in cmdline
    assert "amd_iommu=on iommu=pt" in cmdline


def test_chat_transcript_is_redacted_unless_asked_not_to(tmp_path):
    engine = Engine.load()
    rec = t.Recorder.start("chat", engine, tmp_path, redact=True)
    rec.turn("we run on gpu-node-7 (10.20.30.40), token hf_abcdefghijklmnopqrstuvw", "ok")
    rec.close()
    text = next(tmp_path.glob("*.journal")).read_text()
    assert "10.20.30.40" not in text and "hf_abcdef" not in text and "ip-1" in text
    raw = t.Recorder.start("chat", engine, tmp_path / "raw", redact=False)
    raw.turn("10.20.30.40", "ok")
    md, _ = raw.close()
    assert "10.20.30.40" in md.read_text() and "not redacted" in md.read_text()


def test_final_files_are_never_overwritten(tmp_path):
    path = tmp_path / "x.json"
    t.write_new(path, "one")
    with pytest.raises(t.TranscriptError):
        t.write_new(path, "two")
    assert path.read_text() == "one" and not list(tmp_path.glob(".*.tmp"))


def test_concurrent_sessions_in_one_folder_do_not_clobber(tmp_path):
    engine = Engine.load()
    recorders = [t.Recorder.start("chat", engine, tmp_path) for _ in range(8)]
    for i, rec in enumerate(recorders):
        rec.turn(f"turn of session {i}", "ok")
    for rec in recorders:
        rec.close()
    docs = [json.loads(p.read_text()) for p in tmp_path.glob("*.json")]
    assert len(docs) == 8 and len({d["id"] for d in docs}) == 8
    assert sorted(d["turns"][0]["said"] for d in docs) == sorted(f"turn of session {i}" for i in range(8))


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_read_only_folder_is_reported_and_the_session_goes_on(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    messages: list[str] = []
    rec = t.Recorder.start("chat", Engine.load(), folder, on_error=messages.append)
    rec.turn("hello", "ok")
    assert rec.failed and messages and "not recorded" in messages[0]


def test_unwritable_folder_is_reported_and_the_session_goes_on(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    messages: list[str] = []
    rec = t.Recorder.start("chat", Engine.load(), blocker / "transcripts", on_error=messages.append)
    rec.turn("hello", "ok")
    assert rec.close() is None
    assert messages and "transcript not recorded" in messages[0]


def test_a_chat_killed_mid_session_leaves_a_recoverable_transcript(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "advisor", "chat", "--plain", "--transcripts", str(tmp_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert proc.stdin and proc.stdout
    deadline = time.monotonic() + 60
    while not proc.stdout.readline().startswith("?") and time.monotonic() < deadline:
        pass  # the welcome, then the first question
    answers = ["llama 70b in fp8 with fp8 kv cache", "zwei RTX Pro 6000", "60 Nutzer"]
    for answer in answers:
        proc.stdin.write(answer + "\n")
        proc.stdin.flush()
        deadline = time.monotonic() + 30
        while not proc.stdout.readline().startswith("?") and time.monotonic() < deadline:
            pass
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    assert not list(tmp_path.glob("*.json"))
    from advisor.cli import main

    assert main(["transcripts", "recover", "--transcripts", str(tmp_path)]) == 0
    doc = json.loads(next(tmp_path.glob("*.json")).read_text())
    assert [turn["said"] for turn in doc["turns"]] == answers
    assert doc["complete"] is False and doc["result"]["layout_label"] == "TP 2"


def test_transcripts_list_show_export(cli, tmp_path):
    doc = _record(cli, tmp_path)
    code, out, _ = cli("transcripts", "list", "--transcripts", str(tmp_path))
    assert doc["id"] in out and "complete" in out
    code, out, _ = cli("transcripts", "show", doc["id"][:20], "--transcripts", str(tmp_path))
    assert out.startswith(f"# Advisor transcript {doc['id']}")
    code, out, _ = cli("transcripts", "export", doc["id"], "--format", "json", "--transcripts", str(tmp_path))
    assert json.loads(out)["id"] == doc["id"]


def test_knowledge_change_is_visible_in_the_hash(tmp_path):
    kb = tmp_path / "knowledge"
    shutil.copytree(knowledge_dir(), kb)
    (kb / "settings.yaml").write_text(
        (kb / "settings.yaml").read_text().replace("context_tokens: 8192", "context_tokens: 4096")
    )
    assert Engine.load(kb, rules_dir()).knowledge_hash != Engine.load().knowledge_hash


def test_a_full_disk_is_reported_and_the_consultation_goes_on(tmp_path, monkeypatch):
    import errno

    messages: list[str] = []
    rec = t.Recorder.start("chat", Engine.load(), tmp_path, on_error=messages.append)
    rec.turn("first", "ok")
    real_write = os.write

    def full(fd, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", full)
    rec.turn("second", "still answered")
    monkeypatch.setattr(os, "write", real_write)
    rec.turn("third", "still answered")
    assert messages == ["transcript stopped at turn 2: No space left on device"]
    assert [x["said"] for x in t.read_journal(rec.path)[1]] == ["first"]


def test_the_plain_chat_records_what_each_line_said(tmp_path):
    import io

    from advisor.chat import plain as plainchat

    answers = "llama 70b in fp8\ntwo RTX PRO 6000\nwhy\n60 users\nhow\n"
    plainchat.run(Engine.load(), "en", tmp_path, stdin=io.StringIO(answers), stdout=io.StringIO())
    doc = json.loads(next(tmp_path.glob("*.json")).read_text())
    understood = {turn["said"]: turn["understood"] for turn in doc["turns"]}
    assert understood["60 users"] == {"workload.concurrent_conversations": 60}
    assert understood["why"] == {} and understood["how"] == {}  # not the previous answer's facts again


def test_the_plain_chat_is_the_full_dialogue_in_plain_text(tmp_path):
    """A screen-reader user on `chat --plain` gets why-not, what-if and /set like the app, without Markdown marks."""
    import io

    from advisor.chat import plain as plainchat

    answers = (
        "llama 3.3 70b in fp8 with fp8 kv cache\n2 RTX PRO 6000\n60 users\n8k\n"
        "why not pp 2\nwhat if 20 users\n/set users 20\nquit\n"
    )
    out = io.StringIO()
    plainchat.run(Engine.load(), "en", tmp_path, stdin=io.StringIO(answers), stdout=out)
    text = out.getvalue()
    assert "**" not in text and "`" not in text
    assert "Recommendation: TP 2" in text
    assert "Why not PP 2?" in text and "| Layout | TP 2 | PP 2 |" in text
    assert "What if users = 20?" in text and "| Layout | TP 2 | 2 × 1 GPU |" in text
    assert text.rstrip().splitlines()[-2].startswith("? ")  # the open question closes the last reply
    doc = json.loads(next(tmp_path.glob("*.json")).read_text())
    assert [turn["said"] for turn in doc["turns"]][-2:] == ["what if 20 users", "/set users 20"]
    assert doc["result"]["layout_label"] == "2 × 1 GPU"


def test_a_german_session_gets_a_german_frame(tmp_path):
    rec = t.Recorder.start("chat", Engine.load(), tmp_path, lang="de")
    rec.turn("Llama 70B auf zwei RTX PRO 6000", "Wie viele Nutzer?")
    md, _ = rec.close()
    text = md.read_text()
    assert text.startswith("# Beratungsprotokoll ") and "Art: Chat" in text
    assert "**Nutzer:** Llama 70B" in text and "**Berater:** Wie viele Nutzer?" in text
    assert "unkenntlich gemacht" in text
    for english in ("Advisor transcript", "kind:", "**User:**", "**Advisor:**", "redacted", "rule base"):
        assert english not in text


AUDIT = ROOT / "tests" / "data" / "audit"


def test_an_audit_transcript_replays_without_the_bundle(cli, tmp_path, monkeypatch):
    files = [
        AUDIT / "smi_05_4xRTXPRO6000_query_gpu_csv_noheader.txt",
        AUDIT / "launch_02_vllm_docker_compose_command_list_tp2_device_ids.txt",
        AUDIT / "log_02_sglang_8xRTXPRO6000_custom_allreduce_disabled_pcie_only.txt",
    ]
    code, _, err = cli("audit", *map(str, files), "--record", "--transcripts", str(tmp_path / "t"))
    assert "transcript recorded" in err
    doc = json.loads(next((tmp_path / "t").glob("*.json")).read_text())
    facts = doc["result"]["replay"]["facts"]
    assert "failure-custom-allreduce-disabled-topology" in doc["result"]["rules"]
    assert any(f["evidence"] and f["evidence"]["file"] == files[2].name for f in facts.values())
    code, out, _ = cli("replay", str(next((tmp_path / "t").glob("*.json"))))
    assert code == 0 and out.startswith("no change")
    rules = tmp_path / "rules"
    shutil.copytree(rules_dir(), rules)
    changed = [p for p in rules.glob("*.yaml") if "id: shortest-topology-path\n" in p.read_text()]
    text = changed[0].read_text()
    head, tail = text.split("id: shortest-topology-path\n", 1)
    when = next(line for line in tail.splitlines() if line.strip().startswith("when:"))
    changed[0].write_text(head + "id: shortest-topology-path\n" + tail.replace(when, when + " and tp > 64", 1))
    monkeypatch.setenv("ADVISOR_RULES_DIR", str(rules))
    code, out, _ = cli("replay", str(next((tmp_path / "t").glob("*.json"))), "--fail-on-change")
    assert code == 1
    assert "rules that no longer fire: shortest-topology-path" in out
    assert "rules changed: shortest-topology-path" in out


def test_an_audit_of_a_catalogue_model_replays_through_the_same_judge(cli, tmp_path):
    """A plan naming the model and GPU beside a real topology: the deployment is evaluated, recorded, and
    replayed without the bundle to the same rules."""
    plan = tmp_path / "deployment.yaml"
    plan.write_text("model: llama 3.3 70b\nprecision: fp8\nhardware:\n  gpu: rtx 5090\ndeployment:\n  tp: 2\n")
    files = [plan, AUDIT / "topo_06_2xRTX5090_threadripper_phb_tabs.txt"]
    code, _, err = cli("audit", *map(str, files), "--record", "--transcripts", str(tmp_path / "t"))
    doc = json.loads(next((tmp_path / "t").glob("*.json")).read_text())
    assert doc["result"]["replay"]["scenario"]["model"] == "llama 3.3 70b"
    assert doc["result"]["replay"]["deployment"]["tp"] == 2
    code, out, _ = cli("replay", str(next((tmp_path / "t").glob("*.json"))))
    assert code == 0 and out.startswith("no change")


def test_diff_names_what_changed_between_two_consultations(cli):
    """A support engineer compares the 60-user and the 20-user consultation of the same customer."""
    code, out, _ = cli(
        "transcripts",
        "diff",
        "transcripts/recommend-seed-60-users-en.json",
        "transcripts/recommend-seed-20-users-en.json",
    )
    assert code == 0
    assert "inputs.workload.concurrent_conversations: 60 → 20" in out
    assert "layout: TP 2 → 2 × 1 GPU" in out
    assert "finding replicate-what-fits: – → fired" in out and "figures.conversations: 83 → 28" in out


def test_diff_of_a_consultation_in_two_languages_names_only_the_language(cli):
    code, out, _ = cli(
        "transcripts",
        "diff",
        "transcripts/recommend-seed-60-users-en.json",
        "transcripts/recommend-seed-60-users-de.json",
    )
    assert code == 0
    assert "lang: en → de" in out
    assert "layout:" not in out and "figures." not in out


def test_diff_needs_two_transcripts(cli):
    code, _, err = cli("transcripts", "diff", "transcripts/recommend-seed-60-users-en.json")
    assert code == 2 and "needs two transcripts" in err and "Traceback" not in err


@pytest.mark.parametrize("fails", ["fsync", "link"])
def test_a_full_disk_at_the_end_leaves_no_partial_file_that_the_list_calls_complete(cli, tmp_path, monkeypatch, fails):
    """The disk fills while the session closes and the final files cannot be written: no partial or
    temporary file stays behind, `transcripts list` does not call the session complete, and
    `transcripts recover` finishes it once there is room."""
    import errno

    messages: list[str] = []
    rec = t.Recorder.start("chat", Engine.load(), tmp_path, on_error=messages.append)
    rec.turn("Llama 70B on two RTX PRO 6000", "How many users?")

    def full(*_args):
        raise OSError(errno.ENOSPC, "No space left on device")

    with monkeypatch.context() as m:
        m.setattr(os, fails, full)
        assert rec.close() is None
    assert messages and "No space left on device" in messages[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == [rec.path.name]  # the journal only
    code, out, _ = cli("transcripts", "list", "--transcripts", str(tmp_path))
    assert code == 0 and "open (run `advisor transcripts recover`)" in out and "complete" not in out
    code, out, _ = cli("transcripts", "recover", "--transcripts", str(tmp_path))
    assert code == 0 and "recovered 1 transcript(s)" in out
    code, out, _ = cli("transcripts", "list", "--transcripts", str(tmp_path))
    assert out.rstrip().endswith(("complete", "recovered"))


def test_a_german_audit_transcript_has_no_english_frame():
    """The golden German audit as a ticket shows it: the frame above the conversation (summary, answer,
    severities, fix and evidence labels) is German; only rule ids, file names and evidence lines stay."""
    text = (ROOT / "transcripts" / "audit-esc8000a-pcie-link-de.md").read_text()
    frame = text.split("## Gesprächsverlauf")[0]
    assert "## Zusammenfassung" in frame and "**Antwort:** 1 Warnung" in frame and "- **Warnung** —" in frame
    for english in ("Summary", "Question", "Answer", "warning", "fix:", "evidence:", "kind:", "redacted", "rule base"):
        assert english not in frame, english
