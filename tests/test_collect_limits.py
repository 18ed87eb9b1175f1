"""`advisor collect` on a bad day: an output folder it cannot use, tools that hang, spew or answer with
garbage. One line and exit 2 for the folder; for the tools, one deadline for all, a cap on each, no
process left behind, and no "NVIDIA GPUs found" without a GPU matrix."""

from __future__ import annotations

import errno
import json
import os
import time
from pathlib import Path

import pytest

from advisor import files
from advisor.collect import Limits, collect
from tests.evidence_data import verbatim


def _tool(bin_dir: Path, name: str, body: str) -> None:
    script = bin_dir / name
    script.write_text("#!/bin/sh\n" + body + "\n", encoding="utf-8")
    script.chmod(0o755)


def _alive(pid: int) -> bool:
    """A process that still runs (a zombie waiting for its reaper has ended)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


@pytest.mark.parametrize(
    ("where", "says"),
    [
        ("file/bundle", "is a file: no folder can be made under it"),
        ("/proc/bundle", "a kernel pseudo-file system"),
        ("x" * 256, "longer than 255 bytes"),
        ("taken.txt", "is a file, not a folder"),
    ],
)
def test_an_output_folder_that_cannot_be_made_is_one_line(cli, tmp_path, monkeypatch, where, says):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "file").write_text("a file where a folder would go\n")
    (tmp_path / "taken.txt").write_text("x\n")
    code, out, err = cli("collect", "-o", where)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("advisor: error:") and says in err, err


def test_a_read_only_place_and_a_full_disk_are_one_line(cli, tmp_path, monkeypatch):
    empty = tmp_path / "nothing"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))

    def read_only(self, *args, **kwargs):  # tests may run as root, for whom no folder is read-only
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(self))

    with monkeypatch.context() as m:
        m.setattr(Path, "mkdir", read_only)
        code, _out, err = cli("collect", "-o", str(tmp_path / "bundle"))
    assert code == 2 and err.count("\n") == 1 and "Read-only file system" in err

    real_write = files._write_all

    def full(fd, data):  # the disk fills up half-way through the manifest
        if data.startswith(b'{\n  "schema"'):
            real_write(fd, data[: len(data) // 2])
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    monkeypatch.setattr(files, "_write_all", full)
    code, _out, err = cli("collect", "-o", str(tmp_path / "bundle2"))
    assert code == 2 and err.count("\n") == 1
    assert "cannot write manifest.json: No space left on device" in err
    left = sorted(p.name for p in (tmp_path / "bundle2").iterdir())
    assert "manifest.json" not in left and not [n for n in left if n.endswith(".tmp")]  # no truncated manifest


def test_seven_hung_tools_share_one_deadline_and_leave_no_process(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    pids = tmp_path / "pids"
    for name in ("nvidia-smi", "lspci", "dmesg"):  # each starts a child that would outlive it, then hangs
        _tool(bin_dir, name, f"sleep 300 &\necho $! >> '{pids}'\nsleep 300")
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    start = time.monotonic()
    manifest = collect(tmp_path / "bundle", Limits(timeout_s=1.0, deadline_s=3.0))
    took = time.monotonic() - start
    assert took < 8, took  # seven hung tools once took 210 s
    steps = [s for s in manifest["steps"] if s["command"].split()[0] in ("nvidia-smi", "lspci", "dmesg")]
    assert len(steps) == 7 and {s["status"] for s in steps} == {"timeout"}
    assert any("were spent" in s["detail"] for s in steps)  # the deadline, not seven times the limit
    children = [int(p) for p in pids.read_text().split()]
    time.sleep(0.2)
    assert children and not [p for p in children if _alive(p)]
    assert manifest["nvidia_gpus"] is False


def test_a_tool_that_never_stops_talking_is_cut_at_the_cap(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    _tool(bin_dir, "lspci", "exec yes 'LnkSta: Speed 8GT/s, Width x16'")
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    manifest = collect(tmp_path / "bundle", Limits(timeout_s=20, deadline_s=30, cap=1024 * 1024))
    step = next(s for s in manifest["steps"] if s["command"].startswith("lspci"))
    assert step["status"] == "ok" and "output cut at 1 MiB" in step["detail"]
    assert (tmp_path / "bundle" / "lspci.txt").stat().st_size <= 1024 * 1024 + 4096


def test_random_bytes_from_nvidia_smi_are_not_gpus(cli, tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    noise = bin_dir / "noise"
    noise.write_bytes(os.urandom(4096))
    _tool(bin_dir, "nvidia-smi", f"cat '{noise}'")
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    code, out, _err = cli("collect", "-o", str(tmp_path / "bundle"))
    assert code == 0 and "NVIDIA GPUs found" not in out
    manifest = json.loads((tmp_path / "bundle" / "manifest.json").read_text())
    assert manifest["nvidia_gpus"] is False
    assert manifest["summary"] == "no NVIDIA GPU evidence: the output is not a GPU matrix (topo -m)"


def test_a_real_matrix_still_counts_as_gpus(cli, tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    matrix = bin_dir / "topo.out"
    matrix.write_text(verbatim("topo_04_4xL40S_2socket_node_sys_nic_spaces.txt").split("\n", 1)[1])
    _tool(bin_dir, "nvidia-smi", f"cat '{matrix}'")
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    code, out, _err = cli("collect", "-o", str(tmp_path / "bundle"))
    assert code == 0 and "NVIDIA GPUs found" in out
