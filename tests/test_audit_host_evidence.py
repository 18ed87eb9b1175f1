"""`advisor audit` on host evidence that speaks for itself: a kernel log of IOMMU faults, lspci's ACS bits, an env
file, a topology cut short by the paste, an engine launch whose switches matter on PCIe. Each finding must
come from the evidence alone where no model is given, say what it rests on, and stay quiet where the
evidence says the opposite.

Every capture is real machine output under tests/data/audit (its header names the public thread); the
launches and plans are what a customer writes around them.
"""

from __future__ import annotations

import json

import pytest

from tests.evidence_data import bundle, verbatim

AMDVI_FAULTS = "dmesg_02_3x1080Ti_x399_amdvi_io_page_fault_p2p.txt"
ACS_REDIRECT = "lspci_04_nccl629_acsctl_redirect_on_some_bridges_tabs.txt"
ACS_SRCVALID = "lspci_03_amd_switch_grep_acsctl_srcvalid_plus_nccl_hang.txt"
ENV_FILE = "env_01_localinference262_nccl_p2p_level_sys_custom_nccl.txt"
RTX4090_QUADS = "topo_19_8xRTX4090_2socket_pix_quads_sys_bond_nic.txt"
L40S_TWO_SOCKETS = "topo_04_4xL40S_2socket_node_sys_nic_spaces.txt"
RTX5090_PHB = "topo_06_2xRTX5090_threadripper_phb_tabs.txt"


def audit_folder(cli, tmp_path, files: dict[str, str], lang: str = "en") -> dict:
    folder = bundle(tmp_path / "case", files)
    _code, out, _ = cli("audit", str(folder), "--format", "json", "--lang", lang)
    return json.loads(out)


def rules(doc: dict) -> dict[str, dict]:
    return {f["rule"]: f for f in doc["findings"]}


def test_iommu_faults_on_a_gpu_say_the_iommu_dropped_its_dma(cli, tmp_path):
    doc = audit_folder(cli, tmp_path, {"dmesg.txt": verbatim(AMDVI_FAULTS)})
    found = rules(doc)["audit-iommu-faults-on-gpu-dma"]
    assert found["severity"] == "warning" and "9 IOMMU page faults" in found["explanation"]
    assert "iommu=pt" in found["fix"] and "IO_PAGE_FAULT" in found["evidence"][0]["text"]
    assert doc["p2p"]["*"]["state"] == "broken"  # every pair: the faults name no peer
    german = rules(audit_folder(cli, tmp_path / "de", {"dmesg.txt": verbatim(AMDVI_FAULTS)}, "de"))
    assert "Page-Faults" in german["audit-iommu-faults-on-gpu-dma"]["title"]


def test_acs_redirect_bits_are_counted_and_source_validation_is_told_apart(cli, tmp_path):
    redirect = rules(audit_folder(cli, tmp_path / "a", {"lspci.txt": verbatim(ACS_REDIRECT)}))
    found = redirect["audit-acs-redirect-on-bridges"]
    assert "4 PCIe bridges" in found["explanation"] and "ReqRedir+" in found["evidence"][0]["text"]
    assert "audit-acs-source-validation-on-bridges" not in redirect
    only_srcvalid = rules(audit_folder(cli, tmp_path / "b", {"lspci.txt": verbatim(ACS_SRCVALID)}))
    assert "SrcValid+" in only_srcvalid["audit-acs-source-validation-on-bridges"]["explanation"]
    assert "audit-acs-redirect-on-bridges" not in only_srcvalid


def test_an_env_file_alone_is_read_and_the_unchecked_host_is_said(cli, tmp_path):
    plan = (
        "model: Llama 3.3 70B Instruct\nprecision: fp8\nhardware: {gpu: RTX PRO 6000, gpus_per_node: 4}\n"
        "workload: {concurrent_conversations: 32, context_tokens: 8192}\ndeployment: {engine: vllm, tp: 4}\n"
    )
    doc = audit_folder(cli, tmp_path, {"stack.env": verbatim(ENV_FILE), "deployment.yaml": plan})
    kinds = {i["file"].rsplit("/", 1)[-1]: i["kinds"] for i in doc["input"]}
    assert kinds["stack.env"] == ["environment"]
    assert doc["facts"]["nccl_p2p_level"] == "SYS" and doc["facts"]["nccl_library_override"].endswith("2.30.4")
    unchecked = rules(doc)["audit-pcie-p2p-host-unchecked"]
    assert unchecked["severity"] == "advice" and "IOMMU" in unchecked["explanation"]
    assert "/proc/cmdline" in unchecked["fix"]


