"""Host bundles as a support engineer handles them: `advisor collect` run on each host of a customer's
site, the bundles sent back in one folder (one sub-folder per host), then `advisor audit` on that folder.

The tools a host answers with are fakes that print real captures (tests/data/audit, each with its
header); the engine whose command line collect reads is a real process with a real launch's NCCL
environment (vllm #12256) and planted secrets. Every host is audited on its own, in every format;
collect keeps every NCCL_* variable, hides every secret and says what it hid; a bundle without GPU
evidence fails `--fail-on warning`.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from advisor.audit import audit
from advisor.core.engine import Engine
from advisor.errors import InputError
from tests.evidence_data import verbatim

# the environment of a real multi-node launch (vllm #12256), as its first line sets it
LAUNCH_08 = verbatim("launch_08_vllm_serve_tp32_multinode_nccl_env_messy_continuations.txt")
NCCL_ENV = dict(re.findall(r"\b(NCCL_[A-Z0-9_]+)=(\S+)", LAUNCH_08.split("\n", 1)[0]))
SECRETS = {
    "VLLM_API_KEY": "vk-3f9a1c7e5b2d4068a9e1",
    "--api-key": "sk-proj-Q2x8Vb4Lm7Rt1Np9Ks3Wd6Yh",
    "--hf-token": "hf_kT4mQ9vW2xL7pR3sN8bJ5cY1dF6gH0aZ",
    "url-password": "Tr0ub4dor-and-3",
}


def _tools(bin_dir: Path, answers: dict[str, str]) -> None:
    """A fake nvidia-smi that answers each sub-command with a real capture, and fails on the others."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    cases = []
    for i, (args, text) in enumerate(answers.items()):
        (bin_dir / f"answer-{i}.txt").write_text(text, encoding="utf-8")
        cases.append(f"  '{args}') exec /bin/cat '{bin_dir / f'answer-{i}.txt'}' ;;")
    script = bin_dir / "nvidia-smi"
    script.write_text(
        '#!/bin/sh\ncase "$*" in\n' + "\n".join(cases) + "\n  *) echo 'not supported' >&2; exit 3 ;;\nesac\n",
        encoding="utf-8",
    )
    script.chmod(0o755)


def _collect(cli, monkeypatch, where: Path, answers: dict[str, str] | None) -> tuple[int, str]:
    """`advisor collect -o where` on a host whose nvidia-smi gives `answers` (None: no nvidia-smi at all)."""
    bin_dir = where.parent / f"{where.name}-bin"
    if answers is not None:
        _tools(bin_dir, answers)
    else:
        bin_dir.mkdir(parents=True)
    with monkeypatch.context() as m:
        m.setenv("PATH", str(bin_dir))
        code, out, _ = cli("collect", "-o", str(where))
    return code, out


@pytest.fixture
def site(cli, monkeypatch, tmp_path) -> Path:
    """Three hosts of one customer, collected into one folder: an 8x V100 SXM2 node with two NVLinks down
    (Azure azhpc-diagnostics #73, topo -m of the same class of node), a 4x L40S two-socket server, and a
    login node without GPUs."""
    root = tmp_path / "site"
    v100 = {
        "topo -m": verbatim("topo_17_8xV100sxm2_hybrid_cube_mesh_nv1_nv2_sys_no_legend_tabs.txt"),
        "nvlink --status": verbatim("smi_03_v100sxm2_azure_nvlink_status_two_links_inactive.txt"),
    }
    l40s = {"topo -m": verbatim("topo_04_4xL40S_2socket_node_sys_nic_spaces.txt")}
    for host, answers in (("gpu-v100", v100), ("gpu-l40s", l40s), ("login", None)):
        code, _ = _collect(cli, monkeypatch, root / host, answers)
        assert code == 0
    for leftover in root.glob("*-bin"):  # the fake tools are not part of what the customer sends
        for f in leftover.iterdir():
            f.unlink()
        leftover.rmdir()
    return root


