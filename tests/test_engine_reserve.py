"""vLLM's activation reserve inside --gpu-memory-utilization (issue #13, item 3): the seed's planning figures
stand, the conversations left after the engine's own reserve are counted beside them as a named estimate, and
a warning says so where that count falls below the users, with both sources of the conflict."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from advisor.core.layouts import Layout
from tests.conftest import RTX_PRO_70B, with_users


def _json(cli, *args):
    code, out, err = cli("recommend", *args, "--format", "json")
    assert code == 0, err
    return json.loads(out)


def _finding(doc, rule):
    return next((f for f in doc["findings"] if f["rule"] == rule), None)


SEED_26 = ("--model", "llama 3.3 70b", "--precision", "fp8", "--kv-cache-dtype", "fp8")
SEED_26 += ("--gpu", "rtx-pro-6000-ws", "--gpus", "2", "--users", "26")


def test_26_users_on_the_seeds_two_cards_keep_28_planned_and_hear_of_about_22_after_the_reserve(cli):
    # "Llama 3.3 70B FP8 on our two RTX PRO 6000 for 26 users: is a copy per card enough?"
    doc = _json(cli, *SEED_26)
    assert doc["figures"]["conversations"] == 28  # the seed's 2 × 14 stays the plan
    warn = _finding(doc, "engine-reserve-below-users")
    assert warn is not None and warn["severity"] == "warning"
    figures = {f["fact"]: f for f in warn["figures"]}
    assert figures["engine_reserve_gib_per_gpu"]["value"] == pytest.approx(3.05)
    assert figures["engine_reserve_gib_per_gpu"]["kind"] == "estimate"
    assert figures["conversations_after_reserve"]["value"] == 22  # 2 × floor((18.04 - 3.05) / 1.25)
    assert figures["conversations_after_reserve"]["kind"] == "estimate"
    assert warn["conflicts"] == ["engine-activation-reserve"]
    assert {s["id"] for s in warn["sources"]} == {"vllm-gpu-worker-memory", "vllm-pr-10511-memory-profile"}
    code, out, _ = cli("recommend", *SEED_26)
    words = " ".join(out.split())
    assert "28 conversations, enough for the 26 users" in words
    assert "about 3.0 GiB per GPU (an estimate from a published 8B start-up log)" in words
    assert "15.0 GiB of cache per GPU hold 22 conversations" in words
    assert "The seed's rule stays the planning figure" in words  # the conflict's resolution, beside it


def test_the_seed_figures_stand_and_the_reserve_is_counted_beside_them(advise):
    few = advise(with_users(RTX_PRO_70B, 20))
    assert few.env["cache_gib_per_gpu"] == pytest.approx(18.04)
    assert few.figures["conversations"] == 28
    assert few.env["conversations_after_reserve"] == 22
    assert few.finding("engine-reserve-below-users") is None  # 22 still hold 20 users
    many = advise(with_users(RTX_PRO_70B, 60))
    assert many.figures["conversations"] == 83
    assert many.env["engine_reserve_gib_per_gpu"] == pytest.approx(1.26 + 3.58)  # NCCL in a TP group
    assert many.env["conversations_after_reserve"] == 75
    assert many.finding("engine-reserve-below-users") is None


def test_an_8b_model_on_one_24_gb_card_halves_its_conversations_after_the_reserve(cli):
    # "Llama 3.1 8B on one RTX 4090 for 4 people at 8k context?"
    doc = _json(
        cli, "--model", "llama 3.1 8b", "--precision", "bf16", "--gpu", "rtx-4090", "--gpus", "1", "--users", "4"
    )
    assert doc["figures"]["conversations"] == 6
    warn = _finding(doc, "engine-reserve-below-users")
    assert warn is not None
    assert {f["fact"]: f["value"] for f in warn["figures"]}["conversations_after_reserve"] == 3


def test_the_warning_is_german_too(cli):
    code, out, _ = cli("recommend", *SEED_26, "--lang", "de")
    assert code == 0
    words = " ".join(out.split())
    assert "Nach vLLMs eigener Reserve passen womöglich weniger Gespräche als Nutzer" in words
    assert "15,0 GiB Cache je GPU 22 Gespräche" in words


def _reserve_log_rows() -> list[list[str]]:
    doc = (Path(__file__).resolve().parents[1] / "docs" / "calibration.md").read_text(encoding="utf-8")
    section = doc.split("## The engine reserve against start-up logs", 1)[1]
    rows = [line.strip("|").split("|") for line in section.splitlines() if line.startswith("| vllm-")]
    return [[cell.strip() for cell in row] for row in rows]


def _logged(source, label: str) -> list[float]:
    return [float(n) for q in source.quotes for n in re.findall(label + r" (?:takes )?([\d.]+)GiB", q.text)]


def test_the_reserve_is_set_against_six_start_up_logs_each_quoted_in_its_source(engine, advise):
    # "Where does the 3 GiB the engine keeps come from, and how does it compare on other cards?"
    rows = _reserve_log_rows()
    assert len(rows) >= 6
    layouts = {1: Layout(2, 1, 1, 1), 2: Layout(1, 2, 1, 1)}
    for source_id, setup, logged, advisor, ratio in rows:
        source = engine.kb.sources[source_id]
        sums = {
            round(a + n, 2)
            for a in _logged(source, "activation peak memory")
            for n in _logged(source, "non_torch_memory")
        }
        assert float(logged) in sums, (source_id, logged, sums)  # the log's own words carry the figure
        tp = int(re.search(r"TP (\d)", setup).group(1))  # type: ignore[union-attr]
        reserve = advise(RTX_PRO_70B, layout=layouts[min(tp, 2)]).env["engine_reserve_gib_per_gpu"]
        assert float(advisor) == pytest.approx(reserve, abs=0.005)
        assert float(ratio) == pytest.approx(reserve / float(logged), abs=0.006)


def test_the_one_log_reserve_fits_its_own_log_only():
    # The maintainer's 8B logs are reproduced; a 24 GB card's log lies far below, long budgets far above.
    ratios = {(r[0], r[1]): float(r[4]) for r in _reserve_log_rows()}
    own = [v for (src, _), v in ratios.items() if src == "vllm-pr-10511-memory-profile"]
    assert own == [1.0, 1.0]
    assert ratios[("vllm-pr-14447-memory-profile", next(s for src, s in ratios if "14447" in src))] > 5
    assert min(ratios.values()) < 0.1
