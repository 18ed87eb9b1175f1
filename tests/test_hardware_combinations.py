"""Hardware the vendor does not sell is refused on every way in: flags, scenario files, chat answers and
an audit's plan exit 2 with one line that says what the card can have; a host whose topology
contradicts the catalogue gets a note, never a crash."""

from __future__ import annotations

import json

import pytest

from advisor.audit import audit
from advisor.chat.dialogue import ChatSession
from tests.evidence_data import bundle, verbatim

SETUPS = ("none", "bridge-2", "bridge-4", "nvswitch")


@pytest.mark.parametrize(
    ("gpu", "nvlink", "expected"),
    [
        # "an RTX 4090 with an NVLink bridge" (issue 13)
        ("rtx 4090", "bridge-2", "the NVIDIA GeForce RTX 4090 has no NVLink (choose --nvlink none)"),
        # "an H200 NVL on NVSwitch" (issue 13)
        (
            "h200 nvl",
            "nvswitch",
            "the NVIDIA H200 NVL takes 2- or 4-card NVLink bridges, not NVSwitch "
            "(choose --nvlink none, bridge-2 or bridge-4)",
        ),
        ("a40", "bridge-4", "the NVIDIA A40 takes 2-card NVLink bridges, not 4-card NVLink bridges"),
        (
            "h100 sxm",
            "bridge-2",
            "the NVIDIA H100 SXM takes NVSwitch, not 2-card NVLink bridges (choose --nvlink nvswitch)",
        ),
        ("rtx pro 6000", "nvswitch", "the NVIDIA RTX PRO 6000 Blackwell Workstation Edition has no NVLink"),
    ],
)
def test_a_setup_the_card_cannot_have_is_refused_from_the_flags(cli, gpu, nvlink, expected):
    code, out, err = cli("recommend", "--model", "llama 3.1 8b", "--gpu", gpu, "--gpus", "4", "--nvlink", nvlink)
    assert code == 2 and out == ""
    assert expected in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


@pytest.mark.parametrize(
    ("gpu", "nvlink"),
    [
        ("h200 nvl", "bridge-4"),
        ("h200 nvl", "bridge-2"),
        ("h100 pcie", "none"),
        ("rtx 3090", "bridge-2"),
        ("b200", "nvswitch"),
    ],
)
def test_a_setup_the_vendor_sells_is_accepted(cli, gpu, nvlink):
    code, _, err = cli("recommend", "--model", "llama 3.1 8b", "--gpu", gpu, "--gpus", "4", "--nvlink", nvlink)
    assert code == 0, err


def test_a_scenario_file_is_refused_with_its_own_key(cli, tmp_path):
    plan = tmp_path / "h200.yaml"
    plan.write_text(
        "model: llama 3.3 70b\nhardware:\n  gpu: H200 NVL\n  gpus_per_node: 8\n  nvlink: nvswitch\n", encoding="utf-8"
    )
    code, _, err = cli("recommend", str(plan))
    assert code == 2
    assert err.strip() == (
        f"advisor: error: {plan}: hardware.nvlink: the NVIDIA H200 NVL takes 2- or 4-card NVLink "
        "bridges, not NVSwitch (choose none, bridge-2 or bridge-4)"
    )


def test_the_chat_refuses_a_bridge_on_a_card_without_nvlink(engine):
    session = ChatSession(engine, "en")
    session.opening()
    for text in ("two RTX 4090", "Llama 3.1 8B", "8 users"):
        session.respond(text)
    reply = session.respond("/set nvlink bridge-2").text
    assert "the NVIDIA GeForce RTX 4090 has no NVLink (choose none)" in reply
    assert "hardware.nvlink" not in session.c.fields and session.c.rec is not None
    told = ChatSession(engine, "en")
    told.opening()
    reply = told.respond("Llama 3.1 8B on two RTX 4090 with a 2-way bridge").text
    # the model and the cards are taken; the bridge the card cannot take is asked back, its own value proposed
    assert reply.startswith("Noted: model = **Llama 3.1 8B**, GPU = **NVIDIA GeForce RTX 4090**, GPUs per node = **2**")
    assert (
        "Not taken as said: the NVIDIA GeForce RTX 4090 has no NVLink (choose none). NVLink = **none** — right?"
        in reply
    )
    assert "hardware.nvlink" not in told.c.fields
    told.respond("yes")
    assert told.c.fields["hardware.nvlink"] == "none"


