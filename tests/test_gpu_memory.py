"""The memory a GPU offers, as a user sees it: the total nvidia-smi reports where a real capture is cited,
an estimate labelled as one where none was found, and never "exact" for a nominal figure."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

ONE_70B_FP8_CARD = (
    "--model",
    "Llama 3.3 70B",
    "--precision",
    "fp8",
    "--kv-cache-dtype",
    "fp8",
    "--gpus",
    "1",
    "--users",
    "1",
    "--context",
    "4096",
)


def _recommend(cli, *args: str) -> dict[str, Any]:
    code, out, err = cli("recommend", *args, "--format", "json")
    assert code == 0, err
    return json.loads(out)


def _figure_line(text: str, label: str, next_label: str) -> str:
    """One row of the text output's figure table, its wrapped lines joined."""
    row = text[text.index(label) : text.index(next_label)]
    return " ".join(row.split())


def test_a_70b_fp8_model_that_fits_one_h100_sxm_also_fits_one_h100_pcie(cli):
    # "So a model that fits one H100 SXM 'does not fit' one H100 PCIe" (issue 13): both report 81,559 MiB.
    sxm = _recommend(cli, *ONE_70B_FP8_CARD, "--gpu", "H100 SXM")
    pcie = _recommend(cli, *ONE_70B_FP8_CARD, "--gpu", "H100 PCIe")
    assert sxm["layout_label"] == pcie["layout_label"]
    assert pcie["layout"]["gpus_per_replica"] == 1
    usable = pytest.approx(0.9 * 81559 / 1024, abs=0.01)
    assert pcie["figures"]["usable_gib_per_gpu"] == sxm["figures"]["usable_gib_per_gpu"] == usable
    assert not any(f["rule"] == "model-does-not-fit" for f in pcie["findings"])
    assert pcie["figure_traces"]["usable_gib_per_gpu"]["kind"] == "exact"


def test_h200_nvl_capacity_uses_the_140_4_gib_the_driver_reports(cli):
    nvl = _recommend(
        cli,
        "--model",
        "Llama 3.3 70B",
        "--precision",
        "fp8",
        "--kv-cache-dtype",
        "fp8",
        "--gpu",
        "H200 NVL",
        "--gpus",
        "2",
        "--nvlink",
        "bridge-2",
        "--users",
        "60",
        "--context",
        "8192",
    )
    sxm = _recommend(
        cli,
        "--model",
        "Llama 3.3 70B",
        "--precision",
        "fp8",
        "--kv-cache-dtype",
        "fp8",
        "--gpu",
        "H200 SXM",
        "--gpus",
        "2",
        "--nvlink",
        "nvswitch",
        "--users",
        "60",
        "--context",
        "8192",
    )
    assert nvl["figures"]["usable_gib_per_gpu"] == pytest.approx(0.9 * 140.4)
    assert nvl["figures"]["conversations"] == sxm["figures"]["conversations"]
    assert nvl["figure_traces"]["usable_gib_per_gpu"]["kind"] == "exact"


def test_the_text_figure_line_says_the_memory_is_what_nvidia_smi_reports(cli):
    code, out, err = cli("recommend", *ONE_70B_FP8_CARD, "--gpu", "H100 PCIe")
    assert code == 0, err
    line = _figure_line(out, "Usable memory per GPU", "KV cache per conversation")
    assert line.startswith("Usable memory per GPU 71.7 GiB exact: 79.7 × 0.9")
    assert "nvidia-smi" in line


def test_a_card_without_a_capture_is_an_estimate_in_every_output(cli):
    # DGX Spark: nvidia-smi prints N/A for the memory total of its unified memory.
    args = ("--model", "Llama 3.1 8B", "--precision", "bf16", "--gpu", "DGX Spark", "--gpus", "1", "--users", "1")
    doc = _recommend(cli, *args)
    assert doc["figure_traces"]["usable_gib_per_gpu"]["kind"] == "estimate"
    code, out, _ = cli("recommend", *args)
    line = _figure_line(out, "Usable memory per GPU", "KV cache per conversation")
    assert "estimate:" in line and "exact" not in line
    code, out, _ = cli("recommend", *args, "--lang", "de")
    line = _figure_line(out, "Nutzbarer Speicher je GPU", "KV-Cache")
    assert "Schätzung:" in line and "exakt" not in line


def test_every_catalogue_gpu_has_a_cited_driver_total_or_a_stated_estimate(engine):
    for g in engine.kb.gpus.values():
        if g.memory_gib_reported is not None:
            cite = g.cite["memory_gib_reported"]
            assert cite.quote, g.id
            mib = [int(n) for n in re.findall(r"(\d+)\s*MiB", cite.quote)]
            gib = [float(n) for n in re.findall(r"(\d+(?:\.\d+)?)\s*GiB", cite.quote)]
            assert (mib and abs(max(mib) / 1024 - g.memory_gib_reported) < 0.006) or (
                gib and abs(gib[0] - g.memory_gib_reported) < 0.05
            ), g.id
        else:
            assert g.memory_gib_estimate is not None, g.id
            assert g.memory_estimate_basis, g.id
            assert "memory_gib_estimate" in g.cite, g.id
