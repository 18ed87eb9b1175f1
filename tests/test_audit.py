"""`advisor audit` on realistic bundles: real captured outputs (tests/data/audit) plus the customer's
deployment.yaml or launch line, as a support engineer would receive them."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from advisor.audit import audit
from tests.evidence_data import L40S_PLAN, bundle, verbatim


def findings(result):
    return {f.rule: f for f in result.findings}


def test_tp_group_across_sockets_names_the_better_grouping(engine, tmp_path):
    folder = bundle(
        tmp_path / "b",
        {"topo.txt": verbatim("topo_04_4xL40S_2socket_node_sys_nic_spaces.txt"), "deployment.yaml": L40S_PLAN},
    )
    result = audit(engine, [folder])
    found = findings(result)
    slow = found["audit-tp-group-on-slow-path"]
    assert "SYS" in slow.title and "0,1 | 2,3" in slow.explanation
    assert slow.evidence and slow.evidence[0].file.endswith("topo.txt") and "GPU0" in slow.evidence[0].text
    assert result.recommendation.layout.tp == 2
    assert "tp-over-pcie" in found  # the same rules as `recommend`, on the deployed layout
    assert result.facts["tp_groups"] == [[0, 2]]


def test_gpu_without_p2p_and_no_nccl_workaround(engine, tmp_path):
    launch = "vllm serve Qwen/Qwen3-32B --tensor-parallel-size 2 --max-model-len 8192\n"
    folder = bundle(
        tmp_path / "b",
        {
            "topo.txt": verbatim("topo_06_2xRTX5090_threadripper_phb_tabs.txt"),
            "p2p.txt": verbatim("p2p_01_2xRTX5090_threadripper_GNS.txt"),
            "start.sh": launch,
            "deployment.yaml": "hardware: {gpu: RTX 5090}\nworkload: {concurrent_conversations: 4}\n",
        },
    )
    result = audit(engine, [folder])
    found = findings(result)
    assert result.facts["model"] == "Qwen/Qwen3-32B"
    assert {"gpu-without-pcie-p2p", "tp-over-pcie-p2p-broken"} <= set(found)
    assert any(e.file.endswith("p2p.txt") for e in found["tp-over-pcie-p2p-broken"].evidence)
    # GNS: the driver itself says no P2P, so NCCL never tries it and cannot hang on it: nothing to tell NCCL
    assert "audit-p2p-broken-nccl-not-told" not in found
    assert result.p2p["0-1"]["state"] == "unsupported" and "GNS" in result.p2p["0-1"]["why"][0]


def test_host_settings_downgraded_link_acs_off_iommu_off(engine, tmp_path):
    folder = bundle(
        tmp_path / "b",
        {
            "cmdline": verbatim("cmdline_01_esc8000a_grub_amd_iommu_off_iommu_pt.txt"),
            "lspci-gpu.txt": verbatim("lspci_01_rtx6000ada_esc8000a_gpu_lnksta_2.5GT_downgraded_bar64G.txt"),
            "lspci-acs.txt": verbatim("lspci_02_esc8000a_grep_acsctl_all_disabled.txt"),
        },
    )
    result = audit(engine, [folder])
    assert result.facts["iommu"] == "off" and result.facts["acs"] == "disabled"
    assert "audit-pcie-link-downgraded" in findings(result)
    assert any(u.fact == "model" and u.settle for u in result.unknowns)


def test_inactive_nvlinks(engine, tmp_path):
    folder = bundle(
        tmp_path / "b", {"nvlink.txt": verbatim("smi_03_v100sxm2_azure_nvlink_status_two_links_inactive.txt")}
    )
    result = audit(engine, [folder])
    assert findings(result)["audit-nvlink-inactive"].evidence[0].text.endswith("<inactive>")


def test_acs_enabled_on_the_path_of_a_tp_deployment(engine, tmp_path):
    folder = bundle(
        tmp_path / "b",
        {
            "topo.txt": verbatim("topo_13_5xRTX50_epyc_1numa_node_phb_tabs.txt"),
            "acs.txt": verbatim("lspci_03_amd_switch_grep_acsctl_srcvalid_plus_nccl_hang.txt"),
            "deployment.yaml": "model: Qwen3-32B\nhardware: {gpu: RTX 5090}\nworkload: {concurrent_conversations: 8}\n"
            "deployment: {tp: 2, gpus: [3, 4]}\n",
        },
    )
    found = findings(audit(engine, [folder]))
    assert "acs-redirects-p2p" in found
    assert any(e.file.endswith("acs.txt") and "SrcValid+" in e.text for e in found["acs-redirects-p2p"].evidence)


def test_accepted_findings_stay_visible_and_expired_ones_return(engine, tmp_path):
    plan = (
        L40S_PLAN + "accept:\n"
        '  - {rule: audit-tp-group-on-slow-path, reason: "rack wiring fixed next quarter", expires: 2099-01-01}\n'
        "  - {rule: tp-over-pcie, reason: old, expires: 2020-01-01}\n"
        "  - {rule: failure-collective-timeout, reason: ignore}\n"
    )
    folder = bundle(
        tmp_path / "b",
        {"topo.txt": verbatim("topo_04_4xL40S_2socket_node_sys_nic_spaces.txt"), "deployment.yaml": plan},
    )
    result = audit(engine, [folder])
    found = findings(result)
    assert found["audit-tp-group-on-slow-path"].suppressed == {
        "reason": "rack wiring fixed next quarter",
        "expires": "2099-01-01",
    }
    assert found["tp-over-pcie"].suppressed is None
    notes = [n for i in result.inputs for n in i.notes]
    assert any("tp-over-pcie expired on 2020-01-01" in n for n in notes)
    assert any("failure-collective-timeout cannot be accepted" in n for n in notes)
    assert result.findings[-1].suppressed  # accepted findings sort last, never vanish


def test_bad_files_get_a_note_each_and_the_rest_is_still_audited(engine, tmp_path):
    folder = bundle(
        tmp_path / "b",
        {
            "topo.txt": verbatim("topo_04_4xL40S_2socket_node_sys_nic_spaces.txt"),
            "empty.txt": "",
            "notes.md": "meeting notes, nothing to see\n",
            "truncated-topo.txt": "        GPU0    GPU1    GPU2\nGPU0     X      NO",
        },
    )
    (folder / "core.bin").write_bytes(bytes(range(256)) * 64)
    (folder / "latin1.txt").write_bytes("GPU-Übersicht \xe4\xf6".encode("latin-1") * 2000)
    result = audit(engine, [folder])
    notes = {Path(i.path).name: i.notes for i in result.inputs}
    assert notes["empty.txt"] == ["empty file"]
    assert any("binary" in n for n in notes["core.bin"])
    assert any("not recognised" in n for n in notes["notes.md"])
    assert any("not a text file" in n or "replacement" in n for n in notes["latin1.txt"])
    assert "nvidia-smi-topo" in next(i.kinds for i in result.inputs if i.path.endswith("topo.txt"))


def test_nothing_usable_exits_2_with_one_line(cli, tmp_path):
    folder = bundle(tmp_path / "b", {"empty.txt": "", "readme.txt": "hello\n"})
    code, out, err = cli("audit", str(folder))
    assert code == 2 and out == "" and err.startswith("advisor: error: no usable evidence")


def test_exit_codes_follow_fail_on(cli, tmp_path):
    folder = bundle(
        tmp_path / "b",
        {"topo.txt": verbatim("topo_04_4xL40S_2socket_node_sys_nic_spaces.txt"), "deployment.yaml": L40S_PLAN},
    )
    assert cli("audit", str(folder))[0] == 0  # worst is a warning; default --fail-on error
    assert cli("audit", str(folder), "--fail-on", "warning")[0] == 1
    assert cli("audit", str(folder), "--fail-on", "never")[0] == 0


def test_json_sarif_and_markdown_reports(cli, tmp_path):
    folder = bundle(
        tmp_path / "b",
        {
            "topo.txt": verbatim("topo_11_4xRTX3090_nv4_bridged_pairs_0-2_1-3.txt"),
            "deployment.yaml": "model: Qwen3-32B\nprecision: fp8\nhardware: {gpu: RTX 3090}\n"
            "workload: {concurrent_conversations: 4}\ndeployment: {tp: 2, gpus: [0, 1]}\n",
        },
    )
    code, out, _ = cli("audit", str(folder), "--format", "json")
    doc = json.loads(out)
    assert doc["schema"] == "advisor.audit/1"
    assert set(doc["summary"]) == {"error", "warning", "advice", "info"}
    assert doc["facts"]["nvlink"] == "bridge-2" and doc["facts"]["nvlink_domains"] == [[0, 2], [1, 3]]
    slow = next(f for f in doc["findings"] if f["rule"] == "audit-tp-group-on-slow-path")
    assert "0,2 | 1,3" in slow["explanation"] and slow["evidence"][0]["line"] > 0
    code, out, _ = cli("audit", str(folder), "--format", "sarif")
    sarif = json.loads(out)
    assert sarif["version"] == "2.1.0"
    run = sarif["runs"][0]
    ids = [r["id"] for r in run["tool"]["driver"]["rules"]]
    assert all(r["ruleId"] in ids and ids[r["ruleIndex"]] == r["ruleId"] for r in run["results"])
    assert all(r["level"] in ("error", "warning", "note") for r in run["results"])
    code, out, _ = cli("audit", str(folder), "--format", "md")
    assert "## Machine" in out and "NVLink domain (NV4): [GPU0·A]══[GPU2]" in out
    assert "TP group A: GPU0 — GPU1  (PHB)" in out
    assert "| **GPU0** | X | PHB | NV4 | NODE |" in out


def _fake(bin_dir: Path, name: str, text: str) -> None:
    script = bin_dir / name
    data = bin_dir / f"{name}.out"
    data.write_text(text, encoding="utf-8")
    script.write_text(f"#!/bin/sh\nexec /bin/cat '{data}'\n", encoding="utf-8")
    script.chmod(0o755)


def test_collect_with_fake_tools_then_audit(cli, tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    _fake(bin_dir, "nvidia-smi", verbatim("topo_04_4xL40S_2socket_node_sys_nic_spaces.txt").split("\n", 1)[1])
    _fake(bin_dir, "lspci", verbatim("lspci_03_amd_switch_grep_acsctl_srcvalid_plus_nccl_hang.txt").split("\n", 1)[1])
    monkeypatch.setenv("PATH", str(bin_dir))
    out_dir = tmp_path / "bundle"
    code, out, err = cli("collect", "-o", str(out_dir))
    assert code == 0 and "NVIDIA GPUs found" in out
    assert {p.name for p in out_dir.iterdir()} >= {"lspci.txt", "manifest.json", "nvidia-smi-topo.txt"}
    assert set(p.parent for p in tmp_path.rglob("*") if p.is_file() and p.parent != bin_dir) <= {out_dir}
    manifest = json.loads((out_dir / "manifest.json").read_text())
    assert any(s["command"] == "dmesg" and s["status"] == "missing" for s in manifest["steps"])
    monkeypatch.setenv("PATH", os.defpath)
    result = audit(engine_for(), [out_dir])
    assert result.facts["acs"] == "enabled"


def engine_for():
    from advisor.core.engine import Engine

    return Engine.load()


def test_collect_on_a_machine_without_nvidia_gpus(cli, tmp_path, monkeypatch):
    empty = tmp_path / "nothing"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    code, out, err = cli("collect", "-o", str(tmp_path / "bundle"))
    assert code == 0 and "no NVIDIA GPU evidence" in out
    manifest = json.loads((tmp_path / "bundle" / "manifest.json").read_text())
    assert manifest["nvidia_gpus"] is False
    assert {s["status"] for s in manifest["steps"] if s["command"].startswith("nvidia-smi")} == {"missing"}
    code, out, _ = cli("audit", str(tmp_path / "bundle"))
    assert "⚠ the bundle was collected with no NVIDIA GPU evidence: nvidia-smi not found on PATH" in out


def test_collect_refuses_a_non_empty_folder(cli, tmp_path):
    (tmp_path / "keep.txt").write_text("x")
    code, _, err = cli("collect", "-o", str(tmp_path))
    assert code == 2 and "not empty" in err


def test_bus_bandwidth_far_below_the_link(engine, tmp_path):
    plan = "hardware: {gpu: RTX 4090, gpus_per_node: 4}\n"
    slow = bundle(
        tmp_path / "slow",
        {
            "allreduce.txt": verbatim("nccl_08_4090_p2p_patch_allreduce_12.7GBs_rows_excerpt.txt"),
            "deployment.yaml": plan,
        },
    )
    found = findings(audit(engine, [slow]))["audit-busbw-below-link"]
    assert "12.7 GB/s" in found.title and "32 GB/s" in found.title and "pcie" in found.title
    assert found.evidence[0].file.endswith("allreduce.txt") and "12.69" in found.evidence[0].text
    healthy = bundle(
        tmp_path / "ok",
        {
            "allreduce.txt": verbatim("nccl_07_4xRTX4090_pcie_allreduce_25.9GBs_indented_truncated.txt"),
            "deployment.yaml": plan,
        },
    )
    assert "audit-busbw-below-link" not in findings(audit(engine, [healthy]))


def test_logs_show_a_hang_and_refused_peer_access(engine, tmp_path):
    folder = bundle(
        tmp_path / "b",
        {
            "vllm.log": verbatim("log_03_vllm_watchdog_allreduce_timeout_600s.txt"),
            "sglang.log": verbatim("log_01_sglang_2xT4_kaggle_peer_access_not_supported.txt"),
            "deployment.yaml": "accept:\n  - {rule: failure-collective-timeout, reason: known}\n",
        },
    )
    result = audit(engine, [folder])
    found = findings(result)
    hang = found["failure-collective-timeout"]
    assert hang.severity == "error" and hang.suppressed is None  # a hang cannot be accepted
    assert "Watchdog caught collective operation timeout" in hang.evidence[0].text
    assert "ACS" in hang.fix and "driver" in hang.fix  # the differential: P2P path, then the driver
    assert "peer access is not supported" in found["failure-p2p-not-supported"].evidence[0].text
    assert "--enable-p2p-check" in found["failure-p2p-not-supported"].fix
    assert result.worst() == "error"


def test_nccl_p2p_disabled_although_p2p_works(engine, tmp_path):
    folder = bundle(
        tmp_path / "b",
        {
            "p2p.txt": verbatim("p2p_02_5xRTX50_patched_driver_all_OK.txt"),
            "compose-env.txt": "NCCL_P2P_DISABLE=1 CUDA_VISIBLE_DEVICES=3,4 vllm serve Qwen/Qwen3-32B "
            "--tensor-parallel-size 2\n",
            "deployment.yaml": "hardware: {gpu: RTX 5090}\nworkload: {concurrent_conversations: 8}\n",
        },
    )
    found = findings(audit(engine, [folder]))
    assert "audit-nccl-p2p-disabled-where-p2p-works" in found
    assert any("NCCL_P2P_DISABLE=1" in e.text for e in found["audit-nccl-p2p-disabled-where-p2p-works"].evidence)


def test_ep_size_that_is_not_tp_times_dp(engine, tmp_path):
    launch = (
        "python -m sglang.launch_server --model-path Qwen/Qwen3-30B-A3B "
        "--tp 4 --dp 2 --ep-size 4 --enable-dp-attention\n"
    )
    folder = bundle(
        tmp_path / "b", {"start.sh": launch, "deployment.yaml": "hardware: {gpu: H100 SXM, gpus_per_node: 8}\n"}
    )
    found = findings(audit(engine, [folder]))
    assert "audit-ep-size-not-tp-times-dp" in found


def test_fleet_audit_of_many_bundles_with_workers(cli, tmp_path):
    for i in range(6):
        gpus = "0, 2" if i % 2 else "0, 1"
        bundle(
            tmp_path / f"host-{i}",
            {
                "topo.txt": verbatim("topo_04_4xL40S_2socket_node_sys_nic_spaces.txt"),
                "deployment.yaml": L40S_PLAN.replace("[0, 2]", f"[{gpus}]"),
            },
        )
    bundle(tmp_path / "host-empty", {"empty.txt": ""})
    code, out, err = cli("audit", "--fleet", str(tmp_path), "--jobs", "2", "--format", "json")
    doc = json.loads(out)
    assert doc["schema"] == "advisor.audit-fleet/1" and len(doc["bundles"]) == 7
    slow = [
        b
        for b in doc["bundles"]
        if b["audit"] and any(f["rule"] == "audit-tp-group-on-slow-path" for f in b["audit"]["findings"])
    ]
    assert len(slow) == 3
    assert next(b for b in doc["bundles"] if b["path"].endswith("host-empty"))["error"].startswith("no usable evidence")
    assert err == ""  # no progress bar when stderr is not a terminal
    code, out, _ = cli("audit", str(tmp_path / "host-0"), str(tmp_path / "host-1"))
    assert out.splitlines()[-1].startswith("2 bundles:")


def _plan(model: str, gpu: str, users: int, tp: int = 1, pp: int = 1, gpus: str = "", extra: str = "") -> str:
    deployment = f"{{tp: {tp}, pp: {pp}" + (f", gpus: [{gpus}]" if gpus else "") + "}"
    return (
        f"model: {model}\nhardware: {{gpu: {gpu}{extra}}}\nworkload: {{concurrent_conversations: {users}}}\n"
        f"deployment: {deployment}\n"
    )


def _nv12_pair(text: str) -> str:
    """The real 8x H100 matrix with the GPU3-GPU5 pair turned from NV18 to NV12: a simulated link defect."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        cells = line.split("\t")
        if cells and cells[0] in ("GPU3", "GPU5"):
            cells[6 if cells[0] == "GPU3" else 4] = "NV12"
            lines[i] = "\t".join(cells)
    return "\n".join(lines)


