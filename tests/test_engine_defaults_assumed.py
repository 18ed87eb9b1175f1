"""vLLM's step budgets as assumptions (issue #13, item 1): unstated, --max-num-seqs and
--max-num-batched-tokens take vLLM V1's default for the card; where another plausible value changes the
answer, every output lists the default with the answer otherwise, and the chat asks for it."""

from __future__ import annotations

import io
import json

import pytest

from advisor.chat.consult import Consultation
from advisor.chat.plain import run as plain_run
from advisor.core.assumptions import trials
from advisor.inputs.fields import field_table
from advisor.inputs.scenario import build
from tests.test_assumptions import section
from tests.test_german_output import english_words, german_call
from tests.test_schemas import problems

# "Llama 3.3 70B FP8 on two RTX PRO 6000, 20 users: does vLLM's reserve matter?"
SEED_20 = ("recommend", "--model", "llama 3.3 70b", "--precision", "fp8", "--kv-cache-dtype", "fp8")
SEED_20 += ("--gpu", "rtx pro 6000", "--gpus", "2", "--users", "20", "--context", "8192")


def _json(cli, *args):
    code, out, err = cli(*args, "--format", "json")
    assert code == 0, err
    return json.loads(out)


def test_the_json_lists_vllms_1024_sequences_with_the_256_branch(cli):
    doc = _json(cli, *SEED_20)
    assert doc["input_states"]["max_num_seqs"] == "default"  # the engine's default, not the user's
    seqs = next(a for a in doc["assumptions"] if a["fact"] == "max_num_seqs")
    assert seqs["value"] == 1024 and seqs["state"] == "default"
    assert "vLLM V1's default on a card of 70 GiB or more other than A100 (1024)" in seqs["assumed_because"]
    assert "engine-reserve-below-users" in seqs["rules"] and "engine-max-seqs-default-large" in seqs["formulas"]
    [other] = seqs["otherwise"]
    assert other["value"] == 256 and other["layout_label"] == "2 × 1 GPU"  # the layout stays
    assert other["figure"] == {
        "fact": "conversations_after_reserve",
        "value": 22,
        "assumed": 16,
        "unit": "conversations",
    }
    assert other["findings_removed"] == ["engine-reserve-below-users"] and other["findings_added"] == []
    assert _finding_rules(doc) >= {"engine-reserve-below-users"}
    assert not problems(doc)


def _finding_rules(doc) -> set[str]:
    return {f["rule"] for f in doc["findings"]}


def test_text_and_markdown_show_the_assumed_sequences_and_the_other_answer(cli):
    code, out, _ = cli(*SEED_20)
    assert code == 0
    assumed = " ".join(section(out, "Assumptions").split())
    assert "max_num_seqs = 1,024 — --max-num-seqs not given: vLLM V1's default on a card of 70 GiB" in assumed
    assert "otherwise: 256: 2 × 1 GPU; Conversations after the engine reserve 22 instead of 16" in assumed
    assert "drops engine-reserve-below-users" in assumed
    code, md, _ = cli(*SEED_20, "--format", "md")
    assert "- **max_num_seqs** = 1,024" in md
    assert "otherwise: 256: 2 × 1 GPU; Conversations after the engine reserve 22 instead of 16" in md


def test_the_german_report_lists_them_in_german(cli):
    code, out, _ = cli(*SEED_20, "--lang", "de")
    assumed = " ".join(section(out, "Annahmen").split())
    assert "max_num_seqs = 1.024 — --max-num-seqs nicht angegeben: der Standard von vLLM V1" in assumed
    assert "sonst: 256: 2 × 1 GPU; Gespräche nach der Engine-Reserve 22 statt 16" in assumed
    assert english_words(out.split("\n  max_num_seqs = ", 1)[1].split("\n\n", 1)[0]) == []


def test_256_sequences_given_is_no_assumption_and_brings_no_warning(cli):
    doc = _json(cli, *SEED_20, "--max-num-seqs", "256")
    assert doc["input_states"]["max_num_seqs"] == "given"
    assert all(a["fact"] != "max_num_seqs" for a in doc["assumptions"])
    assert "engine-reserve-below-users" not in _finding_rules(doc)
    code, out, _ = cli(*SEED_20, "--max-num-seqs", "256")
    assert "max_num_seqs =" not in out and "After vLLM's own reserve" not in out