def test_a_folder_of_host_bundles_is_audited_per_host(cli, site):
    code, out, err = cli("audit", str(site))
    rows = {line.split()[1].rsplit("/", 1)[-1]: line for line in out.splitlines() if str(site) in line}
    assert set(rows) == {"gpu-v100", "gpu-l40s", "login"}
    assert "audit-nvlink-inactive" in rows["gpu-v100"]
    assert "audit-nvlink-inactive" not in rows["gpu-l40s"] and "audit-nvlink-inactive" not in rows["login"]
    assert out.splitlines()[-1].startswith("3 bundles:")
    assert "3 host bundles" in err and code == 0  # warnings only: the V100's links, the login node's bundle
    code, _, _ = cli("audit", str(site), "--fail-on", "warning")
    assert code == 1


def test_one_audit_of_a_folder_of_hosts_is_refused_with_the_fleet_hint(site):
    """Whatever calls the audit on the folder (the chat's /audit, a script) gets one line, never one host."""
    with pytest.raises(InputError) as refused:
        audit(Engine.load(), [site])
    line = refused.value.one_line()
    assert "holds 3 host bundles" in line and f"advisor audit --fleet {site}" in line and "\n" not in line


@pytest.mark.parametrize("fmt", ["text", "json", "md", "sarif"])
def test_a_fleet_audit_shows_every_host_in_every_format(cli, site, fmt):
    code, out, _ = cli("audit", "--fleet", str(site), "--format", fmt, "--fail-on", "warning")
    assert code == 1
    for host in ("gpu-v100", "gpu-l40s", "login"):
        assert str(site / host) in out or f"advisor-audit/{host}" in out, (fmt, host)
    if fmt == "json":
        doc = json.loads(out)
        by_host = {Path(b["path"]).name: b["audit"] for b in doc["bundles"]}
        assert [f["rule"] for f in by_host["gpu-v100"]["findings"]] == ["audit-nvlink-inactive"]
        # PCIe-only GPUs and nothing that shows peer-to-peer working: the one thing to ask, as advice
        assert [(f["rule"], f["severity"]) for f in by_host["gpu-l40s"]["findings"]] == [
            ("audit-pcie-p2p-unverified", "advice")
        ]
    if fmt == "sarif":
        runs = {r["automationDetails"]["id"]: r for r in json.loads(out)["runs"]}
        assert {r["ruleId"] for r in runs["advisor-audit/login"]["results"]} == {"audit-bundle-without-gpu-evidence"}
    if fmt == "md":
        assert out.startswith("# Audit: 3 bundles")


def test_a_bundle_without_gpu_evidence_fails_the_gate(cli, site):
    code, out, _ = cli("audit", str(site / "login"), "--fail-on", "warning", "--format", "json")
    doc = json.loads(out)
    (finding,) = doc["findings"]
    assert code == 1 and finding["rule"] == "audit-bundle-without-gpu-evidence" and finding["severity"] == "warning"
    (evidence,) = finding["evidence"]
    assert evidence["file"].endswith("manifest.json") and "no NVIDIA GPU evidence" in evidence["text"]
    code, out, _ = cli("audit", str(site / "login"), "--fail-on", "warning", "--lang", "de")
    assert code == 1 and "keine GPU-Belege" in out
    # a host whose GPUs answered passes the same gate
    code, out, _ = cli("audit", str(site / "gpu-l40s"), "--fail-on", "warning")
    assert code == 0 and "audit-bundle-without-gpu-evidence" not in out


def test_a_pasted_log_alone_is_not_a_bundle_and_gets_no_such_warning(cli):
    """A single pasted file is evidence, not a bundle: it says nothing about the GPUs, and no one said it would."""
    from tests.evidence_data import AUDIT_DATA

    _code, out, _ = cli("audit", str(AUDIT_DATA / "fail_28_nccl_shm_attach_missing_segment.txt"), "--format", "json")
    assert "audit-bundle-without-gpu-evidence" not in {f["rule"] for f in json.loads(out)["findings"]}


