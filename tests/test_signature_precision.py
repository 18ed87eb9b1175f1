"""A catalogue signature names a cause only on the line that tells that cause from its look-alikes.

nccl-shm-too-small used to match "Error while creating shared memory segment" and ncclShmOpen, which
follow any failure to open a /dev/shm segment: a real capture where shm_open was refused (Permission
denied, fixed by chmod on /dev/shm, NVIDIA/nccl #328) was told to enlarge /dev/shm. Now only the lines
that say the space ran out name it, and every real capture of a full /dev/shm is still named.

torch-master-port-in-use used to match "failed to listen on any local network address" alone, which
torch prints for any refused bind: a real capture with errno 13 on port 98 (a privileged port,
Time-LLM #158) was told another job held the port. Now the bind's own reason (EADDRINUSE, errno 98)
must stand on the line, in the new torch format and in the old one alike.
"""

from __future__ import annotations

import json

import pytest

from tests.evidence_data import AUDIT_DATA


def _failures(cli, name: str) -> dict[str, dict]:
    _code, out, _ = cli("audit", str(AUDIT_DATA / name), "--format", "json")
    return {f["rule"]: f for f in json.loads(out)["findings"] if f["rule"].startswith("failure-")}


def test_a_segment_refused_for_permission_is_not_called_a_small_dev_shm(cli):
    found = _failures(cli, "fail_32_nccl328_shm_open_permission_denied_chmod.txt")
    assert "failure-nccl-shm-too-small" not in found
    _code, out, _ = cli("audit", str(AUDIT_DATA / "fail_32_nccl328_shm_open_permission_denied_chmod.txt"))
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


def test_a_refused_privileged_port_is_not_called_a_port_in_use(cli):
    code, out, err = cli("audit", str(AUDIT_DATA / "quiet_02_timellm158_torch_port_98_permission_denied.txt"))
    assert "torch-master-port-in-use" not in out + err
    assert code == 2 and "not recognised" in err  # the advisor knows no cause for it, and says so


@pytest.mark.parametrize(
    ("name", "line"),
    [
        ("held_19_dlrover443_torch_port_in_use_errno98.txt", "errno: 98 - Address already in use"),
        ("fail_20_torch_master_port_29500_in_use.txt", "EADDRINUSE"),
        ("held_12_msswift_port_29500.txt", "EADDRINUSE"),
    ],
)
def test_a_port_in_use_is_still_named_in_the_old_and_new_torch_format(cli, name, line):
    found = _failures(cli, name)
    assert list(found) == ["failure-torch-master-port-in-use"]
    (evidence,) = found["failure-torch-master-port-in-use"]["evidence"]
    assert line in evidence["text"] and "MASTER_PORT" in found["failure-torch-master-port-in-use"]["fix"]