def test_sixty_users_on_tp_2_do_not_turn_on_the_engine_defaults(cli):
    # the README's case: 69 conversations after the reserve at 1024 sequences, more at 256: no answer changes
    doc = _json(cli, *SEED_20[:-4], "--users", "60", "--context", "8192")
    assert doc["input_states"]["max_num_seqs"] == "default"
    assert not {"max_num_seqs", "max_num_batched_tokens"} & {a["fact"] for a in doc["assumptions"]}


def test_the_values_tried_are_the_field_tables_and_skip_the_default_the_card_gets(engine):
    table = field_table().by_fact()
    assert table["max_num_seqs"].plausible == (256, 1024)
    assert table["max_num_batched_tokens"].plausible == (2048, 8192)
    for field in table.values():  # an engine default is a formula's result
        if field.default_figure is not None:
            assert any(f.result == field.default_figure for f in engine.kb.formulas.values()), field.fact
    for gpu, seqs, tokens in (("rtx pro 6000", (256,), (2048,)), ("rtx 4090", (1024,), (8192,))):
        s = build({"model": "llama 3.1 8b", "hardware": {"gpu": gpu, "gpus_per_node": 1}}, engine.kb)
        rec = engine.evaluate(s)
        tried = {fact: values for fact, _, values in trials(engine.kb, s, rec.input_states, rec.env)}
        assert tried["max_num_seqs"] == seqs and tried["max_num_batched_tokens"] == tokens, gpu


def _asked(engine, lang: str, lines: tuple[str, ...]) -> list[tuple[str, str]]:
    c = Consultation(engine, lang=lang)
    for said in lines:
        c.answer(said)
    asked = []
    while (q := c.next_question()) is not None and len(asked) < 12:
        asked.append((q.fact, q.text))
        c.skipped.add(q.fact)
    return asked


EN = ("two RTX PRO 6000", "Llama 3.3 70B FP8 with an FP8 KV cache", "20 users", "8k context")
DE = ("zwei RTX PRO 6000", "Llama 3.3 70B FP8 mit FP8-KV-Cache", "20 Nutzer", "8k Kontext")


@pytest.mark.parametrize(("lang", "lines"), [("en", EN), ("de", DE)])
def test_the_chat_asks_for_the_sequences_where_they_change_the_answer(engine, lang, lines):
    asked = dict(_asked(engine, lang, lines))
    assert "max_num_seqs" in asked and "--max-num-seqs" in asked["max_num_seqs"]
    assert "max_num_batched_tokens" not in asked  # 2048 or 16384 tokens change nothing here
    many = dict(_asked(engine, lang, (*lines[:2], lines[2].replace("20", "60"), lines[3])))
    assert "max_num_seqs" not in many


def test_a_plain_german_chat_asks_in_german_and_256_settles_it(engine, tmp_path):
    out = io.StringIO()
    typed = "\n".join([*DE, "Durchsatz", "256", *["weiß ich nicht"] * 8, "warum", "wie"]) + "\n"
    plain_run(engine, "de", transcripts=tmp_path, stdin=io.StringIO(typed), stdout=out)
    assert "Mit welchem --max-num-seqs läuft die Engine" in out.getvalue()
    # the chat's own replies (Markdown, as the chat shows them) hold no English word
    text = german_call(engine, [*DE, "Durchsatz"])
    assert "Mit welchem --max-num-seqs läuft die Engine" in text and english_words(text) == []
    c = Consultation(engine, lang="de")
    for line in (*DE, "Durchsatz"):
        c.answer(line)
    assert c.next_question().fact == "max_num_seqs"  # type: ignore[union-attr]
    c.answer("256")
    assert c.fields["workload.max_num_seqs"] == 256
    assert c.rec is not None and not c.rec.assumptions
    assert c.rec.finding("engine-reserve-below-users") is None
