"""Evidence in the chat: a pasted `nvidia-smi topo -m` sets the GPU count and NVLink; `/audit` lists
an audit's findings."""

from __future__ import annotations

from textual import events

from advisor.inputs.evidence.topo import nvlink_kind
from advisor.tui.chatinput import ChatInput
from advisor.tui.fact_panel import FactsTable
from tests.evidence_data import AUDIT_DATA, verbatim
from tests.tui.conftest import drive, say, settle


def test_pasted_topology_becomes_facts(build):
    app = build()
    matrix = verbatim("topo_11_4xRTX3090_nv4_bridged_pairs_0-2_1-3.txt").replace("\n", "\r")  # as terminals paste

    async def script(pilot):
        # the cards the matrix comes from: an RTX 3090 takes 2-card bridges (an RTX PRO 6000 would refuse them)
        for text in ("two RTX 3090", "Llama 3.3 70B FP8 with FP8 KV cache", "60 users"):
            await say(pilot, text)
        app.chat.query_one(ChatInput).post_message(events.Paste(matrix))
        await pilot.pause()
        await settle(pilot)
        reply = app.chat.last
        assert reply.kind == "topo"
        assert "- GPUs: 4 (GPU0, GPU1, GPU2, GPU3)" in reply.text
        assert "- NVLink domains: [GPU0 GPU2] [GPU1 GPU3]" in reply.text
        assert "| GPU0 | X | PHB | NV4 | NODE |" in reply.text
        assert "Taken as facts: GPUs per node = **4**, NVLink = **bridge-2**" in reply.text
        fields = app.chat.session.c.fields
        assert fields["hardware.gpus_per_node"] == 4 and fields["hardware.nvlink"] == "bridge-2"
        rows = {r.fact: r for r in app.chat.query_one(FactsTable).rows_shown}
        assert rows["gpus_per_node"].origin == "topo -m" and rows["nvlink"].shown == "bridge-2"
        assert reply.rec.machine.total_gpus == 4
        assert app.chat.query_one(ChatInput).value == ""  # the paste did not land in the input

    drive(app, script)


def test_nvlink_kind_from_topologies():
    assert nvlink_kind([0, 1, 2, 3], {}) == "none"
    assert nvlink_kind([0, 1, 2, 3], {"0-2": 4, "1-3": 4}) == "bridge-2"
    mesh = {f"{a}-{b}": 6 for a in range(4) for b in range(4) if a != b}
    assert nvlink_kind([0, 1, 2, 3], mesh) == "nvswitch"  # every pair, as the audit reads it
    full = {f"{a}-{b}": 18 for a in range(8) for b in range(8) if a != b}
    assert nvlink_kind(list(range(8)), full) == "nvswitch"
    quads = {f"{a}-{b}": 4 for q in (range(4), range(4, 8)) for a in q for b in q if a != b}
    assert nvlink_kind(list(range(8)), quads) == "bridge-4"


def test_audit_command_lists_findings(build):
    app = build()

    async def script(pilot):
        usage = await say(pilot, "/audit")
        assert "Usage: `/audit PATH`" in usage.text
        missing = await say(pilot, "/audit /nonexistent/bundle")
        assert "There is no file or folder `/nonexistent/bundle`." in missing.text
        path = AUDIT_DATA / "log_03_vllm_watchdog_allreduce_timeout_600s.txt"
        reply = await say(pilot, f"/audit {path}")
        assert reply.kind == "audit" and f"**Audit of {path}**" in reply.text
        assert (
            "(known-failure)" in reply.text and "`failure-collective-timeout`" in reply.text and "*error*" in reply.text
        )
        assert app.chat.last.question.fact == "model"  # the consultation goes on where it was

    drive(app, script)
