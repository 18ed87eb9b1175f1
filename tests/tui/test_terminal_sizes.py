"""The app on any terminal from 80x24 to 200x60: below 120 columns the side panel gives way to the
conversation (F2/F4/F5 show it in its place, Escape gives it back), every message wraps at the pane's
width and is wrapped again after a resize, and the footer fits. Quitting by key asks first while a
consultation is open; `q` is a letter, even in an empty input."""

from __future__ import annotations

import re
from collections import Counter

import pytest
from textual.widgets import Footer

from advisor.tui.chatinput import ChatInput
from advisor.tui.chatlog import ChatLog
from advisor.tui.confirm import QuitScreen
from tests.tui.conftest import drive, say

RTX_60 = ["two RTX PRO 6000", "Llama 3.3 70B FP8 with FP8 KV cache", "60 users"]


def shown(app) -> list[str]:
    """The conversation's lines as the pane shows them."""
    return [strip.text.rstrip() for strip in app.chat.query_one(ChatLog).lines]


def words(lines: list[str]) -> Counter[str]:
    """The words on screen, however they are wrapped."""
    return Counter(re.findall(r"\w+", " ".join(lines)))


def assert_fits(app, width: int) -> None:
    """No line of the conversation is clipped or cut short with an ellipsis, and the footer's keys
    lie inside the screen without overlapping."""
    log = app.chat.query_one(ChatLog)
    pane = log.scrollable_content_region.width
    lines = shown(app)
    assert lines and max(len(line) for line in lines) <= pane
    assert not any("…" in line for line in lines)
    keys = sorted((k.region.x, k.region.right) for k in app.screen.query_one(Footer).children if k.region.width)
    assert keys and keys[-1][1] <= width
    assert all(a[1] <= b[0] for a, b in zip(keys, keys[1:], strict=False)), keys


@pytest.mark.parametrize("lang", ["en", "de"])
def test_a_resize_from_200x60_to_80x24_rewraps_and_the_footer_fits(build, lang):
    app = build(lang=lang)

    async def script(pilot):
        for line in RTX_60:
            await say(pilot, line)
        await say(pilot, "why" if lang == "en" else "warum")
        assert app.chat.query_one("#side").display and app.chat.has_class("-wide")
        assert_fits(app, 200)
        wide = shown(app)
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        await pilot.pause()
        assert app.chat.has_class("-narrow") and not app.chat.query_one("#side").display
        assert app.chat.query_one(ChatLog).region.width == 80  # the conversation takes the whole width
        assert_fits(app, 80)
        narrow = shown(app)
        assert len(narrow) > len(wide)  # wrapped again, not clipped
        # every word said is still on screen after the re-wrap (a table wraps inside its cells)
        assert words(wide) == words(narrow)
        await pilot.resize_terminal(200, 60)
        await pilot.pause()
        await pilot.pause()
        assert app.chat.query_one("#side").display and shown(app) == wide

    drive(app, script, size=(200, 60))


def test_the_side_panel_takes_the_conversations_place_on_a_small_screen(build):
    app = build()

    async def script(pilot):
        for line in RTX_60:
            await say(pilot, line)
        await pilot.press("f4")
        await pilot.pause()
        assert app.chat.query_one("#side").display and not app.chat.query_one(ChatLog).display
        await pilot.press("escape")
        await pilot.pause()
        assert not app.chat.query_one("#side").display and app.chat.query_one(ChatLog).display
        assert app.focused is app.chat.query_one(ChatInput)

    drive(app, script, size=(80, 24))


def test_the_quit_key_asks_first_while_a_consultation_is_open(build):
    app = build()

    async def script(pilot):
        await say(pilot, "two RTX PRO 6000")
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert isinstance(app.screen, QuitScreen) and app.is_running
        await pilot.press("n")
        await pilot.pause()
        assert app.is_running and not isinstance(app.screen, QuitScreen)
        await pilot.press("ctrl+q")
        await pilot.pause()
        await pilot.press("y")
        await pilot.pause()
        assert not app.is_running

    drive(app, script, size=(80, 24))


def test_the_quit_key_asks_in_german(build):
    app = build(lang="de")

    async def script(pilot):
        await say(pilot, "zwei RTX PRO 6000")
        await pilot.press("ctrl+q")
        await pilot.pause()
        texts = [str(label.render()) for label in app.screen.query("Label")]
        assert texts == [
            "Beratung beenden?",
            "Das Protokoll wird gespeichert.",
            "j oder Enter: beenden · n oder Esc: zurück zum Gespräch",
        ]
        await pilot.press("j")
        await pilot.pause()
        assert not app.is_running

    drive(app, script)


def test_q_in_an_empty_input_is_the_start_of_a_message_even_with_a_consultation_open(build):
    app = build()

    async def script(pilot):
        await say(pilot, "two RTX PRO 6000")
        assert app.chat.query_one(ChatInput).value == ""
        await pilot.press("q")
        await pilot.pause()
        assert app.is_running and not isinstance(app.screen, QuitScreen)
        assert app.chat.query_one(ChatInput).value == "q"

    drive(app, script, size=(80, 24))
