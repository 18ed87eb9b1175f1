"""Training as its own workload (issue 13, item 6): the state per GPU by optimizer and sharding (ZeRO
Section 5), the gradient sync per step on the link the data-parallel copies cross, no serving figures
and no serving launch line, and seed 003's 140 GB of gradients still reproduced."""

from __future__ import annotations

import json

import pytest

from tests.test_schemas import problems

H100_8B = (
    "recommend",
    "--workload",
    "training",
    "--model",
    "llama-3.1-8b-instruct",
    "--gpu",
    "h100-sxm",
    "--gpus",
    "8",
)
A100_70B = (
    "recommend",
    "--workload",
    "training",
    "--model",
    "llama-3.3-70b-instruct",
    "--gpu",
    "a100-sxm4-80gb",
    "--gpus",
    "8",
)
RTX_PRO_8B = (
    "recommend",
    "--workload",
    "training",
    "--model",
    "llama-3.1-8b-instruct",
    "--gpu",
    "rtx-pro-6000-ws",
    "--gpus",
    "2",
)
SERVING_WORDS = ("tokens/s", "Conversations that fit", "Time to first token", "vllm serve", "python -m sglang")


def section(out: str, heading: str) -> str:
    """The lines of one section of a text report, up to the next blank line."""
    assert f"\n{heading}" in out, out
    return out.split(f"\n{heading}", 1)[1].split("\n\n", 1)[0]


def flat(out: str) -> str:
    """A text report with its line wrapping and column padding undone."""
    return " ".join(out.split())


def test_8b_full_fine_tune_on_8_h100_which_sharding(cli):
    # "Full fine-tune of Llama 3.1 8B on 8 H100 SXM: which sharding?" The advisor chooses: plain DDP keeps
    # 16 bytes per parameter on every copy (119.7 GiB), so a copy would take 2 GPUs; ZeRO-1 (4Ψ + 12Ψ/8 =
    # 41.1 GiB) holds one copy per GPU at about the same step time, and is the simplest sharding that does.
    code, out, _ = cli(*H100_8B)
    assert code == 0
    assert "Recommendation: 8 × one copy per GPU" in out
    assert "Training state per GPU 41.1 GiB" in flat(out)
    assumed = section(out, "Assumptions")
    assert "sharding = zero1 — the user did not say" in flat(assumed)
    # DDP: 4 × TP 2 at 59.8 GiB per GPU, with the Megatron activation all-reduces in every layer
    assert "none: 4 × TP 2, DDP; Training step (estimate) 3.37 s instead of 3.25 s" in flat(assumed)
    assert "zero3: 8 × 1 GPU, ZeRO-3; Training step (estimate) 3.28 s instead of 3.25 s" in flat(assumed)
    for word in SERVING_WORDS:
        assert word not in out


def test_the_step_time_adds_compute_and_traffic(advise):
    # 6 × 8.03B parameters × 262,144 tokens (Llama 2's SFT batch, 64 × 4,096) over 8 H100 at 989 TFLOPS
    # × 0.5: 3.19 s; plus the gradient ring over NVLink (0.0625 s)
    rec = advise(
        {
            "model": "llama-3.1-8b-instruct",
            "hardware": {"gpu": "h100-sxm", "gpus_per_node": 8},
            "workload": {"kind": "training", "sharding": "zero1"},
        }
    )
    assert rec.env["train_tokens_per_step"] == 64 * 4096
    assert rec.env["train_compute_s"] == pytest.approx(
        6 * rec.env["active_params"] * 262144 / (8 * rec.env["gpu_tflops"] * 0.5e12)
    )
    assert rec.env["train_tp_s"] == 0 and rec.env["train_pp_s"] == 0 and rec.env["train_bubble_s"] == 0
    assert rec.figures["train_step_s"] == pytest.approx(rec.env["train_compute_s"] + 0.0625, abs=1e-3)
    # a TP 2 copy adds Megatron's 4 all-reduces per layer: 4 × 32 × 65,536 tokens × 8 KiB × 2·1/2 / 450 GB/s
    split = advise(
        {
            "model": "llama-3.1-8b-instruct",
            "hardware": {"gpu": "h100-sxm", "gpus_per_node": 8},
            "workload": {"kind": "training", "sharding": "none"},
        }
    )
    assert split.layout.tp == 2
    assert split.env["train_tp_s"] == pytest.approx(4 * 32 * 65536 * 8192 * 1 / 450e9)


