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


def _audit_json(cli, *paths: Path) -> tuple[int, dict[str, Any], str]:
    code, out, err = cli("audit", "--format", "json", *map(str, paths))
    assert "Traceback" not in err
    return code, (json.loads(out) if out.strip() else {}), err


def test_a_fifo_in_the_bundle_is_named_and_never_read(cli, tmp_path):
    import os

    bundle = tmp_path / "bundle"
    bundle.mkdir()
    (bundle / "smi.txt").write_bytes(REAL.read_bytes())
    os.mkfifo(bundle / "nvidia-smi-topo.txt")  # nobody writes to it: reading it would hang
    start = time.monotonic()
    code, report, _err = _audit_json(cli, bundle)
    assert time.monotonic() - start < LIMIT_S and code in (0, 1)
    assert any("nvidia-smi-topo.txt: a FIFO (named pipe), not a regular file" in p for p in report["problems"])
    code, _out, err = cli("audit", str(bundle / "nvidia-smi-topo.txt"))
    assert code == 2 and "FIFO" in err and err.count("\n") == 1


@pytest.mark.parametrize("special", ["/dev/zero", "/dev/urandom", "/proc/self/environ", "/proc/cpuinfo"])
def test_devices_and_proc_files_are_refused_before_reading(cli, special):
    if not Path(special).exists():
        pytest.skip(f"{special} not on this system")
    start = time.monotonic()
    code, _out, err = cli("audit", special)
    assert time.monotonic() - start < LIMIT_S
    assert code == 2 and err.count("\n") == 1
    assert "not a regular file" in err or "kernel pseudo-file" in err


def test_an_unreadable_file_and_folder_are_problems_in_every_format(cli, tmp_path, monkeypatch):
    import os

    bundle = tmp_path / "bundle"
    (bundle / "locked").mkdir(parents=True)
    (bundle / "smi.txt").write_bytes(REAL.read_bytes())
    (bundle / "dmesg.txt").write_text("[ 0.1] AMD-Vi: Found IOMMU at 0000:00:00.2\n")
    (bundle / "locked" / "topo.txt").write_text("never listed\n")
    real_open, real_scandir = os.open, os.scandir

    def refuse_open(path, *args, **kwargs):  # tests run as root too, where chmod 000 does not lock
        if str(path).endswith("dmesg.txt"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)

    def refuse_listing(path=".", *args, **kwargs):
        if str(path).endswith("locked"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", refuse_open)
    monkeypatch.setattr(os, "scandir", refuse_listing)
    code, report, _err = _audit_json(cli, bundle)
    assert code in (0, 1)
    problems = " | ".join(report["problems"])
    assert "dmesg.txt: cannot read: Permission denied" in problems
    assert "locked: folder cannot be read: Permission denied" in problems
    _code, text, _err = cli("audit", str(bundle))
    assert "dmesg.txt: cannot read: Permission denied" in text
    _code, sarif, _err = cli("audit", "--format", "sarif", str(bundle))
    notes = [n["message"]["text"] for n in json.loads(sarif)["runs"][0]["invocations"][0]["toolExecutionNotifications"]]
    assert any("locked: folder cannot be read" in n for n in notes)


def test_a_dangling_link_and_a_link_loop_are_named(cli, tmp_path):
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    (bundle / "smi.txt").write_bytes(REAL.read_bytes())
    (bundle / "gone.txt").symlink_to(tmp_path / "nowhere.txt")
    (bundle / "loop").symlink_to(bundle)  # a folder link is not followed: no endless walk
    code, report, _err = _audit_json(cli, bundle)
    assert code in (0, 1)
    assert any("gone.txt: cannot read" in p for p in report["problems"])


def test_a_folder_whose_files_change_while_it_is_read_is_audited(engine, tmp_path):
    import threading

    from advisor.audit import audit

    bundle = tmp_path / "bundle"
    bundle.mkdir()
    (bundle / "smi.txt").write_bytes(REAL.read_bytes())
    stop = threading.Event()

    def churn() -> None:  # a collector still writing: files appear, grow, shrink and vanish
        n = 0
        while not stop.is_set():
            n += 1
            f = bundle / f"log-{n % 7}.txt"
            try:
                f.write_text("NCCL INFO Channel 00 : 0[0] -> 1[1] via P2P/IPC\n" * (n % 50))
                if n % 3 == 0:
                    f.unlink()
            except OSError:
                pass

    worker = threading.Thread(target=churn)
    worker.start()
    try:
        for _ in range(10):
            result = audit(engine, [bundle])
            assert any(i.path.endswith("smi.txt") and i.kinds for i in result.inputs)
    finally:
        stop.set()
        worker.join()


def _hostile_bundle(folder: Path) -> Path:
    """A real capture next to an asymmetric topology, a manifest that is a list and a saved SARIF report."""
    folder.mkdir(parents=True)
    (folder / "smi.txt").write_bytes(REAL.read_bytes())
    for name in ("topo-asymmetric-link-counts.txt", "manifest-a-list.json", "report.sarif"):
        (folder / name).write_bytes((HOSTILE / name).read_bytes())
    return folder


def test_the_chat_audits_a_hostile_bundle(engine, tmp_path):
    from advisor.chat.dialogue import ChatSession

    folder = _hostile_bundle(tmp_path / "bundle")
    reply = ChatSession(engine).respond(f"/audit {folder}")
    assert "Traceback" not in reply.text and "⚠" not in reply.text.split("\n", 1)[0]
    assert "manifest-a-list.json" in reply.text


def test_a_fleet_audit_with_hostile_bundles_audits_every_bundle(cli, tmp_path):
    first = _hostile_bundle(tmp_path / "host-a")
    second = _hostile_bundle(tmp_path / "host-b")
    (second / "dmesg.txt").write_text("[ 0.1] AMD-Vi: Found IOMMU at 0000:00:00.2 cap 0x40\n")
    code, out, err = cli("audit", "--fleet", "--format", "json", str(first), str(second))
    assert code in (0, 1) and "Traceback" not in err
    items = json.loads(out)["bundles"]
    assert len(items) == 2 and all(i.get("error") is None for i in items)
