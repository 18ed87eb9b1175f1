"""A customer call where the figures move: questions go by what their answers change (conversations and
speed included), a purchase being planned gets no host questions, every changed fact shows the result
now and what changed, and a pasted `nvidia-smi topo -m` is judged by the audit's readers and rules."""

from __future__ import annotations

import pytest

from advisor.chat.consult import HOST_FACTS
from advisor.chat.dialogue import ChatSession
from tests.evidence_data import verbatim
from tests.tui.conftest import drive, say


@pytest.fixture()
def session(engine):
    def start(*lines: str, lang: str = "en") -> ChatSession:
        s = ChatSession(engine, lang)
        s.opening()
        for line in lines:
            s.respond(line)
        return s

    return start


def skip_all(s: ChatSession) -> list[str]:
    """Skip every further question; the facts asked, in order."""
    asked = []
    for _ in range(15):
        if s.question is None:
            break
        asked.append(s.question.fact)
        s.respond("skip")
    assert s.question is None
    return asked


def test_kv_cache_type_is_asked_when_it_only_doubles_the_conversations(session):
    # 2 x H200 NVL, Llama 70B FP8, 20 users: FP8 or BF16 cache gives the same layout and no warning,
    # but 46 against 92 conversations; a pre-sales engineer must ask it.
    s = session("2x H200 NVL", "Llama 3.3 70B FP8", "20 users")
    asked = skip_all(s)
    assert "kv_cache_dtype" in asked
    s = session("2x H200 NVL", "Llama 3.3 70B FP8", "20 users")
    while s.question.fact != "kv_cache_dtype":
        s.respond("skip")
    why = s.respond("why").text
    assert "| KV cache type = bf16 | 2 × 1 GPU · conversations 46 ·" in why
    assert "| KV cache type = fp8 | 2 × 1 GPU · conversations 92 ·" in why


def test_no_question_whose_answers_all_give_the_same_result(session):
    # once the KV cache is FP8 and the context is given, no answer to its type moves anything
    s = session("2x H200 NVL", "Llama 3.3 70B FP8 with FP8 KV cache", "20 users", "4k context")
    asked = skip_all(s)
    assert "kv_cache_dtype" not in asked and "context_tokens" not in asked


def test_planning_a_purchase_asks_nothing_about_the_host(session):
    bought = skip_all(session("two RTX PRO 6000", "Llama 3.3 70B FP8", "60 users"))
    assert set(HOST_FACTS) & set(bought)  # a running machine is asked about peer-to-peer, IOMMU, ACS
    s = session("We plan to buy two RTX PRO 6000 for Llama 3.3 70B FP8", "60 users")
    planned = skip_all(s)
    assert not set(HOST_FACTS) & set(planned)
    assert s.c.rec.layout is not None
    de = session("Wir wollen zwei RTX PRO 6000 anschaffen", "Llama 3.3 70B FP8", "60 Nutzer", lang="de")
    assert not set(HOST_FACTS) & set(skip_all(de))


def test_planning_is_said_once(session):
    s = session()
    reply = s.respond("we are going to buy 4 L40S")
    assert "Planning a purchase: I ask nothing about the host" in reply.text
    assert "Planning a purchase" not in s.respond("Llama 3.3 70B FP8").text


def test_a_changed_fact_shows_the_result_now_and_what_moved(session):
    s = session("two RTX PRO 6000", "Llama 3.3 70B FP8", "60 users")
    reply = s.respond("the KV cache is FP8 too")
    assert reply.understood == {"kv_cache_dtype": "fp8"}
    assert "**Result now:** TP 2 (unchanged) · conversations 41 → 83 ·" in reply.text
    assert "all users 490.6 → 630.9 tokens/s" in reply.text
    # a what-if shows the comparison but keeps the facts
    before = dict(s.c.fields)
    s.respond("what if 120 users")
    assert s.c.fields == before


def test_german_figures_move_after_60_nutzer(build):
    app = build(lang="de")

    async def script(pilot):
        await say(pilot, "zwei RTX Pro 6000")
        await say(pilot, "Llama 3.3 70B FP8, KV-Cache FP8")
        reply = await say(pilot, "60 Nutzer")
        assert "Notiert: Nutzer = **60**" in reply.text
        # before the user count PP 2 carried as much at full load (within 10 %); 60 users make TP 2 the faster
        assert "**Ergebnis jetzt:** PP 2 → TP 2 · Gespräche 83 ·" in reply.text
        assert "alle Nutzer 645,0 → 630,9" in reply.text

    drive(app, script)


def test_pasted_topology_across_two_sockets_warns_about_tp4(session):
    # four L40S, two per socket (a public thread's capture): TP 4 must cross the processors' link
    s = session("4 L40S", "Llama 3.3 70B FP8", "20 users")
    assert s.c.rec.layout.tp == 4
    reply = s.respond(verbatim("topo_04_4xL40S_2socket_node_sys_nic_spaces.txt"))
    assert reply.kind == "topo"
    assert "**On the pasted topology:**" in reply.text
    assert "TP 4 on GPUs 0,1,2,3 crosses the link between the processors" in reply.text
    assert "TP 2 × PP 2 keeps it inside" in reply.text  # the split that stays inside one socket, by number
    assert "`audit-tp-group-crosses-sockets-split`" in reply.text
    assert any(c.source == "seed-002" for c in reply.notes)  # the finding's footnotes resolve
    # the topology stays: a later change is judged on it again
    later = s.respond("4k context")
    assert "audit-tp-group-crosses-sockets-split" in later.text


def test_pasted_nvlink_mesh_sets_peer_to_peer(session):
    s = session("4 H100 SXM", "Llama 3.3 70B BF16")
    reply = s.respond(verbatim("topo_05_4xH100_nv6_mesh_nic_per_gpu_strided_affinity.txt"))
    assert s.c.fields["hardware.p2p"] == "ok"  # every pair on NVLink: the audit's reader says P2P works
    assert "peer-to-peer = **ok**" in reply.text
    assert "p2p" not in skip_all(s)