AUDIT_CASES = {
    "audit-nvswitch-pair-fewer-links": {
        "topo.txt": _nv12_pair(verbatim("topo_12_8xH100_hgx_nv18_10nic_rail_truncated.txt"))
    },
    "audit-oom-at-startup": {
        "vllm.log": verbatim("log_08_vllm_rtx3090_cuda_oom_at_load.txt"),
        "deployment.yaml": _plan("Llama 3.1 8B", "RTX 3090", 4),
    },
    "audit-more-gpus-than-visible": {
        "run.sh": "CUDA_VISIBLE_DEVICES=0,1 vllm serve Qwen/Qwen3-32B --tensor-parallel-size 4\n",
        "deployment.yaml": "hardware: {gpu: L40S, gpus_per_node: 4}\n",
    },
    "tp-for-model-that-fits-one-card": {
        "topo.txt": verbatim("topo_13_5xRTX50_epyc_1numa_node_phb_tabs.txt"),
        "deployment.yaml": _plan("Llama 3.1 8B", "RTX 5090", 8, tp=4, gpus="0, 1, 2, 3"),
    },
    "iommu-translated-blocks-p2p": {
        "dmesg.txt": verbatim("dmesg_03_ryzen_x570_amdvi_default_domain_translated.txt"),
        "deployment.yaml": "precision: int4\n"
        + _plan("Qwen3-32B", "RTX 3090", 4, tp=2, extra=", gpus_per_node: 2, nvlink: none"),
    },
    "vm-keeps-acs-on": {
        "deployment.yaml": _plan(
            "Llama 3.3 70B Instruct", "RTX PRO 6000 Server", 8, tp=2, extra=", gpus_per_node: 2, virtualized: true"
        )
    },
    "tp-must-divide-heads": {
        "topo.txt": verbatim("topo_07_5gpu_2socket_phb_pairs_node_sys_spaces.txt"),
        "deployment.yaml": _plan("Llama 3.3 70B Instruct", "RTX 3090", 4, tp=3, gpus="1, 2, 3"),
    },
    "pipeline-needs-requests-in-flight": {
        "topo.txt": verbatim("topo_08_8gpu_plx_pix_pxb_sys_mlx5_old_legend.txt"),
        "deployment.yaml": _plan("Llama 3.3 70B Instruct", "RTX A6000", 2, pp=4, gpus="0, 1, 2, 3"),
    },
    "tp-within-nvlink-domain": {
        "topo.txt": verbatim("topo_11_4xRTX3090_nv4_bridged_pairs_0-2_1-3.txt"),
        "deployment.yaml": _plan("Qwen3-32B", "RTX 3090", 8, tp=4, gpus="0, 1, 2, 3"),
    },
}


