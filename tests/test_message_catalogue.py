"""`advisor audit` on the messages GPU software prints, as its own source prints them (knowledge/messages.yaml).

Each message's format string is the vocabulary: the audit must name its failure where the software printed
it, whatever values it printed, on a line cut short by a paste, and say nothing of one a specific failure
already explains. A pasted error block alone is evidence, not "no usable evidence".
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Container

import pytest

from advisor.inputs.evidence import failures as failure_reader
from advisor.kb import knowledge
from advisor.kb.signatures import PREFIX_LITERAL, from_format, literal_pieces, problem
from tests.evidence_data import AUDIT_DATA, bundle, verbatim

MESSAGES = knowledge.load_messages()
FAILURES = {f.id: f for f in knowledge.load().failures.values()}


def printed(fmt: str, shows: int = 0, avoid: Container[str] = ()) -> str:
    """What the software prints for a format (its line `shows`, else the first): every value filled in as a
    program would print it, never one of `avoid` (the values a branch of the source gives a cause of their own)."""
    out = []
    lines = fmt.splitlines() or [fmt]
    for text, conversion in literal_pieces(lines[shows - 1] if shows else lines[0]):
        out.append(text)
        if conversion:
            number = "7" if "7" not in avoid else "9"
            out.append(
                number if re.search(r"[diouxXcp]$", conversion) else "3.5" if conversion[-1] in "eEfFgG" else "ib0"
            )
    return "".join(out)


def _found(text: str) -> dict[str, object]:
    return failure_reader.parse(text, "engine.log").data


@pytest.mark.parametrize("message", MESSAGES, ids=lambda m: f"{m.source}:{m.locator}"[:90])
def test_each_message_names_its_failure_where_the_software_printed_it(message):
    # a log prefix before it, as NCCL, vLLM and the kernel write one
    line = "gpu-node07:1234:1290 [0] " + printed(message.format, message.shows, message.causes)
    found = _found("starting\n" + line + "\nnext line\n")
    assert f"failure_{message.cause.replace('-', '_')}" in found, (message.format, from_format(message.format))


@pytest.mark.parametrize("message", [m for m in MESSAGES if len(printed(m.format)) > PREFIX_LITERAL + 40][:25])
def test_a_message_cut_short_by_the_paste_still_names_its_failure(message):
    line = printed(message.format)
    cut = line[: line.index(message.format.splitlines()[0][:8]) + PREFIX_LITERAL + 30]  # a terminal's width
    assert f"failure_{message.cause.replace('-', '_')}" in _found(cut + "\n")


def test_every_message_has_a_pattern_that_runs_in_linear_time_and_a_failure_in_both_languages():
    for m in MESSAGES:
        assert m.pattern is not None and problem(m.pattern) is None, m.format
        failure = FAILURES[m.cause]
        assert failure.title.get("de") != failure.title.get("en") and failure.fix.get("de") != failure.fix.get("en")


def test_the_nccl_error_block_pasted_alone_is_recognised_and_points_at_dev_shm(cli):
    # production-stack #276: the traceback's NCCL block without the WARN line that says the space ran out
    code, out, _ = cli(
        "audit", str(AUDIT_DATA / "fail_31_nccl_shm_create_error_block_prodstack276.txt"), "--format", "json"
    )
    doc = json.loads(out)
    assert code == 1 and doc["input"][0]["kinds"] == ["known-failure"]
    rules = {f["rule"]: f for f in doc["findings"]}
    shm = rules["failure-nccl-shm-create-failed"]
    assert shm["severity"] == "error" and "/dev/shm" in shm["explanation"] and "--shm-size" in shm["fix"]
    assert "Error while creating shared memory segment" in shm["evidence"][0]["text"]
    assert any(s["id"] == "nccl-source" and s["locator"].startswith("src/os/linux.cc:") for s in shm["sources"])
    # the wrapped "unhandled system error" says no more than the segment line: it stays out of the way
    assert "failure-nccl-wrapped-error" not in rules


def test_a_failure_explained_better_by_another_is_not_reported(engine, tmp_path):
    from advisor.audit import audit

    nccl342 = verbatim("fail_01_nccl_shm_docker_4x2080_nccl273.txt")  # fallocate: No space left on device
    summary = "host:1:2 [0] NCCL WARN Error while creating shared memory segment /dev/shm/nccl-ab12 (size 9637888)\n"
    result = audit(engine, [bundle(tmp_path / "b", {"nccl.log": nccl342 + summary})])
    rules = {f.rule for f in result.findings}
    assert "failure-nccl-shm-too-small" in rules and "failure-nccl-shm-create-failed" not in rules
    alone = audit(engine, [bundle(tmp_path / "c", {"nccl.log": summary})])
    assert "failure-nccl-shm-create-failed" in {f.rule for f in alone.findings}


def test_a_megabyte_of_lines_that_start_like_a_message_is_read_in_seconds(tmp_path):
    # every anchor on every line, none of them going on as its message does
    anchors = sorted({failure_reader.anchor(m.pattern or "") for m in MESSAGES})
    line = " ".join(a + "x" * 3 for a in anchors)[:4000] + "\n"
    text = line * (1024 * 1024 // len(line))
    start = time.monotonic()
    failure_reader.parse(text, "big.log")
    assert time.monotonic() - start < 10.0
