"""Bundle cases held back until the bundle and collect fixes were done (then run once, untuned): three
more sites a support engineer gets, from real captures with headers (tests/data/audit)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess

import pytest

from tests.evidence_data import verbatim
from tests.test_bundles import _collect


def test_an_hgx_site_of_three_hosts_keeps_each_hosts_gpus(cli, monkeypatch, tmp_path):
    """An H800 HGX node (topo -m and nvidia-smi -q of the same machine), an 8x H100 HGX node and a GB200
    tray: one audit of the folder must report each host's own GPU, never one host's GPU for another."""
    site = tmp_path / "site"
    hosts = {
        "h800": {
            "topo -m": verbatim("topo_03_8xH800_nv8_damaged_copy_clipped_affinity.txt"),
            "-q": verbatim("smi_01_h800_hgx_nvidia_smi_q_i0.txt"),
        },
        "h100": {"topo -m": verbatim("topo_12_8xH100_hgx_nv18_10nic_rail_truncated.txt")},
        "gb200": {
            "topo -m": verbatim("topo_09_4xGB200_nv18_grace_2numa.txt"),
            "nvlink --status": verbatim("smi_04_gb200_nvlink_status_18x53.125.txt"),
        },
    }
    for name, answers in hosts.items():
        assert _collect(cli, monkeypatch, site / name, answers)[0] == 0
    for leftover in site.glob("*-bin"):
        for f in leftover.iterdir():
            f.unlink()
        leftover.rmdir()
    code, out, err = cli("audit", str(site), "--format", "json")
    doc = json.loads(out)
    facts = {b["path"].rsplit("/", 1)[-1]: b["audit"]["facts"] for b in doc["bundles"]}
    assert set(facts) == set(hosts)
    assert "H800" in str(facts["h800"]["gpu"])
    assert facts["h100"]["gpus_per_node"] == 8 and facts["gb200"]["gpus_per_node"] == 4
    assert "H800" not in str(facts["h100"]["gpu"]) and "H800" not in str(facts["gb200"]["gpu"])


def test_a_german_markdown_fleet_names_the_host_without_gpus(cli, monkeypatch, tmp_path):
    site = tmp_path / "site"
    _collect(cli, monkeypatch, site / "gpu-1", {"topo -m": verbatim("topo_06_2xRTX5090_threadripper_phb_tabs.txt")})
    _collect(cli, monkeypatch, site / "head-node", None)
    for leftover in site.glob("*-bin"):
        for f in leftover.iterdir():
            f.unlink()
        leftover.rmdir()
    code, out, _ = cli("audit", str(site), "--format", "md", "--lang", "de", "--fail-on", "warning")
    row = next(x for x in out.splitlines() if "head-node" in x)
    assert code == 1 and "audit-bundle-without-gpu-evidence" in row and any("gpu-1" in x for x in out.splitlines())


@pytest.fixture
def docker_engine(tmp_path):
    """The engine of vllm #3710 (2x RTX 4090, NCCL_P2P_DISABLE=1, CUDA_VISIBLE_DEVICES=0,1) as /proc shows
    it inside the container, with a Hugging Face token in its environment."""
    launch = verbatim("launch_01_vllm_docker_run_2x4090_tp2_nccl_p2p_disable.txt")
    env = dict(re.findall(r"-e ([A-Z_0-9]+)=(\S+)", launch))
    script = tmp_path / "engine" / "vllm"
    script.parent.mkdir()
    script.write_text("#!/bin/sh\nsleep 120\n", encoding="utf-8")
    script.chmod(0o755)
    args = [str(script), "serve", "Qwen/Qwen1.5-7B-Chat", "--tensor-parallel-size", "2"]
    proc = subprocess.Popen(
        args,
        env={"PATH": "/usr/bin:/bin", **env, "HF_TOKEN": "hf_Zq8Wm3Xv7Lp2Rk9Tn4Bd6Yc1Hs5Gf0Ja"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        yield env
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def test_collect_in_a_4090_container_keeps_p2p_disable_and_the_audit_reads_it(
    cli, monkeypatch, tmp_path, docker_engine
):
    assert docker_engine.get("NCCL_P2P_DISABLE") == "1"
    bundle = tmp_path / "bundle"
    _collect(cli, monkeypatch, bundle, {"topo -m": verbatim("topo_06_2xRTX5090_threadripper_phb_tabs.txt")})
    line = next(x for x in (bundle / "engine-processes.txt").read_text().splitlines() if "Qwen1.5-7B-Chat" in x)
    assert "NCCL_P2P_DISABLE=1" in line and "CUDA_VISIBLE_DEVICES=0,1" in line
    assert "hf_Zq8Wm3Xv7Lp2Rk9Tn4Bd6Yc1Hs5Gf0Ja" not in "".join(p.read_text() for p in bundle.iterdir())
    code, out, _ = cli("audit", str(bundle), "--format", "json")
    assert json.loads(out)["facts"].get("nccl_p2p_disable") is True
