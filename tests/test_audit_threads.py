"""`advisor audit` on what real support threads send: host evidence with a launch line whose model the
catalogue may not hold. The host checks run on what the evidence shows; an unknown model is named as
unknown, never read as another one; NCCL's P2P settings are read as NCCL reads them.

Every file is a real capture under tests/data/audit (its header names the public thread); a bundle
puts together what one support case holds (the host's outputs and the launch the customer pasted).
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.evidence_data import AUDIT_DATA, bundle, verbatim

ACS_ON = "lspci_03_amd_switch_grep_acsctl_srcvalid_plus_nccl_hang.txt"
AMDVI_FAULTS = "dmesg_02_3x1080Ti_x399_amdvi_io_page_fault_p2p.txt"
RTX_PRO_SMI = "smi_05_4xRTXPRO6000_query_gpu_csv_noheader.txt"
L40S_SMI = "smi_06_2xL40S_sr665v3_query_gpu_csv.txt"
H800_SMI = "smi_01_h800_hgx_nvidia_smi_q_i0.txt"
H100_NVL_SMI = "smi_07_2xH100NVL_nvidia_smi_q_gpu0_minor4.txt"
RTX4090_ALLREDUCE = "nccl_07_4xRTX4090_pcie_allreduce_25.9GBs_indented_truncated.txt"
QWEN2_72B_GPTQ_TP4 = "launch_03_vllm_k8s_deployment_args_tp4_truncated.txt"
QWEN15_7B_TP2_P2P_OFF = "launch_01_vllm_docker_run_2x4090_tp2_nccl_p2p_disable.txt"
QWEN3_VL_235B_TP8 = "launch_04_vllm_api_server_tp8_expert_parallel_typo_flag.txt"
QWQ_32B_DP4_TP2 = "launch_10_sglang_docker_dp4_tp2_8gpu_duplicate_flag.txt"
DEEPSEEK_R1_SERVED = "launch_07_vllm_serve_tp8_pp2_2x8xH20.txt"
DEEPSEEK_R1_PATH_P2P_NVL = "launch_08_vllm_serve_tp32_multinode_nccl_env_messy_continuations.txt"
NCCL_LEVEL_LOC_LOG = "log_09_nccl_p2p_disable_level_loc_warn_no_path_2gpu_phb.txt"
TWO_GPUS_NV12 = "topo_10_2gpu_nv12_slice_8x_mlx5_lmdeploy_check_env.txt"
TWO_RTX5090_PHB = "topo_06_2xRTX5090_threadripper_phb_tabs.txt"


def audit_json(cli, *names: str) -> tuple[int, dict]:
    code, out, _ = cli("audit", *(str(AUDIT_DATA / n) for n in names), "--format", "json")
    return code, json.loads(out)


def rules(doc: dict) -> dict[str, dict]:
    return {f["rule"]: f for f in doc["findings"]}


# --- host checks need no catalogue model ----------------------------------------------------------


def test_acs_on_the_bridges_is_found_while_the_model_is_not_in_the_catalogue(cli):
    # NCCL #606: ACS left on (SrcValid+) and the test hangs; the launch serves a GPTQ Qwen2 72B
    code, doc = audit_json(cli, ACS_ON, RTX_PRO_SMI, QWEN2_72B_GPTQ_TP4)
    acs = rules(doc)["acs-redirects-p2p"]
    assert acs["severity"] == "warning"
    assert any("ACSCtl: SrcValid+" in e["text"] for e in acs["evidence"])
    assert doc["facts"]["model"] == "Qwen/Qwen2-72B-Instruct-GPTQ-Int4"
    assert any("is not in the catalogue" in p and "Qwen2-72B-Instruct-GPTQ-Int4" in p for p in doc["problems"])
    # the fit and split checks wait for the model, and say so
    assert "model-needs-split" not in rules(doc)
    model = next(u for u in doc["unknowns"] if u["fact"] == "model")
    assert "model-needs-split" in model["rules"]
    assert code == 0


def test_amd_vi_page_faults_flag_the_translating_iommu_for_tp_over_pcie(cli):
    # cuda-samples #48: AMD-Vi IO_PAGE_FAULT during P2P copies; here under a TP 2 launch on two L40S
    _, doc = audit_json(cli, AMDVI_FAULTS, L40S_SMI, QWEN15_7B_TP2_P2P_OFF)
    iommu = rules(doc)["audit-iommu-faults-on-gpu-dma"]  # the faults themselves, not only the mode
    assert iommu["severity"] == "warning"
    assert any("IO_PAGE_FAULT" in e["text"] for e in iommu["evidence"])
    assert "iommu=pt" in iommu["fix"]


def test_geforce_cards_without_p2p_are_named_for_a_tp_launch_without_a_known_model(cli):
    # vLLM #3710: TP 2 on GeForce RTX 4090s; the all_reduce_perf capture names the card
    _, doc = audit_json(cli, RTX4090_ALLREDUCE, QWEN15_7B_TP2_P2P_OFF)
    assert doc["facts"]["gpu"] == "NVIDIA GeForce RTX 4090"
    assert rules(doc)["gpu-without-pcie-p2p"]["title"] == "rtx-4090 has no PCIe peer-to-peer"
    # a rule whose words need the model's figures is not half-written: it waits for the model
    assert "tp-over-pcie" not in rules(doc)


def test_german_reader_gets_the_host_finding_in_german(cli):
    code, out, _ = cli(
        "audit",
        str(AUDIT_DATA / ACS_ON),
        str(AUDIT_DATA / RTX_PRO_SMI),
        str(AUDIT_DATA / QWEN2_72B_GPTQ_TP4),
        "--lang",
        "de",
    )
    assert "ACS auf dem PCIe-Pfad zwischen GPUs aktiv" in out
    assert code == 0


# --- unknown models are not swapped ---------------------------------------------------------------


def test_qwq_is_not_read_as_qwen3(cli):
    code, doc = audit_json(cli, L40S_SMI, QWQ_32B_DP4_TP2)
    assert doc["facts"]["model"] == "Qwen/QwQ-32B"
    assert any("'Qwen/QwQ-32B' is not in the catalogue" in p for p in doc["problems"])
    assert all(f["severity"] != "error" for f in doc["findings"])
    assert code == 0


def test_a_vision_model_is_not_read_as_its_text_sibling_and_claims_no_fit(cli):
    code, out, _ = cli("audit", str(AUDIT_DATA / H800_SMI), str(AUDIT_DATA / QWEN3_VL_235B_TP8))
    header = out.splitlines()[0]
    assert "model Qwen/Qwen3-VL-235B-A22B-Instruct" in header
    assert "0 error" in header
    assert "is not in the catalogue" in out
    assert "does not fit" not in out
    assert code == 0


def test_a_served_model_name_or_a_local_paths_last_part_still_finds_the_catalogue_model(cli):
    _, served = audit_json(cli, H100_NVL_SMI, DEEPSEEK_R1_SERVED)  # vllm serve /model --served-model-name DeepSeek-R1
    _, path = audit_json(cli, H100_NVL_SMI, DEEPSEEK_R1_PATH_P2P_NVL)  # vllm serve /app/DeepSeek-R1
    for doc in (served, path):
        assert doc["facts"]["model"] == "DeepSeek-R1"
        assert not any("not in the catalogue" in p for p in doc["problems"])
        assert "model-needs-split" in rules(doc)  # the deployment is evaluated with the model


# --- evidence read right --------------------------------------------------------------------------


def test_nccl_p2p_level_is_read_from_the_launch_and_from_the_nccl_log(cli):
    _, launch = audit_json(cli, DEEPSEEK_R1_PATH_P2P_NVL)
    assert (launch["facts"]["nccl_p2p_level"], launch["facts"]["nccl_p2p_level_rank"]) == ("NVL", 1)
    _, log = audit_json(cli, NCCL_LEVEL_LOC_LOG)
    assert (log["facts"]["nccl_p2p_level"], log["facts"]["nccl_p2p_level_rank"]) == ("LOC", 0)


def test_nccl_p2p_level_loc_under_a_tp_launch_warns(cli):
    # nccl-tests #131 logs "NCCL_P2P_LEVEL set by environment to LOC"; a TP 2 launch on a PHB pair
    _, doc = audit_json(cli, NCCL_LEVEL_LOC_LOG, TWO_RTX5090_PHB, QWQ_32B_DP4_TP2)
    level = rules(doc)["audit-nccl-p2p-level-blocks-tp-path"]
    assert level["severity"] == "warning"
    assert "NCCL_P2P_LEVEL=LOC" in level["title"]
    assert any("set by environment to LOC" in e["text"] for e in level["evidence"])


def test_nccl_p2p_disable_on_an_nvlink_pair_fires(cli):
    # the 4090 launch's NCCL_P2P_DISABLE=1 on a host whose two GPUs topo -m shows at NV12
    _, doc = audit_json(cli, TWO_GPUS_NV12, QWEN15_7B_TP2_P2P_OFF)
    assert doc["facts"]["p2p"] == "ok"
    finding = rules(doc)["audit-nccl-p2p-disabled-where-p2p-works"]
    assert any("NCCL_P2P_DISABLE=1" in e["text"] for e in finding["evidence"])


def test_a_second_launch_keeps_its_environment_and_is_reported(cli, tmp_path: Path):
    # two real launches pasted into one message: the SGLang one first, then the 4090 docker run
    pasted = verbatim(QWQ_32B_DP4_TP2) + "\n" + verbatim(QWEN15_7B_TP2_P2P_OFF)
    folder = bundle(tmp_path / "case", {"launches.sh": pasted})
    code, out, _ = cli("audit", str(folder), "--format", "json")
    doc = json.loads(out)
    assert doc["facts"]["nccl_p2p_disable"] is False  # the docker run's -e NCCL_P2P_DISABLE=1 is its own
    assert "gpus" not in doc["facts"]["deployment"]  # and so is its CUDA_VISIBLE_DEVICES=0,1
    notes = doc["input"][0]["notes"]
    assert any("2 launches: the audit reads the first" in n for n in notes)


def test_the_first_of_two_launches_keeps_what_was_set_before_it(cli, tmp_path: Path):
    pasted = verbatim(QWEN15_7B_TP2_P2P_OFF) + "\n" + verbatim(QWQ_32B_DP4_TP2)
    folder = bundle(tmp_path / "case", {"launches.sh": pasted})
    _, out, _ = cli("audit", str(folder), "--format", "json")
    doc = json.loads(out)
    assert doc["facts"]["nccl_p2p_disable"] is True
    assert doc["facts"]["deployment"]["gpus"] == [0, 1]
