"""Broken transcripts, as a careless copy or a hostile sender makes them (issue #17): `advisor replay`
and `advisor transcripts list/show/export/recover` answer with one line naming the problem and exit 2,
never a traceback or a hang. The cases are files under tests/data/hostile/transcripts/, each with the
text it must produce in tests/data/hostile/transcripts/expected.yaml."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

HOSTILE = Path(__file__).resolve().parent / "data" / "hostile"
EXPECTED: dict[str, str] = yaml.safe_load((HOSTILE / "transcripts" / "expected.yaml").read_text())
JSON_CASES = sorted(p for p in (HOSTILE / "transcripts").glob("*.json"))
JOURNAL_CASES = sorted(p for p in (HOSTILE / "transcripts").glob("*.journal"))


def test_every_case_says_what_it_must_produce():
    assert {p.name for p in (HOSTILE / "transcripts").iterdir()} - {"expected.yaml"} == set(EXPECTED)
    assert len(JSON_CASES) >= 10 and len(JOURNAL_CASES) >= 8


def _one_clear_line(code: int, out: str, err: str, expected: str) -> None:
    assert code == 2, (code, out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("advisor: error:"), err
    assert expected in lines[0] and "Traceback" not in out + err


@pytest.mark.parametrize("path", JSON_CASES, ids=lambda p: p.name)
def test_replay_refuses_a_broken_transcript_in_one_line(cli, path):
    code, out, err = cli("replay", str(path))
    _one_clear_line(code, out, err, EXPECTED[path.name])
    assert out == ""


@pytest.mark.parametrize("action", ["list", "show", "export", "recover"])
@pytest.mark.parametrize("path", JOURNAL_CASES, ids=lambda p: p.name)
def test_transcripts_commands_refuse_a_broken_journal_in_one_line(cli, tmp_path, path, action):
    shutil.copyfile(path, tmp_path / path.name)
    ident = [path.stem] if action in ("show", "export") else []
    code, out, err = cli("transcripts", action, *ident, "--transcripts", str(tmp_path))
    _one_clear_line(code, out, err, EXPECTED[path.name])
    assert not (tmp_path / path.with_suffix(".md").name).exists()  # recover wrote nothing half-made


def test_a_good_journal_beside_a_broken_one_is_still_listed(cli, tmp_path):
    from advisor.core.engine import Engine
    from advisor.transcripts import Recorder

    good = Recorder.start("chat", Engine.load(), tmp_path)
    good.turn("llama 70b on two rtx pro 6000", "How many users?")
    good.close()
    shutil.copyfile(HOSTILE / "transcripts" / "line-a-list.journal", tmp_path / "line-a-list.journal")
    code, out, err = cli("transcripts", "list", "--transcripts", str(tmp_path))
    assert code == 2 and good.header["id"] in out and "complete" in out
    assert "line-a-list.journal:3: journal record: expected an object, got a list" in err


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
@pytest.mark.parametrize(
    "command",
    [
        ["replay", "{fifo}"],
        ["transcripts", "list", "--transcripts", "{dir}"],
        ["transcripts", "show", "x", "--transcripts", "{dir}"],
    ],
)
def test_a_fifo_is_refused_without_hanging(tmp_path, command):
    """Nobody writes to the FIFO: reading it would block for ever."""
    fifo = tmp_path / "x.journal"
    os.mkfifo(fifo)
    argv = [a.format(fifo=fifo, dir=tmp_path) for a in command]
    done = subprocess.run(
        [sys.executable, "-m", "advisor", *argv], capture_output=True, text=True, timeout=30, check=False
    )
    _one_clear_line(done.returncode, done.stdout, done.stderr, "not a regular file")
