"""A customer understood as a person would (issue #31): names keep their digits, numbers are read in
words and with units, questions and hypotheticals change no fact wherever their cue stands, a choice
is read inside a sentence, unusual values and ambiguous cards are asked back, every request gets its
answer, and the chat answers in the customer's language. Each class in English and German, in
phrasings other than the issue's own examples."""

from __future__ import annotations

import io

import pytest

from advisor.chat.dialogue import ChatSession
from advisor.chat.plain import messages
from advisor.cli import chat_lang


def session(engine, *lines: str, lang: str = "en") -> ChatSession:
    s = ChatSession(engine, lang)
    s.opening()
    for line in lines:
        s.respond(line)
    return s


@pytest.mark.parametrize(
    ("said", "gpu", "count"),
    [
        ("we'd rent 4x RTX PRO 6000 Server Edition", "rtx-pro-6000-server", 4),
        ("sechs RTX PRO 6000 Server Edition im Rack", "rtx-pro-6000-server", 6),
        ("the box has H200 NVL x 4", "h200-nvl", 4),
        ("acht H100 SXM5 mit NVSwitch", "h100-sxm", 8),
    ],
)
def test_a_product_name_keeps_its_digits_and_the_count_beside_it_counts(engine, said, gpu, count):
    s = session(engine, "llama 3.1 8b")
    reply = s.respond(said)
    assert s.c.fields["hardware.gpu"] == engine.kb.gpus[gpu].name
    assert s.c.fields["hardware.gpus_per_node"] == count
    assert "hardware.nodes" not in s.c.fields and "⚠" not in reply.text


def test_a_model_name_with_digits_is_no_count(engine):
    s = session(engine, "Qwen3-235B-A22B in fp8, drei H200 NVL")
    assert s.c.fields["model"] == "Qwen3-235B-A22B" and s.c.fields["hardware.gpus_per_node"] == 3


@pytest.mark.parametrize(
    ("said", "fact", "value"),
    [
        ("roughly twelve thousand tokens of context", "workload.context_tokens", 12000),
        ("so um die zweihundertfünfzig gleichzeitige Nutzer", "workload.concurrent_conversations", 250),
        ("vierundzwanzigtausend Token Kontext", "workload.context_tokens", 24000),
        ("a hundred and twenty users at peak", "workload.concurrent_conversations", 120),
        ("200 gig roce between the boxes", "hardware.node_link_gbps", 200.0),
    ],
)
def test_numbers_in_words_and_units(engine, said, fact, value):
    s = session(engine, "llama 3.1 8b on one l4")
    reply = s.respond(said)
    assert s.c.fields[fact] == value, reply.text


@pytest.mark.parametrize(
    ("asked_after", "said", "fact", "value"),
    [
        ("users", "64k should cover them", "workload.context_tokens", 65536),
        ("users", "das sind dann wohl so 45 leute gleichzeitig", "workload.concurrent_conversations", 45),
    ],
)
def test_a_number_inside_a_sentence_answers_the_number_question(engine, asked_after, said, fact, value):
    s = session(engine, "llama 3.1 8b on one l4")
    assert s.question.fact == asked_after
    if fact == "workload.context_tokens":
        s.respond("30 users")
    s.respond(said)
    assert s.c.fields[fact] == value


@pytest.mark.parametrize(
    "said",
    [
        "ok so, suppose they moved the KV cache to fp8 - what changes?",
        "und wenn wir das auf 16 Nutzer begrenzen würden?",
        "would it change anything if they had 3 more cards?",
        "mal angenommen, die Gewichte sind in fp8",
    ],
)
def test_a_hypothetical_anywhere_in_the_line_compares_and_keeps_nothing(engine, said):
    s = session(engine, "llama 3.3 70b fp8", "2 h200 nvl", "40 users")
    before = dict(s.c.fields)
    reply = s.respond(said)
    assert reply.kind == "what_if", reply.text
    assert s.c.fields == before


