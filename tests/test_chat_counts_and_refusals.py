"""A customer's counts, ruled-out values and impossible hardware, read as a listener would: a head count is
not how many work at once, a negated clause rules its value out, a card's impossible NVLink is asked back
while the rest of the answer is taken, and the words above a paste fill what the paste does not show."""

from __future__ import annotations

import pytest

from advisor.chat.dialogue import ChatSession
from tests.evidence_data import verbatim


def _session(engine, lang: str = "en") -> ChatSession:
    session = ChatSession(engine, lang)
    session.opening()
    return session


@pytest.mark.parametrize(
    ("said", "users"),
    [
        ("we're about 60 scientists in total but I'd guess 10-15 chatting with it at once", 15),
        ("insgesamt 300 Mitarbeiter, davon gleichzeitig vielleicht 25", 25),
        ("Gleichzeitig arbeiten damit fünf, sechs Analysten.", 6),
        ("35 analysts, 12 at once", 12),
    ],
)
def test_the_users_are_those_at_once_not_the_head_count(engine, said, users):
    session = _session(engine)
    session.respond("Llama 3.3 70B on two H100 SXM")
    session.respond(said)
    assert session.c.fields["workload.concurrent_conversations"] == users


@pytest.mark.parametrize(
    "said",
    [
        "hi, we're a machine builder, about 120 people, and want a chatbot for our manuals",
        "hallo, wir sind ein Maschinenbauer, ca. 120 Leute, und wollen einen Chatbot für die Doku",
    ],
)
def test_a_head_count_alone_sets_no_users(engine, said):
    session = _session(engine, "de" if "wir" in said else "en")
    session.respond(said)
    assert "workload.concurrent_conversations" not in session.c.fields


def test_a_negated_clause_rules_training_out(engine):
    session = _session(engine)
    session.respond("inference only, nobody here wants to train anything")
    assert session.c.fields.get("workload.kind") == "inference"


def test_an_nvlink_the_card_cannot_take_is_asked_back_and_the_rest_kept(engine):
    session = _session(engine, "de")
    reply = session.respond("Llama 3.1 8B auf zwei RTX 4090, per NVLink verbunden").text
    assert session.c.fields["hardware.gpu"] == "NVIDIA GeForce RTX 4090"
    assert session.c.fields["hardware.gpus_per_node"] == 2
    assert "So nicht übernommen: the NVIDIA GeForce RTX 4090 has no NVLink" in reply
    session.respond("ja")
    assert session.c.fields["hardware.nvlink"] == "none"


def test_a_new_card_drops_the_bridge_said_of_the_card_before(engine):
    session = _session(engine)
    session.respond("Llama 3.3 70B on two H100 NVL with an NVLink bridge")
    assert session.c.fields["hardware.nvlink"] == "bridge-2"
    session.respond("sorry, other client: Qwen3-30B-A3B on four L4")
    assert session.c.fields["hardware.gpu"] == "NVIDIA L4" and "hardware.nvlink" not in session.c.fields


def test_the_words_above_a_paste_fill_what_it_does_not_show(engine):
    session = _session(engine)
    paste = "this is the box we'd run Llama 3.3 70B on:\n" + verbatim("smi_list_a100_mig_guide.txt")
    reply = session.respond(paste)
    assert session.turn.act == "evidence"
    assert session.c.fields["hardware.gpus_per_node"] == 1  # the MIG devices are slices of one GPU
    assert session.c.fields["model"] == "Llama 3.3 70B Instruct"
    assert "Taken from the pasted output" in reply.text


def test_one_line_of_nvidia_smi_l_is_a_paste_not_a_count_of_zero(engine):
    session = _session(engine)
    session.respond("GPU 0: NVIDIA H100 PCIe (UUID: GPU-7b2e1c44-90a1-4f3e-b5d2-1a9c7e3f0d21)")
    assert session.turn.act == "evidence"
    assert session.c.fields["hardware.gpu"] == "NVIDIA H100 PCIe" and session.c.fields["hardware.gpus_per_node"] == 1


def test_the_plain_chat_takes_an_nvidia_smi_l_paste_as_one_message():
    import io

    from advisor.chat.plain import messages

    listing = verbatim("smi_list_a100_mig_guide.txt")
    said = list(messages(io.StringIO("Llama 3.1 8B\n" + listing + "\nthanks\n")))
    assert said == ["Llama 3.1 8B", listing.rstrip("\n"), "thanks"]
