"""Parsers on real outputs from public threads (tests/data/audit, each with its source in the header)."""

from __future__ import annotations

import pytest

from advisor.inputs.evidence import kernel, launch, nccl, smi, topo
from tests.evidence_data import AUDIT_DATA as AUDIT
from tests.evidence_data import verbatim


@pytest.mark.parametrize(
    ("name", "gpus", "pairs", "domains"),
    [
        ("topo_01_2xA100_della_2socket_SYS_mlx5_cols.txt", 2, {"0-1": "SYS"}, [[0], [1]]),
        ("topo_02_4xV100_power9_traverse_NV3_pairs_numa8.txt", 4, {"0-1": "NV3", "0-2": "SYS"}, [[0, 1], [2, 3]]),
        ("topo_03_8xH800_nv8_damaged_copy_clipped_affinity.txt", 8, {"0-7": "NV8"}, [list(range(8))]),
        (
            "topo_04_4xL40S_2socket_node_sys_nic_spaces.txt",
            4,
            {"0-1": "NODE", "1-2": "SYS", "2-3": "NODE"},
            [[0], [1], [2], [3]],
        ),
        ("topo_05_4xH100_nv6_mesh_nic_per_gpu_strided_affinity.txt", 4, {"0-3": "NV6"}, [[0, 1, 2, 3]]),
        ("topo_06_2xRTX5090_threadripper_phb_tabs.txt", 2, {"0-1": "PHB"}, [[0], [1]]),
        (
            "topo_07_5gpu_2socket_phb_pairs_node_sys_spaces.txt",
            5,
            {"1-2": "PHB", "3-4": "PHB", "0-3": "SYS"},
            [[0], [1], [2], [3], [4]],
        ),
        (
            "topo_08_8gpu_plx_pix_pxb_sys_mlx5_old_legend.txt",
            8,
            {"0-1": "PIX", "0-2": "PXB", "0-4": "SYS"},
            [[g] for g in range(8)],
        ),
        ("topo_09_4xGB200_nv18_grace_2numa.txt", 4, {"0-3": "NV18"}, [[0, 1, 2, 3]]),
        ("topo_10_2gpu_nv12_slice_8x_mlx5_lmdeploy_check_env.txt", 2, {"0-1": "NV12"}, [[0, 1]]),
        (
            "topo_11_4xRTX3090_nv4_bridged_pairs_0-2_1-3.txt",
            4,
            {"0-2": "NV4", "1-3": "NV4", "0-1": "PHB", "0-3": "NODE"},
            [[0, 2], [1, 3]],
        ),
        ("topo_12_8xH100_hgx_nv18_10nic_rail_truncated.txt", 8, {"3-4": "NV18"}, [list(range(8))]),
        ("topo_13_5xRTX50_epyc_1numa_node_phb_tabs.txt", 5, {"3-4": "PHB", "0-1": "NODE"}, [[g] for g in range(5)]),
        ("topo_14_2xL4_sys_numa0_numa2_no_legend.txt", 2, {"0-1": "SYS"}, [[0], [1]]),
    ],
)
def test_topo_matrix_of_real_machines(name, gpus, pairs, domains):
    text = verbatim(name)
    assert topo.looks_like_topo(text)
    parsed = topo.parse_topo(text, name)
    assert parsed.data["gpus"] == list(range(gpus))
    for pair, cell in pairs.items():
        a, b = map(int, pair.split("-"))
        assert topo.path(parsed.data["paths"], a, b) == cell, pair
    assert parsed.data["nvlink_domains"] == domains


def test_odd_affinities_and_nic_rows_are_kept_apart():
    parsed = topo.parse_topo(verbatim("topo_05_4xH100_nv6_mesh_nic_per_gpu_strided_affinity.txt"), "x")
    assert parsed.data["cpu_affinity"][0] == "6,14,22,30"
    assert len(parsed.data["nics"]) == 4
    damaged = topo.parse_topo(verbatim("topo_03_8xH800_nv8_damaged_copy_clipped_affinity.txt"), "x")
    assert damaged.data["nics"] == []  # NIC rows without NIC columns in the header are ignored, not misread


