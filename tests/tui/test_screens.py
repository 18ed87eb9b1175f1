"""The side panel, the modal screens, the keys and the command palette."""

from __future__ import annotations

import asyncio
import threading

from textual.widgets import Input, TabbedContent

from advisor.core.engine import Engine
from advisor.core.layouts import Layout
from advisor.errors import RuleBaseError
from advisor.tui.app import make_app
from advisor.tui.chat import ECHO_AFTER
from advisor.tui.chatinput import AnswerSuggester, ChatInput
from advisor.tui.chatlog import ChatLog
from advisor.tui.commands import AdvisorCommands
from advisor.tui.edit import EditFactScreen
from advisor.tui.fact_panel import FactsTable
from advisor.tui.help import HelpScreen
from advisor.tui.report import ReportScreen
from advisor.tui.source import SourceScreen
from advisor.tui.sources import SourcesList
from tests.tui.conftest import drive, say, settle

RTX_20 = ["two RTX PRO 6000", "Llama 3.3 70B FP8 with FP8 KV cache", "20 users"]


def test_edit_a_fact_in_the_side_panel(build):
    app = build()

    async def script(pilot):
        for text in RTX_20:
            await say(pilot, text)
        assert app.chat.session.c.rec.layout == Layout(2, 1, 1)
        await pilot.press("f2")
        table = app.chat.query_one(FactsTable)
        assert app.focused is table
        row = next(i for i, r in enumerate(table.rows_shown) if r.fact == "users")
        table.move_cursor(row=row)
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, EditFactScreen)
        field = app.screen.query_one(Input)
        assert field.value == "20"
        field.value = "60"
        await pilot.press("enter")
        await settle(pilot)
        assert app.chat.session.c.rec.layout == Layout(1, 2, 1)
        assert app.chat.last.text.startswith("Changed users: 20 → 60.")
        assert {r.fact: r.origin for r in table.rows_shown}["users"] == "edited"
        assert app.focused is app.chat.query_one(ChatInput)
        # Esc leaves a fact as it was
        await pilot.press("f2", "enter")
        await pilot.pause()
        assert isinstance(app.screen, EditFactScreen)
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, EditFactScreen)

    drive(app, script)


def test_sources_report_help_drawing_and_language(build):
    app = build()

    async def script(pilot):
        for text in RTX_20:
            await say(pilot, text)
        # F5: the footnotes; Enter opens the quote of the first
        await pilot.press("f5")
        await pilot.pause()
        sources = app.chat.query_one(SourcesList)
        assert app.chat.query_one(TabbedContent).active == "sources" and app.focused is sources
        assert sources.option_count == len(app.chat.notes) > 5
        sources.highlighted = 1
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, SourceScreen) and app.screen.number == 2
        assert app.screen.cite == app.chat.notes[1] and app.screen.cite.quote
        await pilot.press("escape")
        await pilot.pause()
        # F4: the drawing
        await pilot.press("f4")
        await pilot.pause()
        assert app.chat.query_one(TabbedContent).active == "gpus"
        # F3: the full Markdown report
        await pilot.press("f3")
        await settle(pilot)
        assert isinstance(app.screen, ReportScreen) and "## Launch" in app.screen.markdown
        await pilot.press("escape")
        await pilot.pause()
        # F1: help, in English, then German after F6
        await pilot.press("f1")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen) and app.screen.lang == "en"
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("f6")
        await settle(pilot)
        assert app.title == "GPU-Aufteilungsberater" and app.sub_title == "Deutsch"
        assert app.chat.last.text.startswith("Sprache: Deutsch.")
        assert app.chat.session.c.rec.lang == "de"
        footer = {b.binding.action: b.binding.description for b in app.screen.active_bindings.values()}
        assert footer["help"] == "Hilfe" and footer["toggle_lang"] == "English"
        assert app.chat.query_one(FactsTable).rows_shown[0].label == "Modell"
        await pilot.press("f1")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen) and app.screen.lang == "de"

    drive(app, script)


def test_q_is_a_letter_even_in_an_empty_input(build):
    app = build()

    async def script(pilot):
        await pilot.press("q")
        await pilot.pause()
        assert app.is_running and app.chat.query_one(ChatInput).value == "q"
        await pilot.press("w", "e", "n")
        assert app.chat.query_one(ChatInput).value == "qwen" and app.is_running

    drive(app, script)


def test_ctrl_c_quits(build):
    app = build()

    async def script(pilot):
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert not app.is_running

    drive(app, script)