@pytest.mark.parametrize("rule", sorted(AUDIT_CASES))
def test_each_rule_the_audit_can_fire_on_a_realistic_bundle(engine, tmp_path, rule):
    found = findings(audit(engine, [bundle(tmp_path / "b", AUDIT_CASES[rule])]))
    assert rule in found, sorted(found)


def test_a_launch_is_not_said_to_lack_gpus_that_one_host_cannot_count(engine, tmp_path):
    # launch only: nothing says how many GPUs the engine sees
    alone = audit(
        engine,
        [bundle(tmp_path / "a", {"run.sh": verbatim("launch_04_vllm_api_server_tp8_expert_parallel_typo_flag.txt")})],
    )
    assert "audit-more-gpus-than-visible" not in findings(alone)
    # TP 8 x PP 2 over two 8-GPU nodes, with one node's topology: the launch spans nodes, as its thread says
    spanning = audit(
        engine,
        [
            bundle(
                tmp_path / "b",
                {
                    "run.sh": verbatim("launch_07_vllm_serve_tp8_pp2_2x8xH20.txt"),
                    "topo.txt": verbatim("topo_12_8xH100_hgx_nv18_10nic_rail_truncated.txt"),
                },
            )
        ],
    )
    assert "audit-more-gpus-than-visible" not in findings(spanning)
    # the plan states one node: then 16 GPUs cannot be there
    one_node = audit(
        engine,
        [
            bundle(
                tmp_path / "c",
                {
                    "run.sh": verbatim("launch_07_vllm_serve_tp8_pp2_2x8xH20.txt"),
                    "deployment.yaml": "hardware: {gpu: H20, gpus_per_node: 8, nodes: 1}\n",
                },
            )
        ],
    )
    assert findings(one_node)["audit-more-gpus-than-visible"].title == "The launch needs 16 GPUs but sees 8"