def test_a_topology_cut_after_its_first_row_still_shows_the_group_crosses_the_sockets(cli, tmp_path):
    # nccl-tests #307's 8x RTX 4090 matrix as a paste cut inside its second row: GPU0 PIX to 1-3, SYS to 4-7
    lines = verbatim(RTX4090_QUADS).split("\n")
    cut = "\n".join(lines[:2] + ["GPU1\tPIX\t X "]) + "\n"
    launch = (
        "CUDA_VISIBLE_DEVICES=1,2,3,4 python -m sglang.launch_server --model-path Qwen/Qwen3-32B --tp 4 --port 8001\n"
    )
    plan = "hardware: {gpu: RTX 4090, gpus_per_node: 8}\n"
    doc = audit_folder(cli, tmp_path, {"topo.txt": cut, "run.sh": launch, "deployment.yaml": plan})
    assert doc["facts"]["tp_path_worst"] == "SYS"  # GPU1-GPU4: GPU1 shares GPU0's switch, GPU0 reaches GPU4 over SYS
    notes = " ".join(n for i in doc["input"] for n in i["notes"])
    assert "paths the paste does not show" in notes and "GPU1-GPU4 SYS" in notes
    found = rules(doc)
    assert "0,1,2,3" in found["audit-tp-group-on-slow-path"]["fix"]
    assert "--enable-p2p-check" in found["audit-sglang-tp-without-p2p-check"]["fix"]


def test_tp_across_two_sockets_names_the_split_that_stays_inside_one(cli, tmp_path):
    launch = "vllm serve meta-llama/Llama-3.3-70B-Instruct --tensor-parallel-size 4 --quantization fp8\n"
    doc = audit_folder(cli, tmp_path, {"topo.txt": verbatim(L40S_TWO_SOCKETS), "run.sh": launch})
    found = rules(doc)["audit-tp-group-crosses-sockets-split"]
    assert "TP 2 × PP 2" in found["title"]
    assert "--tensor-parallel-size 2 --pipeline-parallel-size 2" in found["fix"]
    assert "audit-tp-group-crosses-sockets" not in rules(doc)


def test_vllm_tp2_over_pcie_points_at_its_custom_all_reduce_until_the_launch_turns_it_off(cli, tmp_path):
    launch = "vllm serve Qwen/Qwen3-8B --tensor-parallel-size 2\n"
    doc = audit_folder(cli, tmp_path / "on", {"topo.txt": verbatim(RTX5090_PHB), "run.sh": launch})
    assert doc["facts"]["custom_allreduce_disabled"] is False
    assert "--disable-custom-all-reduce" in rules(doc)["audit-custom-allreduce-over-pcie"]["fix"]
    off = audit_folder(
        cli,
        tmp_path / "off",
        {"topo.txt": verbatim(RTX5090_PHB), "run.sh": launch.rstrip() + " --disable-custom-all-reduce\n"},
    )
    assert "audit-custom-allreduce-over-pcie" not in rules(off)


def test_a_compose_entrypoint_string_with_a_multiline_command_is_one_launch(cli, tmp_path):
    compose = (
        "services:\n  sglang:\n    image: lmsysorg/sglang:latest\n    entrypoint: python3 -m sglang.launch_server\n"
        "    command:\n      --model-path /models/Meta-Llama-3.1-8B-Instruct\n      --host 0.0.0.0\n      --tp 8\n"
        "    ipc: host\n"
    )
    doc = audit_folder(cli, tmp_path, {"docker-compose.yml": compose})
    assert doc["facts"]["deployment"]["tp"] == 8 and doc["facts"]["engine"] == "sglang"


def test_tp_over_pcie_in_a_vm_is_flagged_without_a_model(cli, tmp_path):
    plan = "hardware: {gpu: A10, gpus_per_node: 2, virtualized: true}\ndeployment: {engine: vllm, tp: 2}\n"
    doc = audit_folder(cli, tmp_path, {"topo.txt": verbatim(RTX5090_PHB), "deployment.yaml": plan})
    vm = rules(doc)["tp-over-pcie-in-vm"]
    assert vm["severity"] == "warning" and "TP 2" in vm["explanation"]


def test_ibstat_gives_the_rate_of_the_fastest_active_port(engine):
    # a down port's rate (10) is no link: the active 200 Gb/s port is the node's
    from advisor.inputs.evidence.ibstat import IBSTAT, ibstat_facts

    text = verbatim("ibstat_2_cx6_one_down.txt")
    assert IBSTAT.recognise(text)
    parsed = IBSTAT.parse(text, "ibstat.txt")
    read = {c.target: c.value for c in ibstat_facts(parsed)}
    assert read["hardware.node_link_gbps"] == 200.0
    assert read["fact:rdma_ports_active"] == 1 and read["fact:rdma_ports_down"] == "mlx5_1:1 Down/Disabled"


