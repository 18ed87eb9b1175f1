"""Every JSON document the advisor writes validates against its published JSON Schema (advisor/schemas/).

The documents are real outputs: `recommend` on several scenarios (German, a mixture of experts, a
model that fits nowhere), `audit` of real captures from tests/data/audit as single files and as
bundles, a fleet audit, `size`, the manifest `collect` writes, and a recorded transcript. The
schemas are specific enough to reject a broken document.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator, FormatChecker
from referencing import Registry, Resource

from advisor.inputs.scenario import ENUMS
from advisor.kb.rules import SEVERITIES
from advisor.render import schemas
from tests.evidence_data import AUDIT_DATA, bundle, verbatim

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "tests" / "data" / "scenario-rtx-pro-60-users.yaml"
REGISTRY = Registry().with_resources([(s["$id"], Resource.from_contents(s)) for s in schemas.all_schemas()])
PLAN_3090 = (
    "model: Qwen3-32B\nprecision: fp8\nhardware: {gpu: RTX 3090}\nworkload: {concurrent_conversations: 4}\n"
    "deployment: {tp: 2, gpus: [0, 1]}\n"
    "accept:\n  - {rule: tp-over-pcie, reason: NVLink bridges are on order, expires: 2099-01-01}\n"
)


def problems(doc: dict[str, Any], schema_id: str | None = None) -> list[str]:
    """Where a document breaks the schema of its own `schema` id (or of `schema_id`), one line each."""
    validator = Draft202012Validator(
        schemas.load(schema_id or doc["schema"]), registry=REGISTRY, format_checker=FormatChecker()
    )
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message[:200]}" for e in validator.iter_errors(doc)]


def valid(doc: dict[str, Any]) -> dict[str, Any]:
    found = problems(doc)
    assert not found, "\n".join(found[:10])
    return doc


def test_every_schema_is_a_draft_2020_12_schema_and_every_id_has_one():
    for schema in schemas.all_schemas():
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        Draft202012Validator.check_schema(schema)
    assert set(schemas.FILES) == {
        "advisor.recommendation/1",
        "advisor.audit/1",
        "advisor.audit-fleet/1",
        "advisor.sizing/1",
        "advisor.collect/1",
        "advisor.transcript/1",
    }
    for schema_id in schemas.FILES:
        assert schemas.load(schema_id)["properties"]["schema"] == {"const": schema_id}


def test_the_schemas_enums_are_the_advisors_own():
    common = schemas.all_schemas()[0]["$defs"]
    assert common["severity"]["enum"] == list(SEVERITIES)
    assert common["hardware"]["properties"]["nvlink"]["enum"] == list(ENUMS["nvlink"])
    assert common["hardware"]["properties"]["iommu"]["enum"] == list(ENUMS["iommu"])
    assert common["workload"]["properties"]["goal"]["enum"] == list(ENUMS["goal"])
    assert common["scenario"]["properties"]["engine"]["enum"] == list(ENUMS["engine"])


@pytest.mark.parametrize(
    "args",
    [
        ("--model", "llama 3.1 8b", "--gpu", "l4"),
        ("--model", "qwen3-32b", "--gpu", "h100 sxm", "--gpus", "8", "--users", "10", "--lang", "de"),
        ("--model", "Qwen3-235B-A22B", "--precision", "fp8", "--gpu", "h100 sxm", "--gpus", "8", "--users", "32"),
        ("--model", "Llama 3.1 405B", "--gpu", "rtx 4090", "--gpus", "2"),
        (str(SCENARIO), "--layout", "tp=1"),
    ],
    ids=["one-card", "german", "moe", "no-fit", "why-not-layout"],
)
def test_recommendations_validate(cli, args):
    code, out, err = cli("recommend", *args, "--format", "json")
    assert code == 0, err
    doc = valid(json.loads(out))
    if "405B" in args:
        assert doc["layout"] is None and doc["findings"][0]["severity"] == "error"
    if "de" in args:
        assert doc["lang"] == "de"


def test_audits_of_real_captures_validate_single_files_and_bundles(cli, tmp_path):
    singles = {
        "audit-pcie-link-downgraded": [
            "lspci_01_rtx6000ada_esc8000a_gpu_lnksta_2.5GT_downgraded_bar64G.txt",
            "topo_06_2xRTX5090_threadripper_phb_tabs.txt",
            "launch_01_vllm_docker_run_2x4090_tp2_nccl_p2p_disable.txt",
        ],
        "failure-collective-timeout": [
            "log_03_vllm_watchdog_allreduce_timeout_600s.txt",
            "log_01_sglang_2xT4_kaggle_peer_access_not_supported.txt",
        ],
        "audit-busbw-below-link": [
            "nccl_08_4090_p2p_patch_allreduce_12.7GBs_rows_excerpt.txt",
            "smi_05_4xRTXPRO6000_query_gpu_csv_noheader.txt",
        ],
        "audit-nvlink-inactive": ["smi_03_v100sxm2_azure_nvlink_status_two_links_inactive.txt"],
        None: [
            "dmesg_02_3x1080Ti_x399_amdvi_io_page_fault_p2p.txt",
            "cmdline_01_esc8000a_grub_amd_iommu_off_iommu_pt.txt",
            "launch_04_vllm_api_server_tp8_expert_parallel_typo_flag.txt",
        ],
    }
    for rule, names in singles.items():
        paths = [str(AUDIT_DATA / n) for n in names]
        code, out, err = cli("audit", *paths, "--format", "json", "--fail-on", "never")
        assert code == 0, err
        findings = {f["rule"]: f for f in valid(json.loads(out))["findings"]}
        if rule:
            assert findings[rule]["evidence"][0]["line"] > 0
    folder = bundle(
        tmp_path / "b",
        {"topo.txt": verbatim("topo_11_4xRTX3090_nv4_bridged_pairs_0-2_1-3.txt"), "deployment.yaml": PLAN_3090},
    )
    code, out, _ = cli("audit", str(folder), "--format", "json", "--lang", "de")
    doc = valid(json.loads(out))
    accepted = next(f for f in doc["findings"] if f["rule"] == "tp-over-pcie")
    assert accepted["suppressed"] == {"reason": "NVLink bridges are on order", "expires": "2099-01-01"}


def test_fleet_audit_validates_with_an_unusable_bundle(cli, tmp_path):
    bundle(tmp_path / "host-a", {"topo.txt": verbatim("topo_04_4xL40S_2socket_node_sys_nic_spaces.txt")})
    bundle(
        tmp_path / "host-b",
        {"topo.txt": verbatim("topo_11_4xRTX3090_nv4_bridged_pairs_0-2_1-3.txt"), "deployment.yaml": PLAN_3090},
    )
    bundle(tmp_path / "host-empty", {"empty.txt": ""})
    code, out, _ = cli("audit", "--fleet", str(tmp_path), "--format", "json")
    doc = valid(json.loads(out))
    assert sorted(b["error"] is None for b in doc["bundles"]) == [False, True, True]


@pytest.mark.parametrize(
    "args",
    [
        ("--model", "Qwen3-235B-A22B", "--precision", "fp8", "--users", "32"),
        ("--model", "llama 3.3 70b", "--precision", "fp8", "--lang", "de"),
    ],
)
def test_sizing_validates(cli, args):
    code, out, err = cli("size", *args, "--format", "json")
    assert code == 0, err
    doc = valid(json.loads(out))
    assert doc["smallest"] in {p["id"] for p in doc["platforms"]} and doc["purchase"]


def test_collect_manifest_validates(cli, tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    capture = bin_dir / "nvidia-smi.out"
    capture.write_text(verbatim("topo_04_4xL40S_2socket_node_sys_nic_spaces.txt").split("\n", 1)[1], encoding="utf-8")
    smi = bin_dir / "nvidia-smi"
    smi.write_text(f"#!/bin/sh\nexec /bin/cat '{capture}'\n", encoding="utf-8")
    smi.chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    code, _, _ = cli("collect", "-o", str(tmp_path / "bundle"))
    monkeypatch.setenv("PATH", os.defpath)
    assert code == 0
    manifest = valid(json.loads((tmp_path / "bundle" / "manifest.json").read_text()))
    assert {s["status"] for s in manifest["steps"]} >= {"ok", "missing"}


def test_recorded_transcripts_validate(cli, tmp_path):
    code, _, err = cli("recommend", str(SCENARIO), "--record", "--transcripts", str(tmp_path / "r"))
    assert code == 0 and "transcript recorded" in err
    doc = valid(json.loads(next((tmp_path / "r").glob("*.json")).read_text()))
    assert doc["complete"] and doc["result"]["layout_label"] == "TP 2"
    folder = bundle(
        tmp_path / "b",
        {"topo.txt": verbatim("topo_11_4xRTX3090_nv4_bridged_pairs_0-2_1-3.txt"), "deployment.yaml": PLAN_3090},
    )
    cli("audit", str(folder), "--record", "--transcripts", str(tmp_path / "a"))
    doc = valid(json.loads(next((tmp_path / "a").glob("*.json")).read_text()))
    assert doc["kind"] == "audit" and any(f["suppressed"] for f in doc["result"]["findings"])
    assert doc["result"]["ticket"]["deploy"]["layout"]  # the ticket's "deploy instead" validates too


def test_the_golden_transcripts_validate_with_their_ticket_blocks():
    from tests.golden import FOLDER

    for path in sorted(FOLDER.glob("*.json")):
        doc = valid(json.loads(path.read_text()))
        assert doc["result"]["ticket"]["question"], path.name


def test_a_finding_has_one_shape_in_every_document(cli, tmp_path):
    _, out, _ = cli("recommend", "--model", "Qwen3-235B-A22B", "--gpu", "h100 sxm", "--gpus", "8", "--format", "json")
    recommended = json.loads(out)["findings"][0]
    _, out, _ = cli("size", "--model", "Llama 3.1 405B", "--precision", "fp8", "--users", "2", "--format", "json")
    purchase = json.loads(out)["purchase"][0]
    folder = bundle(
        tmp_path / "b",
        {"topo.txt": verbatim("topo_11_4xRTX3090_nv4_bridged_pairs_0-2_1-3.txt"), "deployment.yaml": PLAN_3090},
    )
    _, out, _ = cli("audit", str(folder), "--format", "json")
    audited = json.loads(out)["findings"][0]
    assert list(recommended) == list(purchase)
    assert list(audited) == [*recommended, "evidence", "suppressed"]


def test_the_schemas_reject_broken_documents(cli):
    capture = AUDIT_DATA / "smi_03_v100sxm2_azure_nvlink_status_two_links_inactive.txt"
    _, out, _ = cli("audit", str(capture), "--format", "json")
    audit = valid(json.loads(out))
    no_rule = json.loads(out)
    del no_rule["findings"][0]["rule"]
    assert "findings/0: 'rule' is a required property" in problems(no_rule)
    bad = json.loads(out)
    bad["findings"][0]["severity"] = "fatal"
    bad["findings"][0]["evidence"] = [{"file": "topo.txt", "line": "three", "text": "GPU0"}]
    assert {p.split(":")[0] for p in problems(bad)} == {"findings/0/severity", "findings/0/evidence/0/line"}
    assert problems(audit, "advisor.recommendation/1")  # an audit is not a recommendation
    _, out, _ = cli("size", "--model", "llama 3.1 8b", "--format", "json")
    sizing = json.loads(out)
    sizing["platforms"][0]["status"] = "maybe"
    sizing["purchase"] = [{"rule": "buy-one-card"}]
    found = problems(sizing)
    assert any(p.startswith("platforms/0/status: 'maybe' is not one of") for p in found)
    assert any(p.startswith("purchase/0: 'severity' is a required property") for p in found)