@pytest.mark.parametrize(
    "said",
    [
        "how did you arrive at those 83 conversations?",
        "wie kommst du auf die 83 Gespräche?",
        "why not one copy per card, 2 copies?",
        "wieso nicht einfach zwei Replikate?",
        "fp8 or bf16 weights, which is faster for them?",
        "ist nvfp4 oder fp8 besser hier?",
    ],
)
def test_a_question_with_values_in_it_commits_none_of_them(engine, said):
    s = session(engine, "llama 3.3 70b fp8", "two rtx pro 6000 workstation", "60 users")
    before = dict(s.c.fields)
    reply = s.respond(said)
    assert s.c.fields == before, reply.text
    assert reply.kind in ("how", "why_not", "compare")


def test_a_comparison_shows_each_value_tried(engine):
    s = session(engine, "llama 3.3 70b", "two h100 nvl", "60 users")
    reply = s.respond("bf16 or fp8 - which is better for them?")
    assert reply.kind == "compare"
    assert "**bf16**" in reply.text and "**fp8**" in reply.text and "Nothing was changed" in reply.text


@pytest.mark.parametrize(
    ("said", "value"),
    [
        ("honestly it's broken, tp hangs unless NCCL_P2P_DISABLE=1 is set", "broken"),
        ("yes, topo -p2p r shows OK everywhere", "ok"),
        ("nee, das ist kaputt", "broken"),
    ],
)
def test_a_choice_inside_a_sentence_answers_the_choice_question(engine, said, value):
    s = session(engine, "llama 3.3 70b fp8", "two rtx pro 6000 workstation", "60 users", "8k", "throughput")
    while s.question is not None and s.question.fact != "p2p":
        s.respond("skip")
    assert s.question is not None
    s.respond(said)
    assert s.c.fields["hardware.p2p"] == value


@pytest.mark.parametrize(
    ("said", "kind", "shows"),
    [
        ("what's the difference between tensor and pipeline parallelism?", "concept", "Pipeline parallelism (PP)"),
        ("was ist eigentlich NVLink?", "concept", "NVLink ist NVIDIAs Verbindung"),
        ("can this box also do stable diffusion for the marketing team?", "scope", "outside what this advisor"),
        ("können wir darauf auch Bildgenerierung machen?", "scope", "außerhalb dessen"),
    ],
)
def test_a_question_at_an_open_choice_question_is_answered_not_refused(engine, said, kind, shows):
    lang = "de" if "ist" in said or "können" in said else "en"
    s = session(engine, "llama 3.3 70b fp8", "two rtx pro 6000 workstation", "60 users", "8k", lang=lang)
    assert s.question is not None and s.question.choices  # a choice question is open
    reply = s.respond(said)
    assert reply.kind == kind and shows in reply.text
    assert "Not accepted" not in reply.text and "Nicht übernommen" not in reply.text


def test_requests_get_their_answers(engine):
    s = session(engine, "llama 3.3 70b fp8", "two rtx pro 6000 workstation", "60 users")
    command = s.respond("can you give me the serve line for vllm?")
    assert "vllm serve" in command.text and "--tensor-parallel-size 2" in command.text
    order = s.respond("which servers should they order?")
    assert order.kind == "request" and "What to order:" in order.text
    german = session(engine, "Llama 3.3 70B FP8", "zwei H200 NVL", "50 Nutzer", lang="de")
    assert "Was bestellt werden sollte" in german.respond("was sollen die bestellen?").text


@pytest.mark.parametrize("said", ["no clue, would have to ask their admin", "hab ich noch nicht nachgeschaut"])
def test_not_knowing_in_ones_own_words_leaves_the_question_to_its_default(engine, said):
    s = session(engine, "llama 3.3 70b fp8", "two rtx pro 6000 workstation")
    asked = s.question.fact
    reply = s.respond(said)
    assert asked in s.c.skipped and reply.question is not None and reply.question.fact != asked


@pytest.mark.parametrize(
    ("said", "fact", "value"),
    [
        ("context is about 12 tokens", "workload.context_tokens", 12),
        ("sie haben 9000 Knoten", "hardware.nodes", 9000),
    ],
)
def test_an_unusual_value_is_asked_back_before_it_is_taken(engine, said, fact, value):
    s = session(engine, "llama 3.1 8b on one l4")
    reply = s.respond(said)
    assert fact not in s.c.fields and ("right?" in reply.text or "stimmt das?" in reply.text)
    s.respond("yes")
    assert s.c.fields[fact] == value