def test_a_port_that_is_down_beside_an_active_one_is_named_as_advice(cli, tmp_path):
    doc = audit_folder(cli, tmp_path, {"ibstat.txt": verbatim("ibstat_2_cx6_one_down.txt")})
    down = rules(doc)["audit-rdma-ports-down"]
    assert down["severity"] == "advice" and "mlx5_1:1 Down/Disabled" in down["title"]
    assert down["evidence"][0]["text"] == "State: Down"


def test_the_nvidia_smi_table_names_and_counts_the_gpus_it_shows(engine):
    from advisor.inputs.evidence.smi import gpu_facts as table_facts
    from advisor.inputs.evidence.smitable import TABLE

    text = verbatim("smi_table_2xh100_gpuburn114.txt")
    assert TABLE.recognise(text)
    facts = {c.target: c.value for c in table_facts(TABLE.parse(text, "nvidia-smi.txt"))}
    assert facts == {"hardware.gpu": "NVIDIA H100 80GB HBM3", "hardware.gpus_per_node": 2}


def test_nvidia_smi_l_names_the_gpu_and_counts_no_mig_device_as_a_gpu(cli, tmp_path):
    doc = audit_folder(cli, tmp_path, {"gpus.txt": verbatim("smi_list_a100_mig_guide.txt")})
    assert doc["input"][0]["kinds"] == ["nvidia-smi-list"]
    assert doc["facts"]["gpu"] == "A100-SXM4-40GB" and doc["facts"]["gpus_per_node"] == 1


def test_vllms_non_default_args_line_gives_the_launch_it_describes(engine):
    from advisor.inputs.evidence.engineargs import ARGS, args_facts

    text = verbatim("vllm_nondefault_args_pr24162.txt")
    assert ARGS.recognise(text)
    facts = {c.target: c.value for c in args_facts(ARGS.parse(text, "vllm.log"))}
    assert facts["engine"] == "vllm" and facts["deployment.tp"] == 2
    assert facts["model"] == "/data/datasets/models-hf/Qwen2.5-0.5B/"


def test_a_docker_run_of_nvidia_smi_alone_is_not_asked_for_shared_memory(cli, tmp_path):
    doc = audit_folder(cli, tmp_path, {"docker.txt": verbatim("blind4_docker_no_gpu_device_driver.txt")})
    found = rules(doc)
    assert "audit-container-small-shm" not in found
    assert "nvidia-ctk runtime configure" in found["failure-docker-no-gpu-runtime"]["fix"]


def test_a_paste_that_elides_the_nccl_tests_rows_is_not_taken_for_a_hang(cli, tmp_path):
    doc = audit_folder(cli, tmp_path, {"paste.txt": verbatim("blind5_healthy_p2p_slower_amd.txt")})
    assert "audit-nccl-tests-stalled-on-one-host" not in rules(doc)
    assert not [f["rule"] for f in doc["findings"] if f["severity"] in ("warning", "error")]


def test_nvcc_beside_nvidia_smi_says_which_cuda_each_one_means(cli, tmp_path):
    doc = audit_folder(
        cli, tmp_path, {"paste.txt": verbatim("blind2_c12_azhpcimages343_toolkit_newer_than_driver.txt")}
    )
    newer = rules(doc)["audit-cuda-toolkit-newer-minor-than-driver"]
    assert newer["severity"] == "advice" and "(12.4)" in newer["title"] and "(12.2)" in newer["title"]
    assert "error 222" in newer["explanation"]


def test_an_unlicensed_vgpu_in_an_nvidia_smi_q_excerpt_is_named(cli, tmp_path):
    doc = audit_folder(cli, tmp_path, {"paste.txt": verbatim("blind5_vgpu_unlicensed.txt")})
    found = rules(doc)["audit-vgpu-unlicensed"]
    assert found["severity"] == "warning" and "License Status" in found["evidence"][0]["text"]
    assert "nvidia-gridd" in found["fix"]


@pytest.mark.parametrize(
    "capture", ["smi_01_h800_hgx_nvidia_smi_q_i0.txt", "smi_07_2xH100NVL_nvidia_smi_q_gpu0_minor4.txt"]
)
def test_healthy_clock_reasons_and_remapped_rows_raise_nothing(cli, tmp_path, capture):
    found = rules(audit_folder(cli, tmp_path, {"q.txt": verbatim(capture)}))
    assert not {"audit-gpu-hardware-slowdown", "audit-gpu-row-remap", "audit-gpu-row-remap-failed"} & set(found)