def test_a_slow_tp_group_is_found_when_the_model_is_not_in_the_catalogue(engine, tmp_path):
    # GPUs 0-2 and 1-3 share NVLink bridges; TP 2 on GPUs 0,1 crosses the host bridge instead
    folder = bundle(
        tmp_path / "b",
        {
            "topo.txt": verbatim("topo_11_4xRTX3090_nv4_bridged_pairs_0-2_1-3.txt"),
            "run.sh": "CUDA_VISIBLE_DEVICES=0,1 vllm serve /models/in-house-13b --tensor-parallel-size 2\n",
        },
    )
    result = audit(engine, [folder])
    assert result.recommendation is None
    slow = findings(result)["audit-tp-group-on-slow-path"]
    assert "0,2 | 1,3" in slow.explanation


def test_a_deployment_that_cannot_be_evaluated_is_a_problem_not_an_input(engine, tmp_path, cli):
    folder = bundle(
        tmp_path / "b",
        {
            "topo.txt": verbatim("topo_11_4xRTX3090_nv4_bridged_pairs_0-2_1-3.txt"),
            "deployment.yaml": _plan("Qwen3-32B", "RTX 3090", 0, tp=2),
        },
    )
    result = audit(engine, [folder])
    assert result.problems and result.problems[0].startswith("cannot evaluate the deployment:")
    assert [Path(i.path).name for i in result.inputs] == ["deployment.yaml", "topo.txt"]
    code, out, _ = cli("audit", str(folder))
    assert out.splitlines()[2].startswith("⚠ cannot evaluate the deployment:")
    code, out, _ = cli("audit", str(folder), "--format", "json")
    assert json.loads(out)["problems"] == result.problems
    code, out, _ = cli("audit", str(folder), "--format", "sarif")
    run = json.loads(out)["runs"][0]
    assert all(
        a["location"]["uri"].endswith(".yaml") or a["location"]["uri"].endswith(".txt") for a in run["artifacts"]
    )
    assert run["invocations"][0]["toolExecutionNotifications"][0]["message"]["text"] == result.problems[0]


