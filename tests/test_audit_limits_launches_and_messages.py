"""A support engineer pastes what a reporter pasted: a daemon's resource limits, a shell's `ulimit -a`,
the kernel's refusal of a GPU by the open module, the GPU Operator's driver container log, a run of
NCCL 1's tests that stopped, MPI launches and NCCL's connections, and the errors of UCX, Docker,
nvidia-docker, Gloo and Slurm. Every paste is a real capture of
tests/data/audit (its header names the machine and the public thread)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.evidence_data import verbatim


def _audit(cli, tmp_path: Path, text: str) -> tuple[int, dict, str]:
    paste = tmp_path / "paste.txt"
    paste.write_text(text, encoding="utf-8")
    code, out, err = cli("audit", str(paste), "--format", "json")
    return code, (json.loads(out) if out.strip() else {}), err


def _finding(result: dict, rule: str) -> dict:
    found = [f for f in result["findings"] if f["rule"] == rule]
    assert found, [f["rule"] for f in result["findings"]]
    return found[0]


def test_slurmd_with_a_64_kib_memlock_limit_is_named_with_its_number(cli, tmp_path):
    # /proc/<slurmd>/limits on a TrinityX compute node (clustervision/trinityX#188)
    code, result, _ = _audit(cli, tmp_path, verbatim("blind10_trinityx_188_slurmd_memlock.txt"))
    assert code == 0  # a warning: the audit itself ran
    limited = _finding(result, "audit-memlock-limited")
    assert limited["severity"] == "warning"
    assert "64 KiB" in limited["title"] and "LimitMEMLOCK=infinity" in limited["fix"]
    assert "limits" in result["input"][0]["kinds"]


def test_ulimit_a_of_an_mpi_job_gives_the_limit_beside_the_ucx_error(cli, tmp_path):
    # UCX's ibv_create_cq ENOMEM and the job's ulimit -a (openucx/ucx#8229)
    code, result, _ = _audit(cli, tmp_path, verbatim("blind9_p_ib_memlock_ulimit_64k.txt"))
    rules = {f["rule"] for f in result["findings"]}
    assert {"failure-rdma-memlock-limit", "audit-memlock-limited"} <= rules
    assert "64 KiB" in _finding(result, "audit-memlock-limited")["title"]


def test_an_unlimited_memlock_raises_nothing(cli, tmp_path):
    # the same job's ulimit -a with its one limit line as a raised limit prints it: the rest is unchanged
    text = verbatim("blind9_p_ib_memlock_ulimit_64k.txt")
    ulimit = text[text.index("ulimit -a") :]
    raised = "\n".join(
        "max locked memory       (kbytes, -l) unlimited" if line.startswith("max locked memory") else line
        for line in ulimit.split("\n")
    )
    code, result, _ = _audit(cli, tmp_path, raised)
    assert code == 0
    assert "audit-memlock-limited" not in {f["rule"] for f in result["findings"]}


def test_a_pascal_card_refused_by_the_open_module_is_named(cli, tmp_path):
    # Tesla P4 under TrueNAS's R580 open nvidia.ko (zzzhouuu/truenas-nvidia-drivers#20)
    code, result, _ = _audit(cli, tmp_path, verbatim("blind10_truenas_20_p4_open_kmod.txt"))
    gsp = _finding(result, "failure-open-module-needs-gsp")
    assert gsp["severity"] == "error" and "proprietary" in gsp["fix"]


def test_the_first_line_of_the_refusal_alone_names_no_cause(cli, tmp_path):
    # that line starts the "not supported by the NVIDIA %s driver release" message too
    first = next(line for line in verbatim("blind10_truenas_20_p4_open_kmod.txt").split("\n") if "PCI ID" in line)
    code, result, err = _audit(cli, tmp_path, first + "\n")
    rules = {f["rule"] for f in result.get("findings", [])}
    assert "failure-open-module-needs-gsp" not in rules, err


def test_the_driver_container_that_cannot_unload_the_host_driver(cli, tmp_path):
    # GPU Operator driver pod on a host with cuda-drivers-fabricmanager-460 (NVIDIA/gpu-operator#163)
    code, result, _ = _audit(cli, tmp_path, verbatim("blind10_gpuoperator_163_host_driver_fm.txt"))
    loaded = _finding(result, "failure-driver-container-host-driver-loaded")
    assert "driver.enabled=false" in loaded["fix"] and "nvidia-fabricmanager" in loaded["fix"]


def test_nccl_1_tests_on_eight_m40s_that_stop_after_the_header(cli, tmp_path):
    # NCCL 1's all_reduce test on 8 Tesla M40, which hung until ACS was disabled (NVIDIA/nccl#104)
    code, result, _ = _audit(cli, tmp_path, verbatim("blind10_nccl_104_m40_acs_stall.txt"))
    stalled = _finding(result, "audit-nccl-tests-stalled-on-one-host")
    assert "8 GPUs" in stalled["title"] and "ACS" in stalled["explanation"]


def test_a_quoted_paste_is_read_as_the_output_it_quotes(cli, tmp_path):
    # the same limits line quoted as a mail or forum reply quotes it
    quoted = "\n".join("> " + line for line in verbatim("blind10_trinityx_188_slurmd_memlock.txt").split("\n"))
    code, result, _ = _audit(cli, tmp_path, quoted)
    assert "audit-memlock-limited" in {f["rule"] for f in result["findings"]}
    assert any("quoted paste" in n for n in result["input"][0]["notes"])


def test_two_hosts_one_rank_each_yet_nccl_connects_them_over_ipc(cli, tmp_path):
    # horovod on two machines both named mtk: mpirun -H a:1,b:1 and "0 -> 1 via P2P/IPC" (horovod/horovod#110)
    code, result, _ = _audit(cli, tmp_path, verbatim("blind10_horovod_110_same_hostname_ipc.txt"))
    one = _finding(result, "audit-nccl-hosts-taken-for-one")
    assert "2 different hosts" in one["title"] and "hostname" in one["fix"]


def test_one_mpi_launch_that_printed_two_summaries_was_built_without_mpi(cli, tmp_path):
    # mpirun -np 2 over two hosts, two "Avg bus bandwidth" lines of the same figure (NVIDIA/nccl-tests#27)
    code, result, _ = _audit(cli, tmp_path, verbatim("blind10_nccltests_27_not_built_with_mpi.txt"))
    alone = _finding(result, "audit-nccl-tests-without-mpi")
    assert "printed 2 results" in alone["title"] and "MPI=1" in alone["fix"]


def test_a_network_connection_without_gdrdma_beside_one_with_it(cli, tmp_path):
    # send via NET/IB/0/GDRDMA, receive via NET/IB/1: one node lacked nvidia-peermem (NVIDIA/nccl#897)
    code, result, _ = _audit(cli, tmp_path, verbatim("blind10_nccl_897_gdr_one_node.txt"))
    mixed = _finding(result, "audit-gdr-on-some-connections-only")
    assert "nvidia-peermem" in mixed["explanation"]


def test_efa_that_cannot_insert_the_peer_address_points_at_the_security_group(cli, tmp_path):
    # aws-ofi-nccl 1.11 on EFA instances whose security group lacked the outbound rule (aws/aws-ofi-nccl#663)
    code, result, _ = _audit(cli, tmp_path, verbatim("blind10_awsofinccl_663_efa_sg_outbound.txt"))
    av = _finding(result, "failure-ofi-av-insert-failed")
    assert "security group" in av["explanation"] and "outbound" in av["fix"]


def test_ollama_cuinit_802_on_an_nvswitch_h200_names_the_fabric_manager(cli, tmp_path):
    # ollama's "cuda driver library init failure: 802" on an 8x H200 board (ollama/ollama#9031)
    code, result, _ = _audit(cli, tmp_path, verbatim("blind10_ollama_9031_h200_802_fabricmanager.txt"))
    rules = {f["rule"] for f in result["findings"]}
    assert "failure-cuda-802-fabric-manager" in rules


def test_a_bus_error_in_nccl_inside_a_container_points_at_dev_shm(cli, tmp_path):
    # UCX's "Caught signal 7 (Bus error: nonexistent physical address)" in ncclGroupEnd (msr-fiddle/pipedream#76)
    code, result, _ = _audit(cli, tmp_path, verbatim("blind11_pipedream76.txt"))
    bus = _finding(result, "failure-shm-bus-error")
    assert "/dev/shm" in bus["explanation"] and "--shm-size" in bus["fix"]


def test_a_container_restarted_after_a_driver_change_misses_its_device_node(cli, tmp_path):
    # lstat /dev/nvidia-uvm-tools at docker start (NVIDIA/nvidia-docker#145)
    code, result, _ = _audit(cli, tmp_path, verbatim("blind11_nvdocker145.txt"))
    missing = _finding(result, "failure-container-device-missing")
    assert "recreate the container" in missing["fix"]


def test_nvidia_docker_1_without_uvm_then_with_a_driver_too_old_for_the_image(cli, tmp_path):
    # "Could not load UVM kernel module", then "driver 7.0 < image 7.5" (NVIDIA/nvidia-docker#106)
    code, result, _ = _audit(cli, tmp_path, verbatim("blind11_nvdocker106.txt"))
    rules = {f["rule"] for f in result["findings"]}
    assert {"failure-uvm-module-not-loaded", "failure-container-cuda-requirement"} <= rules


def test_gloo_refused_at_a_loopback_peer_address(cli, tmp_path):
    # gloo's connect [127.0.1.1]:3210 on two nodes whose host name resolves to 127.0.1.1 (pytorch/pytorch#15592)
    code, result, _ = _audit(cli, tmp_path, verbatim("blind11_pt15592.txt"))
    loop = _finding(result, "failure-gloo-loopback-fallback")
    assert "GLOO_SOCKET_IFNAME" in loop["fix"]


def test_slurmd_that_cannot_stat_its_gres_device_file(cli, tmp_path):
    # slurmd's "can't stat gres.conf file /dev/nvidia0" on a BiBiGrid worker (BiBiServ/bibigrid#705)
    code, result, _ = _audit(cli, tmp_path, verbatim("blind11_bibigrid705.txt"))
    gres = _finding(result, "failure-slurm-gres-file-missing")
    assert "gres.conf" in gres["fix"]


def test_nccl_tests_devices_with_the_host_name_blanked_are_still_read(cli, tmp_path):
    # "Rank 0 Group 0 Pid 4349 on        device 0 [0x01] NVIDIA A100 80GB PCIe" (NVIDIA/nccl#841)
    code, result, _ = _audit(cli, tmp_path, verbatim("blind11_nccl841.txt"))
    assert "nccl-tests" in result["input"][0]["kinds"]
    assert "A100 80GB PCIe" in json.dumps(result["facts"])


def test_more_ranks_than_listed_slots_share_hosts_and_raise_nothing(cli, tmp_path):
    # the horovod launch of the same thread with four ranks on its two hosts: two per host may use P2P/IPC
    text = verbatim("blind10_horovod_110_same_hostname_ipc.txt").replace("mpirun -np 2 -H", "mpirun -np 4 -H")
    code, result, _ = _audit(cli, tmp_path, text)
    assert "audit-nccl-hosts-taken-for-one" not in {f["rule"] for f in result["findings"]}
