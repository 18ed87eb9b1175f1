"""Helpers for driving the chat app: build it around the session's engine, type a line and wait
until the turn is answered, run a whole consultation."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any

import pytest

from advisor.tui.app import AdvisorApp, make_app
from advisor.tui.chatinput import ChatInput
from advisor.tui.chatlog import ChatLog

NO_RECORDING: Callable[..., Any] = lambda engine, lang: None  # noqa: E731 - a factory that records nothing


@pytest.fixture()
def build(engine: Any, tmp_path: Path) -> Callable[..., AdvisorApp]:
    """make_app around the loaded engine; transcripts go to tmp_path (and only when record=True)."""

    def make(lang: str = "en", record: bool = False) -> AdvisorApp:
        app = make_app(
            engine=engine,
            lang=lang,
            transcripts=tmp_path / "transcripts",
            recorder_factory=None if record else NO_RECORDING,
        )
        app.animation_level = "none"  # tab underlines and scrolls jump: faster, and snapshots are stable
        return app

    return make


async def settle(pilot: Any) -> None:
    """Wait until every queued line is answered and shown."""
    app = pilot.app
    for _ in range(200):
        await app.workers.wait_for_complete()
        await pilot.pause()
        if not app.chat.busy and app.chat.session is not None:
            return
    raise AssertionError("the chat did not settle")


async def say(pilot: Any, text: str, typed: bool = False) -> Any:
    """Enter one line (typed key by key, or set at once) and wait for the answer; the Reply."""
    field = pilot.app.chat.query_one(ChatInput)
    if pilot.app.focused is not field:
        field.focus()
        await pilot.pause()
    if typed:
        await pilot.press(*text)
    else:
        field.value = text
    await pilot.press("enter")
    await settle(pilot)
    return pilot.app.chat.last


async def consult(pilot: Any, answers: Iterable[str], skip: str = "skip", limit: int = 12) -> Any:
    """Give the answers, then skip every further question until the advisor is settled."""
    await settle(pilot)
    for text in answers:
        await say(pilot, text)
    for _ in range(limit):
        if pilot.app.chat.last.question is None:
            break
        await say(pilot, skip)
    assert pilot.app.chat.last.question is None, "still asking after the skips"
    return pilot.app.chat.session


def advisor_said(app: AdvisorApp) -> list[str]:
    """Everything the advisor said, in order."""
    return [text for role, text in app.chat.query_one(ChatLog).messages if role == "advisor"]


def drive(app: AdvisorApp, script: Callable[[Any], Awaitable[Any]], size: tuple[int, int] = (120, 40)) -> Any:
    """Run the app headless at `size`, wait for the first question, then run `script(pilot)`."""

    async def main() -> Any:
        async with app.run_test(size=size) as pilot:
            await settle(pilot)
            return await script(pilot)

    return asyncio.run(main())