def test_an_audit_plan_with_impossible_hardware_exits_2(cli, tmp_path):
    plan = (
        "model: Llama 3.3 70B Instruct\nhardware: {gpu: H200 NVL, gpus_per_node: 4, nvlink: nvswitch}\n"
        "deployment: {tp: 4}\n"
    )
    folder = bundle(tmp_path / "b", {"deployment.yaml": plan})
    code, out, err = cli("audit", str(folder))
    assert code == 2 and out == ""
    assert "deployment: hardware.nvlink: the NVIDIA H200 NVL takes 2- or 4-card NVLink bridges, not NVSwitch" in err


def test_a_topology_with_nvlink_on_a_card_without_it_is_a_note_not_a_crash(engine, cli, tmp_path):
    # the real 4 x RTX 3090 matrix (NV4 bridges 0-2 and 1-3) under a plan that names RTX 4090 cards
    folder = bundle(
        tmp_path / "b",
        {
            "topo.txt": verbatim("topo_11_4xRTX3090_nv4_bridged_pairs_0-2_1-3.txt"),
            "deployment.yaml": "model: Qwen3-32B\nprecision: fp8\nhardware: {gpu: RTX 4090}\n"
            "workload: {concurrent_conversations: 4}\n"
            "deployment: {tp: 2, gpus: [0, 2]}\n",
        },
    )
    result = audit(engine, [folder])
    assert result.recommendation is not None
    assert result.problems == [
        "the topology shows bridge-2, but the NVIDIA GeForce RTX 4090 has no NVLink in the "
        "catalogue (possible: none); evaluated as none: check which GPU the host really has "
        "(nvidia-smi -q)"
    ]
    code, out, _ = cli("audit", str(folder), "--format", "json")
    assert code == 0 and json.loads(out)["problems"] == result.problems


def test_four_h200_nvl_in_a_full_nvlink_mesh_are_read_as_their_4_card_bridge(engine, tmp_path):
    # a full NV mesh of four GPUs (the real 4 x H100 NV6 matrix) looks the same on a 4-way bridge as on
    # NVSwitch; on H200 NVL cards, which take 4-card bridges and no NVSwitch, it is the bridge
    folder = bundle(
        tmp_path / "b",
        {
            "topo.txt": verbatim("topo_05_4xH100_nv6_mesh_nic_per_gpu_strided_affinity.txt"),
            "deployment.yaml": "model: Llama 3.3 70B Instruct\nhardware: {gpu: H200 NVL}\ndeployment: {tp: 4}\n",
        },
    )
    result = audit(engine, [folder])
    assert result.problems == [] and result.facts["nvlink"] == "bridge-4"
    assert result.recommendation is not None and result.recommendation.env["tp_link"] == "nvlink"


def test_every_card_lists_the_setups_its_vendor_allows_with_a_source(engine):
    for gpu in engine.kb.gpus.values():
        assert gpu.nvlink_options, gpu.id
        assert set(gpu.nvlink_options) <= set(SETUPS), gpu.id
        assert gpu.nvlink in gpu.nvlink_options, gpu.id  # the default never needs refusing
        assert "nvlink_options" in gpu.cite, gpu.id
    for platform in engine.kb.platforms.values():
        gpu = engine.kb.gpus[platform.gpu]
        assert (platform.nvlink or gpu.nvlink) in gpu.nvlink_options, platform.id
        assert "form" in platform.cite, platform.id
        assert (platform.form == "board") == (gpu.form_factor == "sxm"), platform.id


def test_a_pasted_topology_with_nvlink_on_a_card_without_it_is_a_note_in_the_chat(engine):
    session = ChatSession(engine, "en")
    session.opening()
    for text in ("two RTX PRO 6000", "Llama 3.3 70B FP8 with FP8 KV cache", "60 users"):
        session.respond(text)
    reply = session.respond(verbatim("topo_11_4xRTX3090_nv4_bridged_pairs_0-2_1-3.txt"))
    assert reply.kind == "topo" and "Taken as facts: GPUs per node = **4**" in reply.text
    assert (
        "⚠ NVLink = bridge-2: chat: hardware.nvlink: the NVIDIA RTX PRO 6000 Blackwell Workstation Edition has "
        "no NVLink (choose none)"
    ) in reply.text
    assert session.c.fields["hardware.gpus_per_node"] == 4 and "hardware.nvlink" not in session.c.fields