@pytest.fixture
def engine_process(tmp_path):
    """A running engine: the command line of a real vLLM launch with its real NCCL environment, plus an API
    key in the environment, --api-key, --hf-token and a password in a URL on the command line. The `vllm`
    it runs is a script that waits, so /proc shows `/bin/sh .../vllm serve ...` as it shows a real one's
    `python3 /usr/local/bin/vllm serve ...`."""
    script = tmp_path / "engine" / "vllm"
    script.parent.mkdir()
    script.write_text("#!/bin/sh\nsleep 120\n", encoding="utf-8")
    script.chmod(0o755)
    argv = [
        str(script),
        "serve",
        "/app/DeepSeek-R1",
        "--tensor-parallel-size",
        "32",
        "--api-key",
        SECRETS["--api-key"],
        "--hf-token",
        SECRETS["--hf-token"],
        "--otlp-traces-endpoint",
        f"https://tracer:{SECRETS['url-password']}@otel.example.com:4317",
    ]
    env = {"PATH": "/usr/bin:/bin", **NCCL_ENV, "VLLM_API_KEY": SECRETS["VLLM_API_KEY"]}
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        yield proc
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the script and its sleep
        proc.wait()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="collect reads running engines from /proc")
def test_collect_keeps_every_nccl_variable_hides_every_secret_and_says_what_it_hid(
    cli, monkeypatch, tmp_path, engine_process
):
    assert {"NCCL_P2P_LEVEL", "NCCL_IB_HCA", "NCCL_NET_GDR_LEVEL", "NCCL_IB_CUDA_SUPPORT"} <= set(NCCL_ENV)
    bundle = tmp_path / "bundle"
    code, out = _collect(
        cli, monkeypatch, bundle, {"topo -m": verbatim("topo_04_4xL40S_2socket_node_sys_nic_spaces.txt")}
    )
    assert code == 0
    engines = (bundle / "engine-processes.txt").read_text()
    line = next(x for x in engines.splitlines() if "/app/DeepSeek-R1" in x)
    for name, value in NCCL_ENV.items():
        assert f"{name}={value}" in line, name
    written = {p.name: p.read_text() for p in bundle.iterdir()}
    leaks = [(name, key) for name, text in written.items() for key, secret in SECRETS.items() if secret in text]
    assert leaks == [] and leaks == [(None, k) for k, s in SECRETS.items() if s in out]
    assert re.search(r"VLLM_API_KEY=secret-\d+", line) and re.search(r"--hf-token secret-\d+", line)
    manifest = json.loads(written["manifest.json"])
    hidden = manifest["redactions"]["engine-processes.txt"]
    # the URL's password goes with its user and host (the redactor reads user:password@host as one address)
    assert hidden["secret"] >= 3 and sum(hidden.values()) >= len(SECRETS) + 1
    assert all(kind.isalpha() or kind in ("gpu-uuid",) for kinds in manifest["redactions"].values() for kind in kinds)
    (said,) = [x for x in out.splitlines() if "redacted:" in x]
    assert "engine-processes.txt (" in said and " secret" in said
    # the audit still reads what collect kept
    code, out, _ = cli("audit", str(bundle), "--format", "json")
    assert json.loads(out)["facts"].get("nccl_p2p_level") == "NVL"