def test_best_grouping_avoids_the_socket_link():
    paths = topo.parse_topo(verbatim("topo_07_5gpu_2socket_phb_pairs_node_sys_spaces.txt"), "x").data["paths"]
    groups, worst = topo.best_grouping(paths, [0, 1, 2, 3, 4], 2)
    assert [1, 2] in groups and [3, 4] in groups and worst == "PHB"
    bridged = topo.parse_topo(verbatim("topo_11_4xRTX3090_nv4_bridged_pairs_0-2_1-3.txt"), "x").data["paths"]
    assert topo.best_grouping(bridged, [0, 1, 2, 3], 2) == ([[0, 2], [1, 3]], "NV4")


def test_p2p_matrix_shows_gpu_not_supported():
    text = verbatim("p2p_01_2xRTX5090_threadripper_GNS.txt")
    parsed = topo.parse_p2p(text, "x")
    assert parsed.data["p2p"]["0-1"] == "GNS" and parsed.data["all_ok"] is False


def test_nvidia_smi_q_reads_name_memory_and_virtualization():
    parsed = smi.parse_query(verbatim("smi_01_h800_hgx_nvidia_smi_q_i0.txt"), "x")
    gpu = parsed.data["gpus"][0]
    assert gpu["name"] == "NVIDIA H800" and gpu["memory_mib"] == 81559 and gpu["uuid"].startswith("GPU-")
    assert gpu["pcie_gen"] == "5" and gpu["link_width"] == "16x"
    assert parsed.data["virtualized"] is False


def test_nvlink_status_counts_inactive_links():
    up = smi.parse_nvlink(verbatim("smi_02_h800_nvlink_status_all_up_26.562.txt"), "x")
    assert all(g["inactive"] == 0 for g in up.data["gpus"].values())
    down = smi.parse_nvlink(verbatim("smi_03_v100sxm2_azure_nvlink_status_two_links_inactive.txt"), "x")
    assert sum(g["inactive"] for g in down.data["gpus"].values()) == 2


@pytest.mark.parametrize(
    ("name", "mode"),
    [
        ("cmdline_01_esc8000a_grub_amd_iommu_off_iommu_pt.txt", "off"),
        ("cmdline_02_2xMI100_ubuntu_iommu_pt_only.txt", "passthrough"),
        ("cmdline_03_gh200_aarch64_iommu_passthrough_y.txt", "passthrough"),
        ("cmdline_04_ryzen_x570_amd_iommu_on_iommu_pt.txt", "passthrough"),
        ("dmesg_01_gtx1660_debian_dmar_iommu_enabled_intel_iommu_on.txt", "translated"),
    ],
)
def test_iommu_mode_from_kernel_parameters(name, mode):
    text = verbatim(name)
    assert kernel.looks_like_cmdline(text)
    assert kernel.parse_cmdline(text, name).data["iommu"] == mode


@pytest.mark.parametrize(
    ("name", "mode"),
    [
        ("dmesg_03_ryzen_x570_amdvi_default_domain_translated.txt", "translated"),
        ("dmesg_04_ryzen_x570_amdvi_passthrough_amd_iommu_on_iommu_pt.txt", "passthrough"),
    ],
)
def test_iommu_default_domain_from_dmesg(name, mode):
    assert kernel.parse_dmesg(verbatim(name), name).data["iommu"] == mode


def test_iommu_page_faults_in_dmesg_show_translation():
    # AMD-Vi logs IO_PAGE_FAULT for the GPU during peer-to-peer copies: the IOMMU is translating its addresses
    got = kernel.parse_dmesg(verbatim("dmesg_02_3x1080Ti_x399_amdvi_io_page_fault_p2p.txt"), "dmesg.txt")
    assert got.data == {
        "iommu_faults": 9,
        "iommu": "translated",
        "fault_devices": [{"address": "0000:07:00.0", "driver": "nvidia"}],
    }
    assert got.evidence["iommu"].line == 1 and "IO_PAGE_FAULT" in got.evidence["iommu"].text