def test_new_consultation_and_palette(build):
    app = build()

    async def script(pilot):
        for text in RTX_20:
            await say(pilot, text)
        app.type_line("/new")
        await settle(pilot)
        assert app.chat.session.c.fields == {} and app.chat.last.question.fact == "model"
        said = [m for m in app.chat.query_one(ChatLog).messages]
        assert len(said) == 1 and "New consultation." in said[0][1]
        # the palette offers the chat's commands, and runs them as typed lines
        provider = AdvisorCommands(app.screen)
        found = [hit async for hit in provider.search("sources")]
        assert found and found[0].help == "/sources"
        listed = [hit.help async for hit in provider.discover()]
        assert {"/help", "/sources", "/rules", "/save", "/new", "/lang de", "/audit"} <= set(listed)
        hits = [hit async for hit in provider.search("rules")]
        rules = next(hit for hit in hits if hit.help == "/rules")
        rules.command()
        await settle(pilot)
        assert app.chat.last.text.startswith("**Rules (")
        hits = [hit async for hit in provider.search("audit")]
        audit = next(hit for hit in hits if hit.help == "/audit")
        audit.command()
        await pilot.pause()
        assert app.chat.query_one(ChatInput).value == "/audit "

    drive(app, script)


def test_suggestions_complete_names_choices_and_commands():
    suggester = AnswerSuggester()
    suggester.set_words(
        ["Llama 3.3 70B Instruct", "NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "bridge-4", "/sources"]
    )

    def suggest(value: str) -> str | None:
        return asyncio.run(suggester.get_suggestion(value))

    assert suggest("two rtx p") == "two rtx pRO 6000 Blackwell Workstation Edition"
    assert suggest("lla") == "llama 3.3 70B Instruct"  # completes what was typed, as typed
    assert suggest("Lla") == "Llama 3.3 70B Instruct"
    assert suggest("bri") == "bridge-4"
    assert suggest("/so") == "/sources"
    assert suggest("x") is None and suggest("") is None


def test_a_broken_rule_base_is_named_not_a_traceback(monkeypatch):
    def broken(*args, **kwargs):
        raise RuleBaseError("duplicate rule id", where="rules/p2p.yaml")

    monkeypatch.setattr(Engine, "load", broken)
    app = make_app(recorder_factory=lambda engine, lang: None)

    async def main():
        async with app.run_test(size=(120, 40)) as pilot:
            await app.workers.wait_for_complete()
            await pilot.pause()
            assert app.is_running and app.chat.session is None
            assert app.chat.query_one(ChatLog).messages == [("advisor", "⚠ rules/p2p.yaml: duplicate rule id")]

    asyncio.run(main())


def test_a_typed_line_is_shown_with_its_answer_in_order(build, monkeypatch):
    # answers that come within the echo delay (as on an idle machine): a loaded test machine must not
    # turn this into the slow-answer case below, where a waiting line is shown before the answer
    import advisor.tui.chat as chat_module

    monkeypatch.setattr(chat_module, "ECHO_AFTER", 60.0)
    app = build()

    async def script(pilot):
        await say(pilot, RTX_20[0])
        log = app.chat.query_one(ChatLog)
        assert log.messages[-2][0] == "user" and log.messages[-2][1] == RTX_20[0]
        assert log.messages[-1][0] == "advisor"
        # two lines typed before the first is answered: each still comes right before its answer
        app.chat.submit(RTX_20[1])
        app.chat.submit(RTX_20[2])
        await settle(pilot)
        roles = [(role, text if role == "user" else "") for role, text in log.messages[-4:]]
        assert roles == [("user", RTX_20[1]), ("advisor", ""), ("user", RTX_20[2]), ("advisor", "")]

    drive(app, script)


def test_a_slow_answer_shows_the_typed_line_while_it_waits(build):
    app = build()

    async def script(pilot):
        session = app.chat.session
        answer = session.respond
        release = threading.Event()

        def slow(line):
            release.wait(10)
            return answer(line)

        session.respond = slow
        log = app.chat.query_one(ChatLog)
        before = len(log.messages)
        app.chat.submit(RTX_20[0])
        await pilot.pause()
        assert len(log.messages) == before  # shown with its answer, if the answer comes in time
        await asyncio.sleep(ECHO_AFTER * 2)
        await pilot.pause()
        assert log.messages[before:] == [("user", RTX_20[0])]  # it did not: the line is shown alone
        release.set()
        await settle(pilot)
        assert [role for role, _ in log.messages[before:]] == ["user", "advisor"]  # once, then the answer

    drive(app, script)


def test_the_facts_panel_redraws_a_changed_value_and_a_click_edits_it(build):
    app = build()

    async def script(pilot):
        for text in RTX_20:
            await say(pilot, text)
        table = app.chat.query_one(FactsTable)
        row = next(i for i, r in enumerate(table.rows_shown) if r.fact == "users")
        assert table.render_line(row + 1).text.split() == ["users", "20", "you"]
        assert table.render_line(0).text.split() == ["fact", "value", "from"]
        await say(pilot, "60 users")
        assert table.render_line(row + 1).text.split() == ["users", "60", "you"]
        await pilot.click(FactsTable, offset=(2, row + 1))
        await pilot.pause()
        assert isinstance(app.screen, EditFactScreen)
        assert app.screen.query_one(Input).value == "60"

    drive(app, script)
