"""Every command's JSON carries `trace`: each rule it evaluated, its outcome, and the facts it read.

A support engineer who asks "why did the audit not warn about ACS here?" reads the audit's trace;
one who asks why `size` gave no purchase advice reads the sizing trace."""

from __future__ import annotations

import json
from pathlib import Path

AUDIT = Path(__file__).parent / "data" / "audit"


def _outcomes(doc: dict) -> dict[str, object]:
    return {t["rule"]: t["outcome"] for t in doc["trace"]}


def test_size_json_traces_every_purchase_rule(cli, engine):
    code, out, _ = cli("size", "--model", "llama 3.1 8b", "--users", "2", "--format", "json")
    doc = json.loads(out)
    assert code == 0
    sizing_rules = {r.id for r in engine.rules.in_scope("sizing")}
    assert set(_outcomes(doc)) == sizing_rules
    fired = {p["rule"] for p in doc["purchase"]}
    assert fired and all(_outcomes(doc)[r] is True for r in fired)
    assert all(t["facts"] for t in doc["trace"])


def test_audit_json_traces_the_host_rules_and_the_facts_they_read(cli, engine):
    """lspci -vvv of an ESC8000A whose GPU link trained at 2.5 GT/s: the host rule fires, with its fact."""
    code, out, _ = cli(
        "audit", str(AUDIT / "lspci_01_rtx6000ada_esc8000a_gpu_lnksta_2.5GT_downgraded_bar64G.txt"), "--format", "json"
    )
    doc = json.loads(out)
    outcomes = _outcomes(doc)
    assert {r.id for r in engine.rules.in_scope("audit")} <= set(outcomes)
    downgraded = next(t for t in doc["trace"] if t["rule"] == "audit-pcie-link-downgraded")
    assert downgraded["outcome"] is True and downgraded["facts"]["gpu_link_downgraded"]
    assert outcomes["failure-collective-timeout"] is not True


def test_audit_trace_includes_the_deployed_layouts_rules(cli, tmp_path):
    """A planned deployment beside a real topology: the layout rules appear with the deployed layout."""
    plan = tmp_path / "deployment.yaml"
    plan.write_text("model: llama 3.3 70b\nprecision: fp8\nhardware:\n  gpu: rtx 5090\ndeployment:\n  tp: 2\n")
    code, out, _ = cli(
        "audit", str(plan), str(AUDIT / "topo_06_2xRTX5090_threadripper_phb_tabs.txt"), "--format", "json"
    )
    doc = json.loads(out)
    assert {t["layout"] for t in doc["trace"] if t["layout"]} == {"TP 2"}
    assert any(t["layout"] is None for t in doc["trace"])  # scenario and host rules too