def test_an_unusual_value_is_dropped_when_the_customer_says_otherwise(engine):
    s = session(engine, "llama 3.1 8b on one l4")
    s.respond("context is about 12 tokens")
    s.respond("sorry, 12k tokens")
    assert s.c.fields["workload.context_tokens"] == 12288


def test_a_card_family_is_asked_where_its_variants_answer_differently(engine):
    s = session(engine, "Llama 3.3 70B")
    reply = s.respond("two H100")
    assert "Which H100 exactly" in reply.text and "H100 PCIe" in reply.text
    s.respond("the NVL ones")
    assert s.c.fields["hardware.gpu"] == engine.kb.gpus["h100-nvl"].name


def test_a_variant_ruled_out_is_not_offered(engine):
    s = session(engine, "Llama 3.3 70B")
    reply = s.respond("two H100, not the PCIe ones")
    assert "H100 PCIe" not in reply.text.split("exactly")[-1]


def test_the_chat_answers_in_the_customers_language(engine):
    s = session(engine, "llama 3.3 70b fp8")
    reply = s.respond("wir haben zwei H200 NVL und etwa 40 Nutzer gleichzeitig")
    assert reply.lang == "de" and s.lang == "de"
    back = s.respond("and what if we had four of them?")
    assert back.lang == "en"


def test_a_chosen_language_stays(engine):
    s = ChatSession(engine, "en", forced_lang=True)
    s.opening()
    assert s.respond("wir haben zwei H200 NVL und etwa 40 Nutzer gleichzeitig").lang == "en"


@pytest.mark.parametrize(
    ("argv", "env", "want"),
    [
        ([], {"LANG": "de_DE.UTF-8"}, ("de", False)),
        ([], {"LANG": "en_US.UTF-8", "LC_ALL": "de_AT.UTF-8"}, ("de", False)),
        (["chat", "--lang", "en"], {"LANG": "de_DE.UTF-8"}, ("en", True)),
        ([], {}, ("en", False)),
    ],
)
def test_the_chat_language_comes_from_the_locale_unless_chosen(argv, env, want):
    assert chat_lang(argv, "en", env) == want


def test_a_pasted_log_is_one_message_in_plain_mode():
    typed = (
        "llama 3.3 70b\n"
        "node7:4021:4090 [0] NCCL INFO Channel 00/02 : 0 1\n"
        "node7:4021:4090 [0] NCCL WARN Call to ibv_create_qp failed\n"
        "node7:4021:4090 [0] NCCL INFO transport/net_ib.cc:1050 -> 2\n"
        "60 users\n"
    )
    said = list(messages(io.StringIO(typed)))
    assert said[0] == "llama 3.3 70b" and said[-1] == "60 users"
    assert len(said) == 3 and said[1].count("\n") == 2


def test_a_bracketed_paste_is_one_message():
    typed = "\x1b[200~first line of a paste\nsecond line\x1b[201~\n8 users\n"
    assert list(messages(io.StringIO(typed))) == ["first line of a paste\nsecond line", "8 users"]


def test_a_pasted_engine_line_is_audited_and_its_facts_taken(engine):
    s = session(engine, "two L40S")
    reply = s.respond(
        "docker run --gpus all --ipc=host vllm/vllm-openai:latest --model Qwen/Qwen3-32B --tensor-parallel-size 2"
    )
    assert reply.kind == "evidence" and "Audit of the pasted text" in reply.text
    assert s.c.fields["model"] == "Qwen3-32B"
    assert "/tmp" not in reply.text and "pasted.txt" not in reply.text.split("\n")[2]