def test_8b_with_zero3_is_eight_data_parallel_copies_with_1_5x_the_sync(cli):
    code, out, _ = cli(*H100_8B, "--sharding", "zero3")
    assert code == 0
    assert "Recommendation: 8 × one copy per GPU" in out
    assert "each GPU holds 15.0 GiB of training state" in flat(out)
    # 16 GB of gradients × 1.5 (ZeRO-3 gathers the weights twice) × 2·7/8 over 450 GB/s: 0.0937 s
    assert "Gradient sync per step 0.0937 s" in flat(out)
    assert "16,059,990,016 × 1.5" in flat(out)
    launch = section(out, "Launch")
    assert "no serving command: this is a training job" in launch
    assert "vllm" not in launch.replace("vLLM and SGLang serve", "")


def test_fsdp_is_zero3(cli):
    _, zero3, _ = cli(*H100_8B, "--sharding", "zero3", "--format", "json")
    _, fsdp, _ = cli(*H100_8B, "--sharding", "fsdp", "--format", "json")
    assert json.loads(zero3)["figures"] == json.loads(fsdp)["figures"]


def test_the_json_has_training_figures_and_no_serving_ones(cli):
    code, out, _ = cli(*H100_8B, "--sharding", "zero2", "--format", "json")
    doc = json.loads(out)
    assert code == 0 and not problems(doc)
    figures = doc["figures"]
    assert figures["train_state_gib_per_gpu"] == pytest.approx(28.04, abs=0.01)  # 2Ψ + 14Ψ/8
    assert figures["grad_sync_s_per_step"] == pytest.approx(0.0625, abs=1e-4)  # ZeRO-2 moves what DDP moves
    for serving in ("conversations", "one_user_tokens_per_s", "throughput_tokens_per_s", "ttft_ms"):
        assert figures[serving] is None
    assert doc["input"]["workload"]["sharding"] == "zero2"
    assert doc["input"]["workload"]["optimizer"] == "adamw"
    assert set(doc["launch"]) == {"training"}


def test_70b_full_fine_tune_on_8_a100_fits_neither_ddp_nor_zero3(cli):
    # "70B full fine-tune on 8 A100 80GB: does DDP fit? ZeRO-3?"
    for sharding in ("none", "zero3"):
        code, out, _ = cli(*A100_70B, "--sharding", sharding)
        assert code == 0
        assert "No layout on this hardware holds the model" in out
        assert "training-state-does-not-fit" in out
        assert "1052.0 GiB of weights, gradients and optimizer states" in flat(out)
        assert "needs at least 15 GPUs with 72.0 GiB usable each; this machine has 8" in flat(out)
        assert "LoRA" in out
        assert "KV cache" not in out


def test_70b_on_8_a100_in_german(cli):
    code, out, _ = cli(*A100_70B, "--sharding", "zero3", "--lang", "de")
    assert code == 0
    assert "Training: der Zustand passt nicht auf diese GPUs" in out
    assert "braucht das mindestens 15 GPUs mit je 72,0 GiB nutzbarem Speicher; diese Maschine hat 8" in flat(out)


def test_two_rtx_pro_6000_8b_ddp_gradient_sync(cli):
    # seed 003's example: "two RTX PRO 6000 over PCIe, 8B, DDP: how long is the gradient sync?"
    code, out, _ = cli(*RTX_PRO_8B, "--sharding", "none")
    assert code == 0
    # DDP's 16 bytes per parameter (119.7 GiB) do not fit one 96 GB card: one copy over both, no sync;
    # PP 2 (25.5 s a step) before TP 2 (29.4 s), whose activations cross PCIe at every layer
    assert "Recommendation: PP 2" in out
    assert "Gradient sync per step 0 s" in flat(out)
    assert "optimizer = adamw" in out  # 8-bit Adam (10 bytes per parameter) would fit one card each
    # ZeRO-1 fits one card each: 16 GB of gradients, 2·(2-1)/2 × 16.06 GB over PCIe Gen5's 64 GB/s
    code, out, _ = cli(*RTX_PRO_8B, "--sharding", "zero1")
    assert "Recommendation: 2 × one copy per GPU" in out
    assert "Gradient sync per step 0.251 s" in flat(out)
    assert "Training: 16 GB of gradients per step" in out