def test_acs_control_bits_from_lspci():
    off = kernel.parse_lspci(verbatim("lspci_02_esc8000a_grep_acsctl_all_disabled.txt"), "x")
    assert off.data["acs_checked"] and off.data["acs_enabled_bridges"] == []
    on = kernel.parse_lspci(verbatim("lspci_03_amd_switch_grep_acsctl_srcvalid_plus_nccl_hang.txt"), "x")
    assert len(on.data["acs_enabled_bridges"]) == 4


def test_downgraded_gpu_link_and_bar_sizes_from_lspci():
    gpu = kernel.parse_lspci(verbatim("lspci_01_rtx6000ada_esc8000a_gpu_lnksta_2.5GT_downgraded_bar64G.txt"), "x").data[
        "gpus"
    ][0]
    assert gpu["downgraded"] and gpu["link_gts"] == 2.5 and gpu["link_width"] == 16 and "64G" in gpu["bars"]


@pytest.mark.parametrize(
    ("name", "engine", "model", "tp", "pp", "dp", "extra"),
    [
        (
            "launch_01_vllm_docker_run_2x4090_tp2_nccl_p2p_disable.txt",
            "vllm",
            "/workspace/models/Qwen1.5-7B-Chat",
            2,
            None,
            None,
            {"gpus": [0, 1]},
        ),
        (
            "launch_02_vllm_docker_compose_command_list_tp2_device_ids.txt",
            "vllm",
            "h2oai/h2ogpt-4096-llama2-7b-chat",
            2,
            None,
            None,
            {},
        ),
        (
            "launch_03_vllm_k8s_deployment_args_tp4_truncated.txt",
            "vllm",
            "Qwen/Qwen2-72B-Instruct-GPTQ-Int4",
            4,
            None,
            None,
            {"kv_cache_dtype": "fp8_e4m3"},
        ),
        (
            "launch_04_vllm_api_server_tp8_expert_parallel_typo_flag.txt",
            "vllm",
            "Qwen/Qwen3-VL-235B-A22B-Instruct",
            8,
            None,
            None,
            {},
        ),
        (
            "launch_05_sglang_docker_tp8_dp_attention_hf_token_curly_quotes.txt",
            "sglang",
            "deepseek-ai/DeepSeek-V3-Base",
            8,
            None,
            None,
            {},
        ),
        ("launch_07_vllm_serve_tp8_pp2_2x8xH20.txt", "vllm", "/model", 8, 2, None, {}),
        ("launch_10_sglang_docker_dp4_tp2_8gpu_duplicate_flag.txt", "sglang", "Qwen/QwQ-32B", 2, 1, 4, {}),
    ],
)
def test_engine_launches_as_people_post_them(name, engine, model, tp, pp, dp, extra):
    text = verbatim(next(p.name for p in AUDIT.glob(name[:9] + "*")))
    assert launch.looks_like_launch(text)
    first = launch.parse_launch(text, name).data["launches"][0]
    assert (first["engine"], first.get("model"), first.get("tp"), first.get("pp"), first.get("dp")) == (
        engine,
        model,
        tp,
        pp,
        dp,
    )
    for key, value in extra.items():
        assert first.get(key) == value


def test_nccl_environment_of_a_docker_run():
    first = launch.parse_launch(verbatim("launch_01_vllm_docker_run_2x4090_tp2_nccl_p2p_disable.txt"), "x").data[
        "launches"
    ][0]
    assert first["env"]["NCCL_P2P_DISABLE"] == "1" and first["env"]["CUDA_VISIBLE_DEVICES"] == "0,1"


