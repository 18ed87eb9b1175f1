"""SVG snapshots of the chat app, one class per feature. Run `pytest tests/tui --snapshot-update`
after an intended change, and look at the report (or the SVGs under __snapshots__) before committing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from advisor.tui.chatinput import ChatInput
from tests.tui.conftest import say, settle

pytest.importorskip("pytest_textual_snapshot")  # the `test` extra installs it

SIZE = (120, 40)
RTX_60 = ["two RTX PRO 6000", "Llama 3.3 70B FP8 with FP8 KV cache", "60 users"]


def answering(*lines: str) -> Callable[[Any], Any]:
    """A run_before that waits for the first question, freezes the cursor and gives these answers."""

    async def run_before(pilot: Any) -> None:
        await settle(pilot)
        pilot.app.chat.query_one(ChatInput).cursor_blink = False
        for line in lines:
            await say(pilot, line)

    return run_before


class TestStartScreen:
    def test_english(self, build, snap_compare):
        assert snap_compare(build(), run_before=answering(), terminal_size=SIZE)

    def test_german(self, build, snap_compare):
        assert snap_compare(build(lang="de"), run_before=answering(), terminal_size=SIZE)


class TestRecommendation:
    def test_tp2_for_60_users(self, build, snap_compare):
        assert snap_compare(build(), run_before=answering(*RTX_60), terminal_size=SIZE)


class TestWhy:
    def test_why_at_the_p2p_question(self, build, snap_compare):
        assert snap_compare(build(), run_before=answering(*RTX_60, "skip", "why"), terminal_size=SIZE)


class TestHow:
    def test_how_the_figures_were_obtained(self, build, snap_compare):
        assert snap_compare(build(), run_before=answering(*RTX_60, "how"), terminal_size=SIZE)


class TestDrawing:
    def test_h200_tp4_pp2(self, build, snap_compare):
        run_before = answering("8x H200 NVL with 4-way bridges", "Llama 3.1 405B BF16")
        assert snap_compare(build(), run_before=run_before, press=["f4"], terminal_size=SIZE)


SIZES = {"80x24": (80, 24), "200x60": (200, 60)}


class TestTerminalSizes:
    """The start screen, a recommendation and `why` at the smallest and a large terminal (120x40 above):
    below 120 columns the side panel gives way and the footer shows the keys a call needs."""

    @pytest.mark.parametrize("size", list(SIZES))
    def test_start_screen(self, build, snap_compare, size):
        assert snap_compare(build(), run_before=answering(), terminal_size=SIZES[size])

    @pytest.mark.parametrize("size", list(SIZES))
    def test_recommendation(self, build, snap_compare, size):
        assert snap_compare(build(), run_before=answering(*RTX_60), terminal_size=SIZES[size])

    @pytest.mark.parametrize("size", list(SIZES))
    def test_why(self, build, snap_compare, size):
        assert snap_compare(build(), run_before=answering(*RTX_60, "skip", "why"), terminal_size=SIZES[size])

    def test_the_side_panel_in_the_conversations_place_at_80x24(self, build, snap_compare):
        assert snap_compare(build(), run_before=answering(*RTX_60), press=["f4"], terminal_size=SIZES["80x24"])
