"""The hostile corpus (tests/data/hostile/*.yaml): every bad input a careless or hostile user gave the
advisor gets exit 2 and one line on stderr that names the problem, no traceback, within 5 s.

Each corpus file holds groups: a command (argv; `@@` is the case's value, `{dir}` a fresh folder; TOKENS
stand for values too long to write there),
files written into that folder (`@@` replaced by the value), optionally a copied rule or knowledge
folder with one text replaced, special files (a FIFO), and the cases: [value, what stderr must name].
A group with `exit: 0` is a stated, correct result instead: stdout names the value (and `stdout_also`); a
group with `report: true` runs `rules check`, which lists every problem of a rule or knowledge base on
stderr, a line each, then the count: one of the lines must name the problem.
The CLI runs in-process through `advisor.cli.main`, under an alarm so that a hang fails, not stalls.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from advisor.cli import main
from advisor.kb.paths import knowledge_dir, rules_dir

CORPUS = Path(__file__).parent / "data" / "hostile"
LIMIT_S = 5.0


# Stand-ins for values too long or too odd to write in the corpus itself.
TOKENS = {
    "<NUL>": "\x00",
    "<LONG>": "m" * 5000,
    "<DIGITS400>": "9" * 400,
    "<DIGITS5000>": "9" * 5000,
    "<DEEP>": "[" * 100_000 + "]" * 100_000,
}


class Hung(BaseException):
    """Raised by the alarm; a BaseException so that no `except Exception` in the CLI swallows it."""


def _cases() -> list[Any]:
    params = []
    for file in sorted(CORPUS.glob("*.yaml")):
        doc = yaml.safe_load(file.read_text(encoding="utf-8"))
        for group in doc["groups"]:
            for value, expected in group["cases"]:
                value = str(value)
                label = value if len(value) <= 40 else f"{value[:30]}...({len(value)})"
                params.append(pytest.param(group, value, expected, id=f"{file.stem}-{group['name']}-{label!r}"))
    return params


CASES = _cases()


def _expand(text: str, value: str, folder: Path) -> str:
    return text.replace("@@", value).replace("{dir}", str(folder))


def _copy_with(kind: str, spec: dict[str, Any], value: str, folder: Path) -> Path:
    """A copy of the rule or knowledge folder with one text replaced in one file."""
    source = rules_dir() if kind == "rules" else knowledge_dir()
    target = folder / kind
    shutil.copytree(source, target)
    path = target / spec["file"]
    text = path.read_text(encoding="utf-8")
    old, new = spec["replace"]
    assert old in text, f"{old!r} is not in {spec['file']}"
    path.write_text(text.replace(old, _expand(new, value, folder), 1), encoding="utf-8")
    return target


def run_case(group: dict[str, Any], value: str, folder: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str, str]:
    """Run one case through the CLI in-process; exit code, stdout, stderr."""
    for token, text in TOKENS.items():
        value = value.replace(token, text)
    for name, text in (group.get("files") or {}).items():
        (folder / name).write_text(_expand(text, value, folder), encoding="utf-8")
    for name in group.get("fifos") or []:
        os.mkfifo(folder / name)
    for kind in ("rules", "knowledge"):
        if kind in group:
            monkeypatch.setenv(f"ADVISOR_{kind.upper()}_DIR", str(_copy_with(kind, group[kind], value, folder)))
    args = [_expand(a, value, folder) for a in group["command"]]
    out, err = io.StringIO(), io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)
    monkeypatch.setattr(sys, "stdin", io.StringIO(_expand(group.get("stdin", ""), value, folder)))

    def hung(*_: Any) -> None:
        raise Hung()

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(int(LIMIT_S * 4))
    try:
        code = main(args)
    except SystemExit as exc:  # a usage error, as argparse ends one
        code = int(exc.code or 0)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize(("group", "value", "expected"), CASES)
def test_every_hostile_input_gets_one_clear_line_and_exit_2(group, value, expected, tmp_path, monkeypatch):
    started = time.perf_counter()
    code, out, err = run_case(group, value, tmp_path, monkeypatch)
    elapsed = time.perf_counter() - started
    assert "Traceback" not in err + out
    assert elapsed < LIMIT_S, f"took {elapsed:.1f} s"
    if group.get("report"):  # `rules check`: every problem on a line of its own, then the count
        assert code == 2, (out, err)
        lines = err.strip().splitlines()
        assert lines[-1].startswith("rules check: ") and "problem(s)" in lines[-1], err
        assert any(expected in line for line in lines[:-1]), err
    elif group.get("exit", 2) == 2:
        assert code == 2, (out, err)
        lines = err.strip().splitlines()
        assert len(lines) == 1, err
        assert lines[0].startswith("advisor: error: ")
        assert expected in lines[0]
    else:
        assert code == group["exit"], err
        assert expected in out and group.get("stdout_also", "") in out
    assert "Infinity" not in out and "NaN" not in out


def test_the_corpus_covers_every_input_kind_of_its_files():
    kinds = {c.values[0]["name"].split("-")[0] for c in CASES}
    assert {"deployment", "config", "flags", "scenario", "size", "layout", "collect", "chat", "rules"} <= kinds
    assert {"knowledge", "rules-selection", "chat-de"} <= {c.values[0]["name"].rsplit("-", 1)[0] for c in CASES} | kinds
    evidence = yaml.safe_load((CORPUS / "evidence" / "cases.yaml").read_text(encoding="utf-8"))
    transcripts = yaml.safe_load((CORPUS / "transcripts" / "expected.yaml").read_text(encoding="utf-8"))
    assert len(CASES) >= 450
    assert len(CASES) + len(evidence["cases"]) + len(transcripts) >= 600  # issue 17's bar, all three corpora


def test_every_catalogue_model_sits_inside_the_config_json_limits(engine):
    from advisor.inputs.modelconfig import LIMITS

    checked = 0
    for model in engine.kb.models.values():
        for key, spec in LIMITS.items():
            value = (model.config or {}).get(key)
            if value is not None:
                spec.check(value, key, model.id)
                checked += 1
    assert checked > 50


def test_an_accepted_finding_with_a_timestamp_expiry_counts_its_day(cli, tmp_path):
    plan = (
        "model: Llama 3.3 70B Instruct\nprecision: fp8\nhardware: {gpu: L40S, gpus_per_node: 4}\n"
        "deployment: {tp: 2, gpus: [0, 2]}\n"
        "accept:\n  - {rule: tp-over-pcie, reason: rack rewired next quarter, expires: 2099-01-01 10:00:00}\n"
    )
    (tmp_path / "deployment.yaml").write_text(plan, encoding="utf-8")
    code, out, err = cli("audit", str(tmp_path), "--format", "json", "--fail-on", "never")
    assert code == 0, err
    accepted = [f for f in json.loads(out)["findings"] if f["rule"] == "tp-over-pcie"]
    assert accepted and accepted[0]["suppressed"] == {"reason": "rack rewired next quarter", "expires": "2099-01-01"}


def test_json_output_is_json_even_for_an_unbounded_figure():
    from advisor.render.jsonout import finite

    doc = finite({"tokens_per_s": float("inf"), "items": [float("nan"), 1.5]})
    assert json.loads(json.dumps(doc, allow_nan=False)) == {"tokens_per_s": None, "items": [None, 1.5]}