@pytest.mark.parametrize(
    ("prefix", "peak", "ranks"),
    [
        ("nccl_01", 839.16, 72),
        ("nccl_02", 21.4, None),
        ("nccl_06", 115.86, None),
        ("nccl_07", 25.95, 4),
        ("nccl_08", 12.69, None),
    ],
)
def test_all_reduce_perf_outputs(prefix, peak, ranks):
    text = verbatim(next(p.name for p in AUDIT.glob(prefix + "*")))
    assert nccl.looks_like_allreduce(text)
    parsed = nccl.parse_allreduce(text, prefix)
    assert parsed.data["peak_busbw"] == peak and parsed.data["n_ranks"] == ranks


def _pair_states(parsed):
    return {(o.pair, o.state) for c in nccl.p2p_test_facts(parsed) if c.target == "p2p_pairs" for o in c.value}


def test_p2p_bandwidth_test_with_p2p_writes_slower_than_copies():
    # 6x RTX 4090: every measured pair copies slower with P2P than through the host, so each is blocked
    parsed = nccl.parse_p2p_test(verbatim(next(p.name for p in AUDIT.glob("nccl_04*"))), "x")
    assert parsed.data["enabled_gbs"] < parsed.data["disabled_gbs"]
    states = _pair_states(parsed)
    assert {state for _pair, state in states} == {"blocked"} and len(states) == 6 * 5 // 2


def test_p2p_bandwidth_test_excerpt_that_starts_at_the_connectivity_matrix():
    # HGX H100: the matrix says every pair can; the paste ends at the P2P=Enabled header, before its first row
    text = verbatim(next(p.name for p in AUDIT.glob("nccl_05*")))
    parsed = nccl.parse_p2p_test(text, "x")
    assert len(parsed.data["allowed"]) == 8 * 7 and parsed.data["denied"] == []
    assert {state for _pair, state in _pair_states(parsed)} == {"capable"}
    assert parsed.data["stopped"] and parsed.evidence["stopped"].text == text.rstrip().split("\n")[-1].strip()


def test_a_shell_prompt_in_the_samples_build_folder_is_not_a_bandwidth_test():
    # both captures were run from cuda-samples/.../p2pBandwidthLatencyTest/build: the prompt names the program
    for prefix in ("topo_13", "p2p_02"):
        assert not nccl.looks_like_p2p_test(verbatim(next(p.name for p in AUDIT.glob(prefix + "*"))))


@pytest.mark.parametrize(
    ("prefix", "event"),
    [
        ("log_01", "peer_access_unsupported"),
        ("log_04", "nccl_shm"),
        ("log_05", "nccl_p2p"),
        ("log_10", "nccl_p2p_disabled"),
    ],
)
def test_engine_log_events(prefix, event):
    # what bears on peer-to-peer and NCCL's transports; the failures a log shows are the message catalogue's
    text = verbatim(next(p.name for p in AUDIT.glob(prefix + "*")))
    assert nccl.looks_like_log(text)
    assert nccl.parse_log(text, prefix).data["events"].get(event)


def test_query_csv_with_and_without_header():
    with_header = smi.parse_csv(verbatim(next(p.name for p in AUDIT.glob("smi_06*"))), "x")
    assert [g["name"] for g in with_header.data["gpus"]] == ["NVIDIA L40S"] * 2 and with_header.data["gpus"][0][
        "memory_mib"
    ] == 46068
    text = verbatim(next(p.name for p in AUDIT.glob("smi_05*")))
    assert smi.looks_like_csv(text)
    bare = smi.parse_csv(text, "x")
    assert len(bare.data["gpus"]) == 4 and bare.data["gpus"][3]["bus_id"] == "00000000:74:00.0"


@pytest.mark.parametrize("prefix", ["p2p_01", "p2p_02", "p2p_03"])
def test_a_p2p_matrix_is_not_read_as_a_path_matrix(prefix):
    # `topo -p2p` rows (GPU0 X OK ...) have no path codes: no "row is garbled" notes from the topo -m reader
    text = verbatim(next(p.name for p in AUDIT.glob(prefix + "*")))
    assert topo.looks_like_p2p(text) and not topo.looks_like_topo(text)
