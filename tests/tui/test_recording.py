"""The chat records its transcript: a journal line per answered turn, written before the answer is
shown; `/save` and quitting write the final Markdown and JSON."""

from __future__ import annotations

import json
import re

from advisor.tui.app import make_app
from tests.tui.conftest import drive, say

TURNS = ["two RTX PRO 6000", "Llama 3.3 70B FP8 with FP8 KV cache", "60 users", "why", "how"]


def _journal(folder):
    journals = sorted(folder.glob("*.journal"))
    assert len(journals) == 1, journals
    return [json.loads(line) for line in journals[0].read_text().splitlines()]


def test_each_turn_is_journaled_before_it_is_shown(build, tmp_path):
    app = build(record=True)
    folder = tmp_path / "transcripts"
    seen_at_show: list[int] = []

    async def script(pilot):
        show = app.chat._show

        def counting_show(reply, answers_a_line=False):
            if reply.record:
                seen_at_show.append(len(_journal(folder)) - 1)
            show(reply, answers_a_line)

        app.chat._show = counting_show
        for text in TURNS:
            await say(pilot, text)
        app.chat._show = show
        records = _journal(folder)
        assert records[0]["type"] == "start" and records[0]["kind"] == "chat"
        turns = [r for r in records if r["type"] == "turn"]
        assert [t["said"] for t in turns] == TURNS
        assert seen_at_show == [1, 2, 3, 4, 5]  # the turn was on disk when its answer was shown
        assert turns[2]["understood"] == {"workload.concurrent_conversations": 60}
        assert turns[2]["result"]["layout_label"] == "TP 2"
        assert re.search(r"\n\[\d+\] .+ — .+", turns[4]["reply"])  # footnote marks resolve in the transcript
        saved = await say(pilot, "/save")
        assert saved.text.startswith("Transcript saved:")
        doc = json.loads(next(folder.glob("*.json")).read_text())
        assert doc["complete"] and len(doc["turns"]) == 5 and doc["result"]["layout_label"] == "TP 2"
        assert next(folder.glob("*.md")).read_text().count("**User:**") == 5
        # the next turn starts a new transcript, closed when the app quits
        await say(pilot, "what if 120 users")
        assert len(list(folder.glob("*.journal"))) == 2
        await pilot.press("ctrl+c")
        await pilot.pause()

    drive(app, script)
    assert len(list(folder.glob("*.json"))) == 2
    assert app.return_value and "Transcript saved" in app.return_value


def test_nothing_recorded_without_an_answer(tmp_path, engine):
    app = make_app(engine=engine, transcripts=tmp_path / "t")

    async def script(pilot):
        await pilot.press("f1")
        await pilot.press("escape")
        assert (await say(pilot, "/save")).text == "Nothing to save yet."
        await pilot.press("ctrl+q")

    drive(app, script)
    assert not (tmp_path / "t").exists() or not list((tmp_path / "t").iterdir())
    assert app.return_value == ""
