"""The app's screens in a German session carry no English word from the deny-list of
tests/test_german_output.py: the conversation, the facts panel, the footer, the tabs and the prompt."""

from __future__ import annotations

from tests.test_german_output import english_words


def test_the_app_screens_speak_german(build):
    from textual.widgets import Footer

    from advisor.tui.fact_panel import FactsTable
    from tests.tui.conftest import advisor_said, drive, say

    app = build(lang="de")

    async def script(pilot):
        for line in ["zwei RTX PRO 6000", "Llama 3.3 70B FP8, KV-Cache FP8", "60 Nutzer", "warum", "wie"]:
            await say(pilot, line)
        said = "\n\n".join(advisor_said(app))
        rows = app.chat.query_one(FactsTable).rows_shown
        panel = "\n".join(f"{r.label} {r.shown} {r.origin}" for r in rows)
        footer = " ".join(k.description for k in app.screen.query_one(Footer).children)
        tabs = " ".join(str(t.label) for t in app.chat.query("Tab"))
        for text in (said, panel, footer, tabs, app.chat.prompt_text):
            assert english_words(text) == [], text[:200]

    drive(app, script)
