"""`advisor size` as a buyer reads it: independent models each get their own GPUs, the status column
follows the layout shown, the advice agrees with the table, and SXM parts are never "one card"."""

from __future__ import annotations

import json

import pytest


@pytest.fixture()
def four_teams(tmp_path):
    plan = tmp_path / "four-teams.yaml"
    plan.write_text(
        "model: mistral small 24b\nworkload:\n  independent_models: 4\n  concurrent_conversations: 8\n",
        encoding="utf-8",
    )
    return str(plan)


def _json(cli, *args):
    code, out, err = cli("size", *args, "--format", "json")
    assert code == 0, err
    return json.loads(out)


def test_four_separate_24b_models_are_not_one_card(cli, four_teams):
    doc = _json(cli, four_teams)
    rows = {p["id"]: p for p in doc["platforms"]}
    assert rows["rtx-pro-6000-ws-x1"]["status"] == "no-fit" and rows["rtx-pro-6000-ws-x1"]["serves_users"] is False
    assert rows["rtx-pro-6000-ws-x2"]["serves_users"] is False
    assert rows["rtx-pro-6000-ws-x4"]["serves_users"] is True
    smallest = rows[doc["smallest"]]
    assert smallest["gpus"] >= 4
    assert doc["facts"]["independent_models"] == 4
    assert [f["rule"] for f in doc["purchase"]] == ["buy-pcie-for-independent-models"]
    code, out, _ = cli("size", four_teams)
    assert "4 independent models, each on its own GPUs (a row is one model's share)" in out.splitlines()[0]
    words = " ".join(out.split())  # the advice is wrapped
    assert f"the smallest platform that holds all 4 is the {smallest['name']} (4 GPUs)" in words


def test_one_model_for_sixty_users_gets_no_buy_one_card_beside_a_two_gpu_answer(cli):
    doc = _json(cli, "--model", "llama 3.3 70b", "--precision", "fp8", "--users", "60")
    rows = {p["id"]: p for p in doc["platforms"]}
    for row in doc["platforms"]:
        if row["layout"] and row["layout"]["tp"] * row["layout"]["pp"] > 1:
            assert row["status"] == "split", row["id"]
    assert rows["rtx-pro-6000-ws-x2"]["status"] == "split"  # TP 2
    assert doc["platforms"][0]["status"] == "one-card"  # 1 GPU
    assert rows[doc["smallest"]]["layout"]["gpus_per_replica"] == 2
    rules = [f["rule"] for f in doc["purchase"]]
    assert "buy-one-card" not in rules and "buy-split-for-conversations" in rules
    code, out, _ = cli("size", "--model", "llama 3.3 70b", "--precision", "fp8", "--users", "60")
    row = next(line for line in out.splitlines() if line.startswith("2 × RTX PRO 6000 Workstation"))
    assert row.split()[6:8] == ["split", "TP"]
    words = " ".join(out.split())
    assert "the smallest configuration that serves them is the 2 × H200 NVL (TP 2, 2 GPUs per copy)" in words
    assert "buy one card" not in words.lower()


def test_buy_one_card_never_names_an_sxm_module(cli, engine):
    doc = _json(cli, "--model", "llama 3.3 70b", "--precision", "fp8")
    advice = {f["rule"]: f for f in doc["purchase"]}
    assert "buy-one-card" in advice
    assert "SXM" not in advice["buy-one-card"]["explanation"]
    card = engine.kb.find_gpu(doc["facts"]["smallest_fitting_card"])
    assert card.form_factor == "pcie"  # an 80 GB PCIe card (A100 or H100 PCIe: both report about 80 GiB)
    assert card.name in advice["buy-one-card"]["explanation"]


def test_a_model_only_an_sxm_gpu_holds_alone_means_a_board(cli):
    doc = _json(cli, "--model", "Qwen3-235B-A22B", "--precision", "fp8", "--users", "32")
    advice = {f["rule"]: f for f in doc["purchase"]}
    assert set(advice) == {"buy-board-when-only-sxm-holds-it"}
    assert "8 × HGX B300" in advice["buy-board-when-only-sxm-holds-it"]["explanation"]
    assert "boards of 4 or 8 GPUs" in advice["buy-board-when-only-sxm-holds-it"]["explanation"]


def test_two_different_8b_models_on_one_4_gpu_box_get_two_gpus_each(cli):
    # "We want two different 8B models on one box with 4 RTX PRO 6000, 40 users each: how do we run them?"
    box = ("--model", "llama 3.1 8b", "--gpu", "rtx-pro-6000-ws", "--gpus", "4", "--users", "40")
    code, out, err = cli("recommend", *box, "--independent-models", "2", "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["input"]["hardware"]["gpus_per_node"] == 2  # one model's share of the 4
    assert doc["input"]["workload"]["independent_models"] == 2
    assert doc["layout"]["replicas"] * doc["layout"]["gpus_per_replica"] <= 2
    alone = json.loads(cli("recommend", *box, "--format", "json")[1])
    assert alone["input"]["hardware"]["gpus_per_node"] == 4
    assert doc["figures"]["conversations"] < alone["figures"]["conversations"]
    code, out, _ = cli("recommend", *box, "--independent-models", "2")
    assert out.splitlines()[0].endswith("one of 2 independent models, each on its own 2 GPUs")
    code, out, _ = cli("recommend", *box, "--independent-models", "2", "--lang", "de")
    assert out.splitlines()[0].endswith("eines von 2 unabhängigen Modellen, jedes auf eigenen 2 GPUs")


def test_size_takes_the_independent_models_flag_like_the_scenario_field(cli, four_teams):
    by_file = _json(cli, four_teams)
    by_flag = _json(cli, "--model", "mistral small 24b", "--independent-models", "4", "--users", "8")
    assert by_flag["facts"]["independent_models"] == 4
    assert by_flag["smallest"] == by_file["smallest"]
    assert [f["rule"] for f in by_flag["purchase"]] == ["buy-pcie-for-independent-models"]


def test_more_models_than_gpus_exits_2_with_one_line(cli):
    code, out, err = cli(
        "recommend", "--model", "llama 3.1 8b", "--gpu", "l4", "--gpus", "1", "--independent-models", "2"
    )
    assert code == 2 and out == ""
    assert err.strip().splitlines() == [
        "advisor: error: flags: 2 independent models need at least 2 GPUs, each its own; the scenario has 1 "
        "(give more GPUs (--gpus) or fewer models (--independent-models), or ask `advisor size`)"
    ]
