"""A careless or hostile evidence bundle: every file of tests/data/hostile/evidence/ audited alone and next
to a real capture. No traceback, no hang (5 s each), the file's problem named in what the user sees (the
one error line, or the JSON report's problems and the file's notes), and the real capture still audited.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from advisor.yamlio import loads
from tests.evidence_data import AUDIT_DATA

HOSTILE = Path(__file__).parent / "data" / "hostile" / "evidence"
CASES: list[dict[str, Any]] = loads((HOSTILE / "cases.yaml").read_text(encoding="utf-8"), "cases.yaml")["cases"]
REAL = AUDIT_DATA / "smi_07_2xH100NVL_nvidia_smi_q_gpu0_minor4.txt"
LIMIT_S = 5.0


def _said_about(report: dict[str, Any], file: Path) -> str:
    """Everything the JSON report says about one input file: its kinds, notes and problems."""
    entry = next(i for i in report["input"] if Path(i["file"]).name == file.name)
    problems = [p for p in report["problems"] if file.name in p]
    return " | ".join([*entry["kinds"], *entry["notes"], *problems])


def test_the_corpus_is_large_and_every_file_is_listed():
    listed = {c["file"] for c in CASES}
    on_disk = {p.name for p in HOSTILE.iterdir() if p.name not in ("cases.yaml", "README.md")}
    assert listed == on_disk
    assert len(CASES) >= 80


@pytest.mark.parametrize("case", CASES, ids=[c["file"] for c in CASES])
def test_a_hostile_file_alone_gets_a_clear_answer_in_time(cli, case):
    path = HOSTILE / case["file"]
    start = time.monotonic()
    code, out, err = cli("audit", "--format", "json", str(path))
    took = time.monotonic() - start
    assert took < LIMIT_S, f"{case['file']}: {took:.1f} s"
    assert "Traceback" not in err
    says = str(case.get("says") or "").lower()
    if code == 2:
        assert "kind" not in case, f"{case['file']} must be read as {case['kind']}: {err}"
        assert err.count("\n") == 1 and err.startswith("advisor: error:"), err
        assert case["file"] in err and says in err.lower(), err
        return
    assert code in (0, 1), (code, err)
    said = _said_about(json.loads(out), path)
    if "kind" in case:
        assert case["kind"] in said.split(" | "), said
    assert says in said.lower(), said


@pytest.mark.parametrize("case", CASES, ids=[c["file"] for c in CASES])
def test_a_hostile_file_in_a_bundle_costs_only_itself(cli, case):
    path = HOSTILE / case["file"]
    start = time.monotonic()
    code, out, err = cli("audit", "--format", "json", str(REAL), str(path))
    assert time.monotonic() - start < LIMIT_S
    assert code in (0, 1), err
    report = json.loads(out)
    assert "nvidia-smi-q" in _said_about(report, REAL)  # the real capture is still audited
    said = _said_about(report, path).lower()
    assert str(case.get("says") or "").lower() in said
    if "kind" in case:
        assert case["kind"] in said
