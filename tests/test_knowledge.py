"""The knowledge base holds what the issue asks for, every figure with a source, and the seeds' quotes verbatim."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from advisor.kb.knowledge import load

SEEDS = Path(__file__).resolve().parents[2] / "shared" / "seeds"


@pytest.fixture(scope="module")
def kb():
    return load()


def test_every_seed_is_a_source_by_file_name(kb):
    files = {s.file for s in kb.sources.values() if s.kind == "seed"}
    assert files == {
        "000_26363e4019011fc1.txt",
        "001_11162e4cb614db75.txt",
        "002_bde4857bf570a7ed.txt",
        "003_2e590f235b41c23d.txt",
    }


@pytest.mark.parametrize(
    "sid",
    [
        "megatron-2019",
        "megatron-2021",
        "gpipe-2019",
        "nccl-troubleshooting",
        "nccl-tests-performance",
        "vllm-distributed",
        "vllm-expert-parallel",
        "vllm-data-parallel",
        "sglang-docs",
        "deepseek-v3-report",
        "nvidia-hopper-architecture",
        "nvidia-h200-nvl-brief",
        "storagereview-dl380a-gen12",
        "storagereview-dgx-spark-cluster",
        "akamai-rtx-pro-6000-docs",
        "google-rtx-pro-6000-p2p-2025",
    ],
)
def test_primary_sources_the_seeds_cite_are_recorded(kb, sid):
    s = kb.sources[sid]
    assert s.title and s.publisher and s.kind in ("primary", "vendor", "measurement") and s.trust


def test_gpu_catalogue(kb):
    assert len(kb.gpus) >= 20
    for name in (
        "RTX PRO 6000 Workstation",
        "RTX PRO 6000 Max-Q",
        "RTX PRO 6000 Server",
        "H200 NVL",
        "H200 SXM",
        "H100 SXM",
        "H100 PCIe",
        "H100 NVL",
        "A100 SXM",
        "A100 PCIe",
        "L40S",
        "L4",
        "RTX 4090",
        "RTX 5090",
        "RTX A6000",
        "RTX 6000 Ada",
        "B200",
        "B300",
        "DGX Spark",
    ):
        kb.find_gpu(name)
    pro = kb.find_gpu("RTX PRO 6000 Workstation")
    assert pro.memory_gib_reported == 95.6 and pro.nvlink == "none" and pro.pcie_gen == 5
    nvl = kb.find_gpu("H200 NVL")
    assert nvl.nvlink == "bridge-4" and nvl.nvlink_gbs_per_direction == 450
    assert kb.find_gpu("RTX 4090").pcie_p2p is False


@pytest.mark.parametrize("gen", ["l4", "l40s", "rtx-4090", "rtx-a6000", "a100-pcie-80gb"])
def test_cards_that_the_sizing_guide_lists_as_gen5_are_gen4(kb, gen):
    assert kb.gpus[gen].pcie_gen == 4


def test_model_catalogue(kb):
    assert len(kb.models) >= 15
    for name in (
        "Llama 3.3 70B",
        "Llama 3.1 8B",
        "Llama 3.1 405B",
        "Qwen3-235B-A22B",
        "Qwen3-30B-A3B",
        "DeepSeek-V3",
        "gpt-oss-120b",
        "gpt-oss-20b",
        "Mistral Small 24B",
        "Mixtral 8x7B",
        "Qwen2.5-72B",
    ):
        kb.find_model(name)
    ds = kb.find_model("DeepSeek-V3")
    assert ds.attention == "mla" and ds.config["kv_lora_rank"] == 512 and ds.config["qk_rope_head_dim"] == 64
    assert kb.find_model("Llama 3.3 70B").checkpoint("fp8").stated_as == "68 GiB"
    qwen = kb.find_model("Qwen3-235B-A22B")
    assert {c.precision: c.stated_as for c in qwen.checkpoints}.items() >= {"nvfp4": "134 GB", "fp8": "236 GB"}.items()
    assert kb.find_model("gpt-oss-120b").checkpoint("mxfp4").stated_as == "65.3 GB"


def test_every_conflict_the_seeds_readme_names_is_recorded(kb):
    for cid in (
        "bubble-definition",
        "nvlink-900-direction",
        "nvlink-14x",
        "allreduces-per-layer",
        "kv-cache-hidden-dim",
        "pcie-generation-of-cards",
        "tp-when-model-fits",
    ):
        c = kb.conflicts[cid]
        assert len(c.claims) >= 2 and c.resolution.texts.get("en") and c.resolution.texts.get("de")


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


@pytest.mark.skipif(not SEEDS.is_dir(), reason="the shared seed documents are not beside this checkout")
def test_seed_quotes_are_verbatim_in_the_seed_files(kb):
    for s in kb.sources.values():
        if s.kind != "seed":
            continue
        text = _norm((SEEDS / s.file).read_text(encoding="utf-8"))
        for q in s.quotes:
            assert _norm(q.text) in text, (s.id, q.text[:60])


def _broken_copy(tmp_path: Path, name: str, old: str, new: str) -> Path:
    import shutil

    from advisor.kb.paths import knowledge_dir

    root = tmp_path / "knowledge"
    shutil.copytree(knowledge_dir(), root)
    text = (root / name).read_text(encoding="utf-8")
    assert old in text, old
    (root / name).write_text(text.replace(old, new, 1), encoding="utf-8")
    return root


@pytest.mark.parametrize(
    "name, old, new, message",
    [
        (
            "gpus.yaml",
            "memory_gib_reported: 95.6",
            "memory_gib_reported: lots",
            r"gpus\.yaml:7: key 'memory_gib_reported' should be float, not 'lots'",
        ),
        ("gpus.yaml", "    architecture: blackwell\n", "", r"gpus\.yaml:7: missing key 'architecture'"),
        (
            "gpus.yaml",
            "nvlink: none",
            "nvlink: nvlink-5",
            r"gpus\.yaml:7: key 'nvlink' is 'nvlink-5', not one of none, bridge-2, bridge-4, nvswitch",
        ),
        (
            "formulas.yaml",
            "    display: input",
            "    display: graph",
            r"formulas\.yaml:\d+: key 'display' is 'graph', not one of formula, input",
        ),
    ],
)
def test_a_broken_knowledge_entry_is_refused_with_file_line_key_and_choices(tmp_path, name, old, new, message):
    from advisor.errors import KnowledgeError

    root = _broken_copy(tmp_path, name, old, new)
    with pytest.raises(KnowledgeError) as caught:
        load(root)
    assert re.search(message, str(caught.value)), str(caught.value)


def test_a_fact_without_its_german_text_is_refused(tmp_path):
    from advisor.errors import KnowledgeError

    root = _broken_copy(tmp_path, "facts.yaml", 'de: "Dichtes oder Mixture-of-Experts-Modell."', 'fr: "Dense."')
    with pytest.raises(KnowledgeError, match=r"facts\.yaml fact model_kind:\d+: 'doc' is missing its 'de' text"):
        load(root)
