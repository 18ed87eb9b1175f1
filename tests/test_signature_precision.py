"""A catalogue signature names a cause only on the line that tells that cause from its look-alikes.

nccl-shm-too-small used to match "Error while creating shared memory segment" and ncclShmOpen, which
follow any failure to open a /dev/shm segment: a real capture where shm_open was refused (Permission
denied, fixed by chmod on /dev/shm, NVIDIA/nccl #328) was told to enlarge /dev/shm. Now only the lines
that say the space ran out name it, and every real capture of a full /dev/shm is still named.
"""

from __future__ import annotations

import json

import pytest

from tests.evidence_data import AUDIT_DATA


def _failures(cli, name: str) -> dict[str, dict]:
    _code, out, _ = cli("audit", str(AUDIT_DATA / name), "--format", "json")
    return {f["rule"]: f for f in json.loads(out)["findings"] if f["rule"].startswith("failure-")}


def test_a_segment_refused_for_permission_is_not_called_a_small_dev_shm(cli):
    found = _failures(cli, "quiet_01_nccl328_shm_open_permission_denied_chmod.txt")
    assert "failure-nccl-shm-too-small" not in found
    _code, out, _ = cli("audit", str(AUDIT_DATA / "quiet_01_nccl328_shm_open_permission_denied_chmod.txt"))
    assert "--shm-size" not in out


@pytest.mark.parametrize(
    ("name", "line"),
    [
        ("held_18_nccltests166_shm_extend_failed_8gpu.txt", "failed to extend /dev/shm/nccl-fjwOOB"),
        ("fail_01_nccl_shm_docker_4x2080_nccl273.txt", "posix_fallocate failed"),
        ("held_01_pytorch_nccl273_shm_posix_fallocate.txt", "posix_fallocate failed : No space"),
    ],
)
def test_a_full_dev_shm_is_still_named_with_the_line_that_says_so(cli, name, line):
    found = _failures(cli, name)
    assert list(found) == ["failure-nccl-shm-too-small"]
    (evidence,) = found["failure-nccl-shm-too-small"]["evidence"]
    assert line in evidence["text"] and "--shm-size" in found["failure-nccl-shm-too-small"]["fix"]


def test_a_missing_peer_segment_keeps_its_own_cause(cli):
    assert list(_failures(cli, "fail_28_nccl_shm_attach_missing_segment.txt")) == ["failure-nccl-shm-attach-failed"]