def test_two_rtx_pro_6000_in_german(cli):
    code, out, _ = cli(*RTX_PRO_8B, "--sharding", "zero1", "--lang", "de")
    assert code == 0
    assert "Empfehlung: 2 × eine Kopie je GPU" in out
    assert "Gradientenabgleich je Schritt 0,251 s" in flat(out)
    assert "Trainingszustand je GPU 74,8 GiB" in flat(out)
    assert "von ihren 86,0 GiB bleiben 11,3 GiB für Aktivierungen" in flat(out)
    assert "Token/s" not in out and "vllm serve" not in out


@pytest.mark.parametrize(("optimizer", "state_bytes"), [("adamw", 16), ("sgd", 12), ("adamw-8bit", 10)])
def test_state_bytes_per_parameter_by_optimizer(advise, optimizer, state_bytes):
    scenario = {
        "model": "llama-3.1-8b-instruct",
        "hardware": {"gpu": "rtx-pro-6000-ws", "gpus_per_node": 2},
        "workload": {"kind": "training", "optimizer": optimizer},
    }
    rec = advise(scenario)
    assert rec.env["train_state_bytes"] == state_bytes
    assert rec.figures["weights_gib"] == pytest.approx(8_029_995_008 * state_bytes / 2**30, abs=1e-3)


def test_8bit_adam_fits_one_rtx_pro_6000_per_copy(cli):
    code, out, _ = cli(*RTX_PRO_8B, "--optimizer", "adamw-8bit")
    assert code == 0
    assert "Recommendation: 2 × one copy per GPU" in out
    assert "Training state per GPU 74.8 GiB" in flat(out)  # 10 bytes × 8.03B parameters


def test_seed_003_140_gb_of_gradients_for_70b_still_reproduced(engine):
    # 70B in BF16: 140 GB per step; two copies over PCIe Gen5 (64 GB/s): 2·(2-1)/2 × 140 GB / 64 = 2.19 s
    calc = engine.calc
    env = {"params": 70e9, "grad_bytes": 2, "replicas": 2, "dp_link_gbs": 64, "tp": 1, "pp": 1, "grad_sync_volume": 1}
    env["grad_allreduce_bytes"] = calc.formulas["grad-bytes"].compute(env)
    assert calc.formulas["grad-gb"].compute(env) == 140
    assert calc.formulas["grad-allreduce-time"].compute(env) == pytest.approx(2.1875)
    # the general form gives the same for plain data parallelism, and 1.5 times it for ZeRO-3
    assert calc.formulas["grad-sync-time"].compute(env) == pytest.approx(2.1875)
    assert calc.formulas["grad-sync-time"].compute({**env, "grad_sync_volume": 1.5}) == pytest.approx(3.28125)


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("full fine-tune of Llama 3.1 8B on 8 H100 with ZeRO-3", {"kind": "training", "sharding": "zero3"}),
        (
            "Training mit FSDP und 8-Bit-AdamW auf 8 A100",
            {"kind": "training", "sharding": "fsdp", "optimizer": "adamw-8bit"},
        ),
        ("train with SGD and plain DDP", {"kind": "training", "sharding": "none", "optimizer": "sgd"}),
    ],
)
def test_the_chat_reads_sharding_and_optimizer_from_a_sentence(engine, typed, expected):
    from advisor.inputs.freetext import understand

    fields = understand(typed, engine.kb).fields
    assert {k.split(".", 1)[1]: v for k, v in fields.items() if k.startswith("workload.")} == expected
