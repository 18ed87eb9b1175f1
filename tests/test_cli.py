"""The command line as a user meets it: answers on stdout, one-line errors on stderr, exit code 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"


def test_recommend_from_flags_leads_with_the_decision(cli):
    code, out, err = cli(
        "recommend",
        "--model",
        "llama 3.3 70b",
        "--precision",
        "fp8",
        "--kv-cache-dtype",
        "fp8",
        "--gpu",
        "rtx pro 6000",
        "--gpus",
        "2",
        "--users",
        "60",
        "--context",
        "8k",
    )
    assert code == 0, err
    lines = out.splitlines()
    assert lines[2].startswith("Recommendation: TP 2")
    assert "83 conversations" in out and "81.9 ms" in out
    assert "vllm serve RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic --tensor-parallel-size 2" in out
    assert "--quantization" not in out  # the published FP8 checkpoint, not online quantization of the BF16 one
    assert "Sources" in out and "seed" not in lines[2]


def test_recommend_scenario_file_as_json_follows_the_contract(cli):
    code, out, _ = cli("recommend", str(DATA / "scenario-rtx-pro-60-users.yaml"), "--format", "json")
    assert code == 0
    doc = json.loads(out)
    assert doc["schema"] == "advisor.recommendation/1"
    assert doc["layout"] == {"replicas": 1, "tp": 2, "pp": 1, "ep": 1, "gpus_per_replica": 2}
    assert set(doc["figures"]) == {
        "weights_gib",
        "usable_gib_per_gpu",
        "kv_gib_per_conversation",
        "conversations",
        "allreduce_count_per_token",
        "allreduce_mib_per_token",
        "prefill_allreduce_ms",
        "bubble_fraction",
        "decode_tokens_per_s_upper_bound",
        "one_user_tokens_per_s",
        "tokens_per_s_per_user_at_load",
        "throughput_tokens_per_s",
        "ttft_ms",
        "train_state_gib_per_gpu",  # training figures: None in serving
        "grad_sync_s_per_step",
        "train_step_s",
    }
    assert doc["figures"]["train_state_gib_per_gpu"] is None
    assert doc["figures"]["train_step_s"] is None
    assert doc["figures"]["bubble_fraction"] is None
    assert doc["input"]["hardware"]["gpu"].startswith("NVIDIA RTX PRO 6000")
    finding = next(f for f in doc["findings"] if f["rule"] == "tp-over-pcie")
    assert finding["severity"] == "advice" and "p2p" in finding["topics"]
    assert all({"id", "locator", "quote"} <= set(s) for s in finding["sources"])
    assert {u["fact"] for u in doc["unknowns"]} >= {"p2p", "iommu", "acs"}
    assert all(a["why_not"] for a in doc["alternatives"])
    undecided = next(t for t in doc["trace"] if t["rule"] == "tp-over-pcie-p2p-broken")
    assert undecided["outcome"] is None and undecided["facts"]["p2p"] is None and undecided["layout"] == "TP 2"
    trace = doc["figure_traces"]["prefill_allreduce_ms"]
    assert trace["kind"] == "estimate" and "ring" in trace["assumptions"]


def test_flags_override_the_scenario_file(cli):
    code, out, _ = cli("recommend", str(DATA / "scenario-rtx-pro-60-users.yaml"), "--users", "20", "--format", "json")
    assert json.loads(out)["layout"]["replicas"] == 2


def test_markdown_report_has_sections_and_numbered_sources(cli):
    code, out, _ = cli("recommend", str(DATA / "scenario-rtx-pro-60-users.yaml"), "--format", "md")
    assert out.startswith("# Recommendation: TP 2")
    assert "## Findings" in out and "## Alternatives considered" in out and "## Sources" in out
    assert "\n1. " in out and "```sh" in out


def test_german_report(cli):
    code, out, _ = cli("recommend", str(DATA / "scenario-rtx-pro-60-users.yaml"), "--lang", "de")
    assert "Empfehlung: TP 2" in out and "Quellen" in out and "Gespräche" in out


def test_why_not_a_given_layout(cli):
    code, out, _ = cli(
        "recommend", str(DATA / "scenario-rtx-pro-60-users.yaml"), "--layout", "replicas=2", "--format", "json"
    )
    doc = json.loads(out)
    assert doc["layout"]["replicas"] == 2
    assert any(f["rule"] == "users-exceed-capacity" for f in doc["findings"])


def test_model_given_as_a_config_json_path(cli):
    code, out, err = cli(
        "recommend",
        "--model",
        str(DATA / "qwen3-8b-config.json"),
        "--gpu",
        "L4",
        "--gpus",
        "2",
        "--users",
        "4",
        "--format",
        "json",
    )
    assert code == 0, err
    doc = json.loads(out)
    assert "from config.json" in doc["input"]["model"]
    assert doc["layout"]["replicas"] == 2


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--model", "llama 3.3 70b", "--gpu", "rtx pro 9000"], "unknown GPU 'rtx pro 9000'"),
        (["--model", "lama 33 70", "--gpu", "l40s"], "unknown model 'lama 33 70' (did you mean"),
        (["--model", "llama 3.3 70b", "--gpu", "l40s", "--gpus", "0"], "must be at least 1"),
        (["--model", "llama 3.3 70b", "--gpu", "l40s", "--users", "-5"], "must be at least 1"),
        (["--model", "llama 3.3 70b", "--gpu", "l40s", "--users", "lots"], "expected a whole number"),
        (["--model", "llama 3.3 70b", "--gpu", "l40s", "--context", "10000000000"], "beyond"),
        (["--model", "llama 3.3 70b", "--gpu", "l40s", "--gpus", "1000000"], "beyond what the advisor plans for"),
        (["--model", "llama 3.3 70b", "--gpu", "l40s", "--memory-utilization", "nan"], "positive number"),
        (["--model", "llama 3.3 70b", "--gpu", "l40s", "--precision", "fp7"], "unknown precision 'fp7'"),
        (["--model", "llama 3.3 70b", "--gpu", "l40s", "--nvlink", "bridge-3"], "is not one of none, bridge-2"),
        (["--gpu", "l40s"], "missing field 'model'"),
    ],
)
def test_bad_input_gets_one_clear_line_and_exit_2(cli, args, expected):
    code, out, err = cli("recommend", *args)
    assert code == 2
    assert out == ""
    assert expected in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_malformed_yaml_and_unknown_fields_are_located(cli, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("model: llama 70b\nhardware:\n  gpu: [l40s\n", encoding="utf-8")
    code, _, err = cli("recommend", str(bad))
    assert code == 2 and "bad.yaml" in err and "line" in err and "malformed YAML" in err
    typo = tmp_path / "typo.yaml"
    typo.write_text("model: llama 70b\nhardware:\n  gpu: l40s\n  gpus_per_nod: 2\n", encoding="utf-8")
    code, _, err = cli("recommend", str(typo))
    assert code == 2 and "unknown field 'hardware.gpus_per_nod'" in err and "gpus_per_node" in err
    misplaced = tmp_path / "misplaced.yaml"
    misplaced.write_text("model: llama 70b\ngpu: l40s\n", encoding="utf-8")
    code, _, err = cli("recommend", str(misplaced))
    assert code == 2 and "belongs under 'hardware:'" in err


def test_billion_laughs_is_refused(cli, tmp_path):
    lines = ["a: &a [x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 12):
        lines.append(
            f"a{i}: &a{i} [*{'a' if i == 1 else f'a{i - 1}'}, "
            + ", ".join([f"*{'a' if i == 1 else f'a{i - 1}'}"] * 8)
            + "]"
        )
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, _, err = cli("recommend", str(bomb))
    assert code == 2 and "alias" in err


def test_more_than_a_hundred_alias_references_are_refused(cli, tmp_path):
    # 101 references to one anchor expand to little, but the reader's limit is on references
    scenario = tmp_path / "aliases.yaml"
    scenario.write_text("x: &x 1\nlist: [" + ", ".join(["*x"] * 101) + "]\n", encoding="utf-8")
    code, _, err = cli("recommend", str(scenario))
    assert code == 2 and "more than 100 alias references" in err


def test_debug_shows_the_traceback(cli):
    from advisor.errors import InputError

    with pytest.raises(InputError):
        cli("--debug", "recommend", "--model", "nonexistent-model-xyz", "--gpu", "l40s")


def test_size_covers_the_catalogue_and_picks_the_smallest_that_serves(cli):
    code, out, err = cli(
        "size", "--model", "Qwen3-235B-A22B", "--precision", "fp8", "--users", "32", "--format", "json"
    )
    assert code == 0, err
    doc = json.loads(out)
    assert doc["schema"] == "advisor.sizing/1"
    statuses = {p["id"]: p["status"] for p in doc["platforms"]}
    assert statuses["rtx-pro-6000-ws-x1"] == "no-fit"
    assert statuses["rtx-pro-6000-ws-x4"] == "split"
    assert doc["smallest"] == "rtx-pro-6000-ws-x4"
    # a B300 holds it alone, but SXM modules come on boards: no "buy one card" beside a 4-GPU answer
    assert {f["rule"] for f in doc["purchase"]} == {"buy-board-when-only-sxm-holds-it"}


def test_size_purchase_advice_for_a_model_no_card_holds(cli):
    code, out, _ = cli("size", "--model", "Llama 3.1 405B", "--precision", "fp8", "--users", "64")
    assert "Too big for one card, real traffic or training: NVLink (buy-nvlink-for-traffic)" in out
    code, out, _ = cli("size", "--model", "Llama 3.1 405B", "--precision", "fp8", "--users", "2")
    assert "buy-pcie-sized-for-memory" in out


def test_explain_renders_a_rule_page(cli):
    code, out, _ = cli("explain", "tp-over-pcie")
    assert code == 0
    for heading in ("## What it does", "## Why it matters", "## Example", "## Condition", "## Sources"):
        assert heading in out
    assert "vLLM" in out
    code, _, err = cli("explain", "tp-over-pci")
    assert code == 2 and "did you mean 'tp-over-pcie'" in err


def test_listings(cli):
    for command, needle in (
        ("rules", "tp-within-nvlink-domain"),
        ("sources", "megatron-2019"),
        ("gpus", "rtx-pro-6000-ws"),
        ("models", "deepseek-v3"),
        ("conflicts", "bubble-definition"),
        ("platforms", "h200-nvl-x8"),
    ):
        code, out, _ = cli(command)
        assert code == 0 and needle in out, command


def test_formulas_show_the_sympy_form(cli):
    code, out, _ = cli("formulas")
    assert code == 0
    assert "kv_bytes_per_token = 2 × n_layers × n_kv_heads × head_dim × kv_bytes" in out
    assert "sympy: 2*head_dim*kv_bytes*n_kv_heads*n_layers" in out


def test_version(cli):
    with pytest.raises(SystemExit) as exit_:
        cli("--version")
    assert exit_.value.code == 0


def test_a_figure_formula_shows_whole_numbers_without_float_noise(cli):
    # Qwen3-32B's 32.8 billion parameters times 10^9 is 32,800,000,000.000004 in floating point
    code, out, _ = cli("recommend", "--model", "qwen3-32b", "--gpu", "h100 sxm", "--gpus", "8", "--users", "10")
    assert code == 0
    # the embedding and LM head (151,936 × 5,120 × 2) are split out and kept in 16 bits
    assert "estimate: (32,800,000,000 - 1,555,824,640) × 2" in out and "32,800,000,000.0" not in out


def test_size_without_users_names_the_smallest_that_holds_the_model(cli):
    code, out, _ = cli("size", "--model", "llama 3.3 70b", "--precision", "fp8")
    assert code == 0
    assert "Smallest configuration that holds the model: 1 × RTX PRO 6000 Workstation" in out
    assert "serves the users" not in out


def test_the_parser_of_one_command_names_every_command_it_was_built_from():
    """One run builds only its own subcommand's parser; the list of names it picks from is complete."""
    from advisor.cli import COMMANDS, parser

    full = next(a for a in parser()._actions if a.dest == "command")
    assert tuple(full.choices) == COMMANDS
    one = next(a for a in parser("recommend")._actions if a.dest == "command")
    assert tuple(one.choices) == ("recommend",)