def test_a_launch_from_a_local_path_is_matched_by_its_folder_or_served_name(engine, tmp_path):
    # `vllm serve /model ... --served-model-name DeepSeek-R1` over two 8-GPU nodes, as in the thread (its H20 is not
    # in the catalogue: the plan names an H100 node pair instead)
    result = audit(
        engine,
        [
            bundle(
                tmp_path / "a",
                {
                    "run.sh": verbatim("launch_07_vllm_serve_tp8_pp2_2x8xH20.txt"),
                    "deployment.yaml": "hardware: {gpu: H100 SXM, gpus_per_node: 8, nodes: 2}\n",
                },
            )
        ],
    )
    assert result.recommendation is not None and result.recommendation.layout.label() == "TP 8 × PP 2"
    assert result.facts["model"] == "DeepSeek-R1"
    local = audit(
        engine,
        [
            bundle(
                tmp_path / "b",
                {
                    "run.sh": "vllm serve /models/Llama-3.3-70B-Instruct --tensor-parallel-size 2\n",
                    "deployment.yaml": "hardware: {gpu: L40S, gpus_per_node: 2}\n",
                },
            )
        ],
    )
    assert local.recommendation is not None and "Llama 3.3 70B" in local.recommendation.input["model"]


def test_an_empty_folder_is_named_as_empty(cli, tmp_path):
    code, _, err = cli("audit", str(tmp_path))
    assert code == 2 and f"no files in {tmp_path}" in err


def test_iommu_page_faults_in_the_kernel_log_warn_of_translated_peer_to_peer(engine, tmp_path):
    folder = bundle(
        tmp_path / "b",
        {
            "dmesg.txt": verbatim("dmesg_02_3x1080Ti_x399_amdvi_io_page_fault_p2p.txt"),
            "deployment.yaml": _plan("Qwen3-32B", "RTX 3090", 4, tp=2, extra=", gpus_per_node: 2, nvlink: none"),
        },
    )
    warning = findings(audit(engine, [folder]))["audit-iommu-faults-on-gpu-dma"]
    assert warning.evidence and "IO_PAGE_FAULT" in warning.evidence[0].text
