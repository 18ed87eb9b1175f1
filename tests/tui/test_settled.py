"""When the chat says the consultation is settled, it names the assumed values that could still change
the answer and how, in the session's language, or says plainly that none could. They are the
recommendation's own assumption records (what `advisor recommend --format json` lists as
`assumptions`) and the questions the customer skipped whose answers still change the result (the seed
case: Llama 70B on four RTX 4090 fits no layout in BF16, and PP 4 in FP8)."""

from __future__ import annotations

import io
import json

import pytest

from advisor.chat.plain import run as plain_run
from advisor.chat.strings import fact_label
from advisor.cli import main
from tests.tui.conftest import advisor_said, consult, drive

SKIP = {"en": "skip", "de": "weiß ich nicht"}
RTX4090 = {
    "en": ["Llama 3.1 70B on 4 RTX 4090", "60 chat users"],
    "de": ["Llama 3.1 70B auf 4 RTX 4090", "60 Chat-Nutzer"],
}


def plain_call(engine, lang: str, lines: list[str], tmp_path) -> str:
    """A whole `chat --plain` call: the lines typed, then "don't know" to every question."""
    typed = "\n".join([*lines, *[SKIP[lang]] * 12]) + "\n"
    out = io.StringIO()
    plain_run(engine, lang, transcripts=tmp_path, stdin=io.StringIO(typed), stdout=out)
    return out.getvalue()


def last_settled(text: str, head: str) -> str:
    """The last settled paragraph and what follows it, up to the sources."""
    tail = text[text.rindex(head) :]
    return tail.split("\n\n[")[0]


@pytest.mark.parametrize(
    ("lang", "head", "named"),
    [
        (
            "en",
            "Settled: no question left is worth asking.",
            "- assumed: precision bf16; with fp8 the answer would be PP 4 (Weights 67.7 GiB instead of 131.4 GiB)",
        ),
        (
            "de",
            "Entschieden: keine offene Frage lohnt sich noch.",
            "- angenommen: Präzision bf16; mit fp8 wäre die Antwort PP 4 (Gewichte 67,7 GiB statt 131,4 GiB)",
        ),
    ],
)
def test_a_skipped_precision_is_named_when_settled(engine, tmp_path, capsys, lang, head, named):
    said = last_settled(plain_call(engine, lang, RTX4090[lang], tmp_path), head)
    assert named in said
    # the CLI agrees: in FP8 the same call gets PP 4
    main(
        ["recommend", "--model", "Llama 3.1 70B", "--gpu", "RTX 4090", "--gpus", "4", "--users", "60"]
        + ["--precision", "fp8", "--format", "json"]
    )
    layout = json.loads(capsys.readouterr().out)["layout"]
    assert (layout["replicas"], layout["tp"], layout["pp"]) == (1, 1, 4)


def test_the_settled_names_are_the_cli_assumptions(engine, tmp_path, capsys):
    said = last_settled(
        plain_call(engine, "en", ["Llama 3.1 70B FP8 on 4 RTX 4090", "60 chat users"], tmp_path),
        "Settled: no question left is worth asking.",
    )
    main(
        ["recommend", "--model", "Llama 3.1 70B", "--precision", "fp8", "--gpu", "RTX 4090", "--gpus", "4"]
        + ["--users", "60", "--format", "json"]
    )
    facts = [a["fact"] for a in json.loads(capsys.readouterr().out)["assumptions"]]
    assert facts, "the CLI lists assumptions for this call"
    for fact in facts:
        assert f"- assumed: {fact_label(fact, 'en')} " in said, fact
    assert "with fp8 the answer would be PP 4 (Conversations that fit 14 instead of 7)" in said
    assert "None of the assumed values" not in said


@pytest.mark.parametrize(
    ("lang", "none"),
    [
        ("en", "None of the assumed values could change the answer."),
        ("de", "Keiner der angenommenen Werte könnte die Antwort ändern."),
    ],
)
def test_settled_says_plainly_when_nothing_could_change_it(engine, tmp_path, lang, none):
    lines = {
        "en": ["Llama 3.3 70B in bf16 on 8 H100 SXM", "60 chat users", "8k context", "bf16"],
        "de": ["Llama 3.3 70B in bf16 auf 8 H100 SXM", "60 Nutzer", "8k Kontext", "bf16"],
    }
    text = plain_call(engine, lang, lines[lang], tmp_path)
    assert none in text
    assert "no other answer would change" not in text and "keine andere Antwort" not in text


def test_the_app_names_what_could_still_matter(build):
    app = build(lang="de")

    async def script(pilot):
        await consult(pilot, RTX4090["de"], skip=SKIP["de"])
        last = advisor_said(app)[-1]
        assert "Entschieden: keine offene Frage lohnt sich noch." in last
        assert "**Angenommen, und könnte die Antwort noch ändern:**" in last
        assert "angenommen: Präzision bf16; mit fp8 wäre die Antwort **PP 4**" in last

    drive(app, script)