@pytest.fixture
def engine_with_secrets_in_its_family(tmp_path):
    """A running vLLM whose environment holds what the last review planted: secrets under VLLM_ names that
    vLLM does not document (VLLM_DB_PW, VLLM_SIGNING_KEY), an undocumented VLLM_ variable with a token in it,
    documented settings, a token under no family at all, and a secret flag in a form no table lists."""
    script = tmp_path / "engine" / "vllm"
    script.parent.mkdir()
    script.write_text("#!/bin/sh\nsleep 120\n", encoding="utf-8")
    script.chmod(0o755)
    env = {
        "PATH": "/usr/bin:/bin",
        "NCCL_P2P_LEVEL": "NVL",
        "NCCL_SOCKET_IFNAME": "eth0",
        "VLLM_ATTENTION_BACKEND": "FLASHINFER",
        "VLLM_DB_PW": "rose-garden-1987",
        "VLLM_SIGNING_KEY": "8f3c2a9d7e1b",
        "VLLM_EXTRA_CONFIG": "https://config.example.com/?blob=Zq81Lm2Nx7Pw4Kr9Ab3dE6gH",
        "SGLANG_LOG_LEVEL": "info",
        "MY_APP_SETTING": "unrelated-value-42",
    }
    argv = [str(script), "serve", "Qwen/Qwen3-8B", "--tensor-parallel-size", "2", "--admin-key=admin-secret-99"]
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        yield proc
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="collect reads running engines from /proc")
def test_collect_keeps_configuration_and_ships_no_engine_secret(
    cli, monkeypatch, tmp_path, engine_with_secrets_in_its_family
):
    """Issue #25: collect kept every VLLM_* variable with its value (VLLM_DB_PW, VLLM_SIGNING_KEY) and secret
    flags in forms it did not know. Now: documented settings with values, credentials by name with their
    values hidden, undocumented values that are no setting withheld, the rest not collected; the manifest
    names what was hidden and withheld, never a value."""
    bundle = tmp_path / "bundle"
    code, _out = _collect(
        cli, monkeypatch, bundle, {"topo -m": verbatim("topo_04_4xL40S_2socket_node_sys_nic_spaces.txt")}
    )
    assert code == 0
    line = next(x for x in (bundle / "engine-processes.txt").read_text().splitlines() if "Qwen/Qwen3-8B" in x)
    assert "NCCL_P2P_LEVEL=NVL" in line and "NCCL_SOCKET_IFNAME=eth0" in line
    assert "VLLM_ATTENTION_BACKEND=FLASHINFER" in line and "SGLANG_LOG_LEVEL=info" in line
    assert re.search(r"VLLM_DB_PW=secret-\d+", line) and re.search(r"VLLM_SIGNING_KEY=secret-\d+", line)
    assert re.search(r"--admin-key=secret-\d+", line) and "--tensor-parallel-size 2" in line
    assert "VLLM_EXTRA_CONFIG=<withheld: not a documented setting>" in line
    assert "MY_APP_SETTING" not in line
    written = "".join(p.read_text() for p in bundle.iterdir())
    for planted in (
        "rose-garden-1987",
        "8f3c2a9d7e1b",
        "Zq81Lm2Nx7Pw4Kr9Ab3dE6gH",
        "admin-secret-99",
        "unrelated-value-42",
    ):
        assert planted not in written, planted
    manifest = json.loads((bundle / "manifest.json").read_text())
    assert {"VLLM_DB_PW", "VLLM_SIGNING_KEY", "admin-key"} <= set(manifest["redacted_names"]["engine-processes.txt"])
    assert manifest["withheld_names"] == {"engine-processes.txt": ["VLLM_EXTRA_CONFIG"]}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="process groups and /proc")
@pytest.mark.parametrize("signo", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_collect_stopped_by_a_signal_ends_the_running_tool_and_its_children(tmp_path, signo):
    """Issue #25: interrupting collect left the running tool's child alive in 3 of 4 runs."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    pids = tmp_path / "pids"
    (bin_dir / "nvidia-smi").write_text(f"#!/bin/sh\nsleep 300 &\necho $! >> '{pids}'\nsleep 300\n")
    (bin_dir / "nvidia-smi").chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:/usr/bin:/bin"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "advisor", "collect", "-o", str(tmp_path / "bundle")],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 20
    while not pids.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert pids.exists(), "the tool never started"
    proc.send_signal(signo)
    _out, err = proc.communicate(timeout=20)
    assert proc.returncode == 128 + signo and "no bundle written" in err
    time.sleep(0.2)
    children = [int(p) for p in pids.read_text().split()]
    assert children and not [p for p in children if Path(f"/proc/{p}").exists() and _running(p)]
    assert not (tmp_path / "bundle" / "manifest.json").exists()


def _running(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (OSError, IndexError):
        return False
