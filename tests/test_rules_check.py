"""`advisor rules check` passes on the shipped rule base and names the id of each kind of breakage."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from advisor.core.engine import Engine
from advisor.errors import AdvisorError
from advisor.kb.paths import knowledge_dir, rules_dir
from advisor.rules_check import check
from tests.editing import edit_once


def test_shipped_rule_base_and_knowledge_base_pass(cli):
    code, out, err = cli("rules", "check")
    assert code == 0, err
    assert out.startswith("rules check: ok")


@pytest.fixture()
def rules_copy(tmp_path: Path) -> Path:
    target = tmp_path / "rules"
    shutil.copytree(rules_dir(), target)
    return target


def _problems(rules: Path, run_cases: bool = False) -> list[str]:
    return check(Engine.load(knowledge_dir(), rules), run_cases=run_cases).problems


def test_a_broken_citation_is_named(rules_copy):
    edit_once(
        rules_copy / "p2p.yaml",
        'source: nccl-troubleshooting, locator: "PCI Access Control Services (ACS), Baremetal systems", quote: "If PCI',
        'source: nccl-troubleshooting, locator: "PCI Access Control Services (ACS), Baremetal systems", '
        'quote: "Never disable ACS. If PCI',
    )
    problems = _problems(rules_copy)
    assert any(p.startswith("rule acs-redirects-p2p") and "quote not found" in p for p in problems)


def test_a_citation_of_an_unknown_source_is_named(rules_copy):
    edit_once(rules_copy / "topology.yaml", "source: akamai-rtx-pro-6000-docs", "source: akamai-docs-nowhere")
    assert any(
        "shortest-topology-path" in p and "unknown source 'akamai-docs-nowhere'" in p for p in _problems(rules_copy)
    )


def test_an_unknown_fact_refuses_the_rule_base_with_file_line_and_rule(rules_copy):
    edit_once(
        rules_copy / "p2p.yaml",
        "when: workload_kind == 'inference' and tp > 1 and (tp_link == 'pcie' or tp_link == 'socket')\n",
        "when: workload_kind == 'inference' and tp > 1 and (tp_lnk == 'pcie' or tp_link == 'socket')\n",
    )
    with pytest.raises(AdvisorError) as err:
        Engine.load(knowledge_dir(), rules_copy)
    message = err.value.one_line()
    assert "p2p.yaml:" in message and "rule tp-over-pcie" in message and "unknown name 'tp_lnk'" in message
    assert "tp_link" in message  # the closest known name


def test_a_missing_translation_refuses_the_rule_base(rules_copy):
    edit_once(rules_copy / "topology.yaml", 'de: "Die GPUs einer Kopie auf dem kürzesten PCIe-Pfad halten"', 'de: ""')
    with pytest.raises(AdvisorError, match="shortest-topology-path.*missing its 'de' text"):
        Engine.load(knowledge_dir(), rules_copy)


def test_a_duplicate_rule_id_refuses_the_rule_base(rules_copy):
    edit_once(rules_copy / "moe.yaml", "- id: moe-consider-expert-parallel", "- id: moe-expert-parallel")
    with pytest.raises(AdvisorError, match="duplicate rule id 'moe-expert-parallel'"):
        Engine.load(knowledge_dir(), rules_copy)


def test_an_unknown_formula_name_refuses_the_knowledge_base(tmp_path):
    kb = tmp_path / "knowledge"
    shutil.copytree(knowledge_dir(), kb)
    edit_once(kb / "formulas.yaml", "expr: hidden * act_bytes", "expr: hidden_size * act_bytes")
    with pytest.raises(AdvisorError, match="formula activation-per-token.*unknown name 'hidden_size'"):
        Engine.load(kb, rules_dir())


def test_a_rule_that_no_case_fires_is_named(rules_copy):
    edit_once(
        rules_copy / "p2p.yaml",
        "p2p: broken}, workload: {concurrent_conversations: 60}}",
        "p2p: ok}, workload: {concurrent_conversations: 60}}",
    )
    problems = _problems(rules_copy, run_cases=True)
    assert "rule tp-over-pcie-p2p-broken fires[0]: the case does not fire the rule" in problems


def test_rule_text_is_never_executed(rules_copy):
    edit_once(
        rules_copy / "p2p.yaml",
        "when: workload_kind == 'inference' and tp > 1 and (tp_link == 'pcie' or tp_link == 'socket')\n",
        "when: __import__('os').system('true')\n",
    )
    with pytest.raises(AdvisorError, match="only the functions"):
        Engine.load(knowledge_dir(), rules_copy)


def test_cli_rules_check_exits_2_and_lists_problems(rules_copy, monkeypatch, cli):
    edit_once(rules_copy / "topology.yaml", "source: akamai-rtx-pro-6000-docs", "source: akamai-docs-nowhere")
    monkeypatch.setenv("ADVISOR_RULES_DIR", str(rules_copy))
    code, out, err = cli("rules", "check", "--quick")
    assert code == 2
    assert "akamai-docs-nowhere" in err


@pytest.fixture()
def knowledge_copy(tmp_path: Path) -> Path:
    target = tmp_path / "knowledge"
    shutil.copytree(knowledge_dir(), target)
    return target


def test_an_exact_usable_memory_resting_on_an_estimated_total_is_named_with_the_gpu(knowledge_copy, monkeypatch, cli):
    # The failure: "exact: the memory the driver reports" printed for a card without a driver report.
    edit_once(
        knowledge_copy / "formulas.yaml",
        "    when: not gpu_mem_reported\n    unit: GiB\n    kind: estimate\n",
        "    when: not gpu_mem_reported\n    unit: GiB\n    kind: exact\n",
    )
    monkeypatch.setenv("ADVISOR_KNOWLEDGE_DIR", str(knowledge_copy))
    code, out, err = cli("rules", "check", "--quick")
    assert code == 2
    assert "gpu gb10-dgx-spark: figure usable_gib_per_gpu is marked exact but rests on the estimate gpu_mem_gib" in err
    assert "gpu b300: figure usable_gib_per_gpu is marked exact" in err
    assert "gpu h100-pcie:" not in err and "gpu h200-nvl:" not in err


def test_a_nominal_memory_figure_without_a_stated_estimate_is_named(knowledge_copy):
    edit_once(
        knowledge_copy / "gpus.yaml",
        "    memory_gib_reported: 79.65\n    memory_bandwidth_gbs: 2000\n",
        "    memory_gib_reported: null\n    memory_bandwidth_gbs: 2000\n",
    )
    problems = check(Engine.load(knowledge_copy, rules_dir()), run_cases=False).problems
    assert (
        "gpu h100-pcie: no driver-reported memory and no stated estimate with its basis (memory_estimate_basis)"
        in problems
    )


def test_a_driver_total_that_its_quoted_capture_does_not_show_is_named(knowledge_copy):
    # The H200 NVL block: its nominal 141 GB as GiB (131.3) in place of the 143,771 MiB its capture shows.
    rest = (
        '    memory_bandwidth_gbs: 4800\n    memory_type: "HBM3e"\n'
        "    pcie_gen: 5\n    pcie_lanes: 16\n    nvlink: bridge-4"
    )
    gpus = knowledge_copy / "gpus.yaml"
    edit_once(gpus, "    memory_gib_reported: 140.4\n" + rest, "    memory_gib_reported: 131.3\n" + rest)
    problems = check(Engine.load(knowledge_copy, rules_dir()), run_cases=False).problems
    wrong = "gpu h200-nvl: memory_gib_reported 131.3 is not the total its quote shows"
    assert any(p.startswith(wrong) for p in problems)
