"""The smaller defects of issue #25, each as a user would meet it: a base-60 number in a scenario, a
config.json no model can have, an NVLink count no GPU has, a terminal escape in a transcript or a file
name, a rule expression that would build a gigabyte of text."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from advisor.errors import ExpressionError
from advisor.kb.expr import parse
from advisor.kb.paths import rules_dir

DATA = Path(__file__).parent / "data"


def test_a_yaml_1_1_base_60_number_is_text_not_ninety_gpus(cli, tmp_path):
    scenario = tmp_path / "s.yaml"
    scenario.write_text(
        "model: Llama 3.3 70B Instruct\nhardware: {gpu: H100 SXM, gpus_per_node: 1:30, nodes: 1}\n"
        "workload: {concurrent_conversations: 8, context_tokens: 8192}\n"
    )
    code, out, err = cli("recommend", str(scenario))
    assert code == 2 and out == ""
    assert "hardware.gpus_per_node: expected a whole number, not '1:30'" in err


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"num_key_value_heads": 64}, "64 KV heads with 32 attention heads"),
        ({"num_key_value_heads": 5}, "5 KV heads with 32 attention heads"),
        ({"num_experts": 8, "num_experts_per_tok": 64}, "64 active experts per token of 8 experts"),
        ({"hidden_size": 16, "head_dim": None}, "hidden_size 16 is smaller than its 32 attention heads"),
    ],
)
def test_an_impossible_config_json_is_refused_with_the_reason(cli, tmp_path, change, says):
    config = {**json.loads((DATA / "qwen3-8b-config.json").read_text()), **change}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    code, out, err = cli("recommend", "--model", str(path), "--gpu", "H100 SXM", "--gpus", "2", "--users", "4")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "impossible model config" in err and says in err


def test_a_real_config_json_still_reads(cli, tmp_path):
    code, out, _err = cli(
        "recommend", "--model", str(DATA / "qwen3-8b-config.json"), "--gpu", "H100 SXM", "--gpus", "2", "--users", "4"
    )
    assert code == 0 and "2 × NVIDIA H100 SXM" in out


def test_nv999_in_a_topology_is_a_garbled_row_not_999_nvlinks(cli, tmp_path):
    topo = tmp_path / "topo.txt"
    topo.write_text(
        "\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\nGPU0\t X \tNV999\t0-63\t0\nGPU1\tNV999\t X \t0-63\t0\n"
        "\nLegend:\n\n  X    = Self\n  NV#  = Connection traversing a bonded set of # NVLinks\n"
    )
    code, out, err = cli("audit", str(topo), "--format", "json")
    assert code == 2 and out == ""
    assert "row GPU0 is garbled" in err and "999" not in err.replace("NV999", "")


def test_a_tampered_transcript_cannot_drive_the_terminal(cli, tmp_path):
    """A transcript whose text holds an escape sequence (clear the screen, set the title) is shown with the
    escape as visible text, never as the raw byte."""
    code, _out, _err = cli(
        "recommend",
        "--model",
        "llama-3.3-70b",
        "--gpu",
        "H100 SXM",
        "--gpus",
        "2",
        "--users",
        "4",
        "--record",
        "--transcripts",
        str(tmp_path),
    )
    assert code == 0
    path = next(tmp_path.glob("*.json"))
    doc = json.loads(path.read_text())
    doc["turns"][0]["said"] = "hello \x1b[2J\x1b]0;owned\x07 \x9b31m there"
    tampered = tmp_path / "tampered.json"
    tampered.write_text(json.dumps(doc))
    code, out, _err = cli("transcripts", "show", str(tampered), "--transcripts", str(tmp_path))
    assert "\x1b" not in out and "\x07" not in out and "\x9b" not in out
    assert "\\x1b[2J" in out or code == 2


def test_an_evidence_file_name_with_an_escape_is_printed_as_text(cli, tmp_path):
    name = tmp_path / "topo\x1b[31mred.txt"
    shutil.copy(DATA / "audit" / "topo_01_2xA100_della_2socket_SYS_mlx5_cols.txt", name)
    _code, out, err = cli("audit", str(name))
    assert "\x1b" not in out + err and "\\x1b[31mred" in out + err


def test_a_rule_expression_that_repeats_text_is_refused_when_the_rule_base_loads(cli, tmp_path, monkeypatch):
    with pytest.raises(ExpressionError, match="arithmetic takes numbers"):
        parse("'a' * 10 ** 9 == 'b'", [])
    rules = tmp_path / "rules"
    shutil.copytree(rules_dir(), rules)
    path = rules / "p2p.yaml"
    text = path.read_text()
    when = next(line for line in text.splitlines() if line.strip().startswith("when:"))
    path.write_text(text.replace(when, when.split("when:")[0] + "when: \"'a' * 10 ** 9 == 'b'\"", 1))
    monkeypatch.setenv("ADVISOR_RULES_DIR", str(rules))
    code, _out, err = cli("rules", "check")
    assert code == 2 and "arithmetic takes numbers, not text or a list" in err
