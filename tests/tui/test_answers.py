"""Bad and ambiguous answers typed into the chat: "did you mean", words that say nothing, skipping
what cannot be skipped; the consultation goes on after each (test_dialogue.py: bad values, commands)."""

from __future__ import annotations

from tests.tui.conftest import drive, say


def test_ambiguous_and_bad_answers(build):
    app = build()

    async def script(pilot):
        unsure = await say(pilot, "lama 3 70")
        assert "Did you mean **Llama 3.3 70B Instruct** or **Llama 3.1 70B Instruct**?" in unsure.text
        assert unsure.suggestions[:2] == ("Llama 3.3 70B Instruct", "Llama 3.1 70B Instruct")
        assert unsure.question.fact == "model" and "model" not in app.chat.session.c.fields
        picked = await say(pilot, "2")
        assert "model = **Llama 3.1 70B Instruct**" in picked.text and picked.question.fact == "gpu"
        nothing = await say(pilot, "banana")
        assert "I could not read that as an answer to: *Which GPU, and how many?*" in nothing.text
        skipped = await say(pilot, "skip")
        assert "This one cannot be skipped: without the GPU there is no recommendation." in skipped.text
        assert skipped.question.fact == "gpu"
        got = await say(pilot, "2 x RTX PRO 6000, about 60 users and 8k context")
        assert got.rec is not None and got.understood["workload.context_tokens"] == 8192
        assert app.chat.prompt_text.startswith("? ")

    drive(app, script)