@pytest.mark.parametrize(
    ("said", "nodes", "per_node"),
    [
        ("we run three DGX H100 in the lab", 3, 8),
        ("zwei HGX B200 Knoten", 2, 8),
        ("four H200 NVL servers", 4, None),
    ],
)
def test_a_machine_counts_nodes_not_cards(engine, said, nodes, per_node):
    s = session(engine, "llama 3.1 405b")
    s.respond(said)
    assert s.c.fields["hardware.nodes"] == nodes
    assert s.c.fields.get("hardware.gpus_per_node") == per_node


@pytest.mark.parametrize(
    ("said", "value"),
    [("somewhere between 40 and 70 users", 70), ("so zwanzig bis dreißig Leute gleichzeitig", 30)],
)
def test_a_range_is_sized_for_its_upper_end(engine, said, value):
    s = session(engine, "llama 3.1 8b on one l4")
    s.respond(said)
    assert s.c.fields["workload.concurrent_conversations"] == value


def test_a_correction_names_the_fact_it_corrects(engine):
    s = session(engine, "llama 3.3 70b fp8", "6 l40s", "60 users")
    s.respond("oops, 4 not 6")
    assert s.c.fields["hardware.gpus_per_node"] == 4 and s.c.fields["workload.concurrent_conversations"] == 60


def test_a_bare_width_is_asked_back(engine):
    s = session(engine, "llama 3.3 70b")
    reply = s.respond("they quantised it to 4 bit")
    assert "precision" not in s.c.fields and "int4" in reply.text and "nvfp4" in reply.text
    s.respond("2")
    assert s.c.fields["precision"] == "nvfp4"


def test_a_rate_in_bytes_is_asked_back(engine):
    s = session(engine, "llama 3.1 405b", "2 nodes of 8 h100 sxm")
    reply = s.respond("200 GB/s ethernet between them")
    assert "hardware.node_link_gbps" not in s.c.fields and "1,600 Gb/s" in reply.text
    s.respond("yes")
    assert s.c.fields["hardware.node_link_gbps"] == 200.0


def test_not_knowing_and_asking_how_gets_the_way_to_find_out(engine):
    s = session(engine, "llama 3.3 70b fp8", "two rtx pro 6000 workstation", "60 users", "8k", "throughput")
    while s.question is not None and s.question.fact != "p2p":
        s.respond("skip")
    reply = s.respond("keine Ahnung, wo sehe ich das?")
    assert "p2p" in s.c.skipped and "nvidia-smi topo -p2p r" in reply.text


def test_the_same_request_again_for_another_engine(engine):
    s = session(engine, "llama 3.3 70b fp8", "two rtx pro 6000 workstation", "60 users")
    assert "vllm serve" in s.respond("the vllm serve line please").text
    again = s.respond("and the same for sglang?")
    assert "sglang.launch_server" in again.text


def test_a_request_that_opens_with_a_command_name_is_a_request(engine):
    s = session(engine, "llama 3.3 70b fp8", "two rtx pro 6000 workstation", "60 users")
    reply = s.respond("vllm serve Zeile bitte")
    assert reply.kind == "request" and "vllm serve" in reply.text


def test_two_cards_in_a_question_are_compared(engine):
    s = session(engine, "llama 3.3 70b fp8", "two h100 nvl", "60 users")
    reply = s.respond("L40S or RTX PRO 6000 Server Edition, which would be better?")
    assert reply.kind == "compare" and "L40S" in reply.text and "Server Edition" in reply.text
    assert s.c.fields["hardware.gpu"] == engine.kb.gpus["h100-nvl"].name


def test_a_card_named_again_by_its_family_changes_nothing(engine):
    s = session(engine, "llama 3.3 70b fp8", "two h100 pcie", "60 users")
    reply = s.respond("the H100 has no nvlink bridge here")
    assert s.c.fields["hardware.gpu"] == engine.kb.gpus["h100-pcie"].name
    assert s.c.fields["hardware.nvlink"] == "none" and "Which H100" not in reply.text


@pytest.mark.parametrize(("said", "model"), [("the 120b please", "gpt-oss-120b"), ("das kleine 8x7b", "mixtral-8x7b")])
def test_a_model_named_by_its_own_size_token(engine, said, model):
    s = session(engine)
    s.respond(said)
    assert s.c.fields["model"] == engine.kb.models[model].name
