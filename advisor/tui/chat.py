"""The chat screen: the conversation on the left, the facts, the recommendation, the GPU drawing and
the sources on the right, the current question and the input below.

Turns run one at a time in a worker thread (the engine takes milliseconds, an audit longer): the
input stays live, lines typed meanwhile wait in a queue. A typed line is shown together with its
answer, in one frame, or on its own once the answer takes longer than ECHO_AFTER: a separate frame
for the line would delay the answer by a frame. The screen only shows what each `Reply` carries;
every decision is the consultation's.
"""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer, Header, Input, Label, TabbedContent, TabPane

from advisor.chat.strings import t
from advisor.tui.advice import AdvicePanel
from advisor.tui.chatinput import AnswerSuggester, ChatInput
from advisor.tui.chatlog import ChatLog
from advisor.tui.drawing import GpuDrawing
from advisor.tui.fact_panel import FactsTable
from advisor.tui.sources import SourcesList

if TYPE_CHECKING:
    from advisor.chat.dialogue import ChatSession, Reply
    from advisor.core.engine import Engine
    from advisor.kb.knowledge import Citation

# Columns below which the side panel (56 wide) gives way: the conversation keeps 60 or more columns,
# enough for the recommendation's figure table.
NARROW = 120
# The footer keys shown only on a wide screen; on a narrow one they stay on their keys.
WIDE_ONLY = ("report", "toggle_lang", "save", "new")
ECHO_AFTER = 0.1  # seconds a typed line waits for its answer before it is shown on its own
KEY_LABELS = {
    "help": "key_help",
    "facts": "key_facts",
    "report": "key_report",
    "gpus": "key_gpus",
    "sources": "key_sources",
    "toggle_lang": "key_lang",
    "save": "key_save",
    "new": "key_new",
    "quit_session": "key_quit",
    "focus_input": "key_input",
}


@dataclass
class _Typed:
    """A line the user entered, and whether the conversation shows it yet."""

    line: str
    shown: bool = False


class ChatScreen(Screen[None]):
    """The consultation. Below NARROW columns the side panel gives way to the conversation (class
    `-narrow`); F2, F4 and F5 then show it in the conversation's place until Escape."""

    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (NARROW, "-wide")]

    BINDINGS = [
        Binding("f1", "help", "Help"),
        Binding("f2", "facts", "Facts"),
        Binding("f3", "report", "Report"),
        Binding("f4", "gpus", "GPUs"),
        Binding("f5", "sources", "Sources"),
        Binding("f6", "toggle_lang", "Deutsch"),
        Binding("ctrl+s", "save", "Save"),
        Binding("ctrl+n", "new", "New"),
        Binding("escape", "focus_input", "Type", show=False),
        # Quitting takes ctrl+q, or "q", "quit" or /quit sent alone (each asks first while a consultation
        # is open), or ctrl+c: a bare letter key would end a consultation whose next message merely
        # starts with it ("qwen3 235b ..."), even from an empty input, where every message starts.
        Binding("ctrl+q", "quit_session", "Quit"),
        Binding("ctrl+c", "quit_session", "Quit", show=False, priority=True),
    ]

    def __init__(self, engine: Engine | None, lang: str, recorder_factory: Any, forced_lang: bool = True) -> None:
        super().__init__()
        self.engine = engine
        self.lang = lang
        self.forced_lang = forced_lang
        self.recorder_factory = recorder_factory
        self.session: ChatSession | None = None
        self.notes: list[Citation] = []
        self.last: Reply | None = None
        self.suggester = AnswerSuggester()
        self._queue: deque[str] = deque()
        self._unanswered: deque[_Typed] = deque()  # the lines typed and not yet answered, oldest first
        self._lock = threading.Lock()
        self._working = False
        self.prompt_text = ""
        self._narrow: bool | None = None

    # --- layout ------------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        """Header, conversation and side panel, question, input, footer."""
        lang = self.lang
        yield Header(show_clock=False)
        with Horizontal(id="main"):
            yield ChatLog(id="log")
            with Vertical(id="side"):
                yield Label(t("facts_title", lang), id="facts-title", classes="panel-title")
                yield FactsTable(id="facts")
                with TabbedContent(id="tabs", initial="advice"):
                    with TabPane(t("tab_advice", lang), id="advice"):
                        yield AdvicePanel(id="advice-panel")
                    with TabPane(t("tab_gpus", lang), id="gpus"):
                        yield GpuDrawing(id="drawing")
                    with TabPane(t("tab_sources", lang), id="sources"):
                        yield Label(t("sources_hint", lang), id="sources-hint", classes="panel-note")
                        yield SourcesList(id="sources-list")
        yield Label(t("loading", lang), id="prompt")
        yield ChatInput(placeholder=t("placeholder", lang), suggester=self.suggester, id="input")
        yield Footer()

    def on_mount(self) -> None:
        """Localise, focus the input, and start the consultation in a worker (the engine loads there)."""
        self._localise()
        self.query_one(ChatInput).focus()
        self._working = True
        self.run_worker(self._start, thread=True, group="turns", exit_on_error=True)

    # --- turns -------------------------------------------------------------------------------------

    def _start(self) -> None:
        from advisor.chat.dialogue import ChatSession
        from advisor.errors import AdvisorError

        try:
            if self.engine is None:
                from advisor.core.engine import Engine

                self.engine = Engine.load()
            self.session = ChatSession(self.engine, self.lang, self.recorder_factory, self.forced_lang)
            opening = self.session.opening()
        except AdvisorError as exc:  # a broken rule or knowledge base: say so, as the CLI does
            with self._lock:
                self._working = False
            self.app.call_from_thread(self._fail, exc.one_line())
            return
        self.app.call_from_thread(self._show, opening)
        self._drain()

    def _drain(self) -> None:
        """Answer the queued lines one after another (in the worker thread)."""
        from advisor.errors import AdvisorError

        while True:
            with self._lock:
                if not self._queue or self.session is None:
                    self._working = False
                    return
                line = self._queue.popleft()
            try:
                reply = self.session.respond(line)
            except AdvisorError as exc:
                self.app.call_from_thread(self._fail, exc.one_line(), True)
                continue
            self.app.call_from_thread(self._show, reply, True)

    def _fail(self, message: str, answers_a_line: bool = False) -> None:
        """An error the advisor can name: shown in the conversation, the session goes on if it can."""
        if answers_a_line:
            self._echo_answered()
        self.query_one(ChatLog).add_advisor(f"⚠ {message}")
        if self.session is None:
            self.query_one("#prompt", Label).update(f"⚠ {message}")

    def submit(self, line: str) -> None:
        """Answer a line as if typed: queue it, start the worker if it is idle, and show the line if
        its answer has not come after ECHO_AFTER seconds."""
        if not line.strip():
            return
        typed = _Typed(line)
        self._unanswered.append(typed)
        self.set_timer(ECHO_AFTER, lambda: self._echo(typed))
        with self._lock:
            self._queue.append(line)
            start = not self._working
            if start:
                self._working = True
        if start:
            self.run_worker(self._drain, thread=True, group="turns", exit_on_error=True)

    @property
    def busy(self) -> bool:
        """Whether a turn is being answered or waits."""
        with self._lock:
            return self._working or bool(self._queue)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Enter in the answer line."""
        if not isinstance(event.input, ChatInput):
            return
        event.stop()
        text = event.value
        # Clear only what was submitted: keys typed after Enter may already be in the field.
        if event.input.value.startswith(text):
            event.input.value = event.input.value[len(text) :]
        self.submit(text)

    def on_chat_input_pasted(self, event: ChatInput.Pasted) -> None:
        """A pasted block (a topology matrix) is one submission."""
        self.submit(event.text)

    def on_key(self, event: events.Key) -> None:
        """Typing while the side panel has the focus goes to the input."""
        if event.is_printable and event.character and not isinstance(self.focused, Input):
            field = self.query_one(ChatInput)
            field.focus()
            field.insert_text_at_cursor(event.character)
            event.stop()

    # --- showing a reply ---------------------------------------------------------------------------

    def _echo(self, typed: _Typed) -> None:
        """Show a typed line in the conversation (once)."""
        if not typed.shown:
            typed.shown = True
            self.query_one(ChatLog).add_user(typed.line)

    def _echo_answered(self) -> None:
        """The oldest typed line has its answer: show the line now if it is not shown yet."""
        if self._unanswered:
            self._echo(self._unanswered.popleft())

    def _show(self, reply: Reply, answers_a_line: bool = False) -> None:
        """Show what a turn said (after the line it answers), and refresh the panels from its snapshot."""
        with self.app.batch_update():
            if answers_a_line:
                self._echo_answered()
            self._update(reply)
        if reply.action == "quit":
            self.action_quit_session()
        elif reply.action == "help":
            self.action_help()
        elif reply.action == "report" and reply.report:
            from advisor.tui.report import ReportScreen

            self.app.push_screen(ReportScreen(reply.report, self.lang))

    def _update(self, reply: Reply) -> None:
        log = self.query_one(ChatLog)
        if reply.action == "new":
            log.clear_log()
        if reply.text:
            log.add_advisor(reply.text)
        last, self.last = self.last, reply
        self.notes = list(reply.notes)
        kb = self.engine.kb if self.engine is not None else None
        # Panels are redrawn only when their data changed: every redraw costs a layout of the screen.
        if last is None or (last.facts, last.lang) != (reply.facts, reply.lang):
            self.query_one(FactsTable).show(reply.facts, reply.lang)
        if last is None or last.rec is not reply.rec or last.lang != reply.lang or last.notes != reply.notes:
            self.query_one(AdvicePanel).show(reply.rec, self.notes, kb, reply.lang)
            self.query_one(GpuDrawing).show(reply.rec, reply.lang)
            self.query_one(SourcesList).show(self.notes, kb)
        self.suggester.set_words(reply.suggestions)
        if reply.lang != self.lang:
            self.lang = reply.lang
            self.app.lang = reply.lang  # type: ignore[attr-defined]
            self._localise()
        self._prompt(reply)
        if reply.action == "tab:sources":
            self.query_one(TabbedContent).active = "sources"

    def _prompt(self, reply: Reply) -> None:
        """The line above the input: the question asked, or that the advice is settled."""
        if reply.question is not None:
            self.prompt_text = f"? {reply.question.text}"
        else:
            self.prompt_text = t("settled" if reply.rec is not None else "no_rec", self.lang)
        self.query_one("#prompt", Label).update(self.prompt_text)

    def _localise(self) -> None:
        """Every fixed label in the current language: title, tabs, placeholder, footer keys."""
        lang = self.lang
        self.app.title = t("title", lang)
        self.app.sub_title = t("language_name", lang)
        self.query_one(ChatInput).placeholder = t("placeholder", lang)
        self.query_one("#facts-title", Label).update(t("facts_title", lang))
        self.query_one("#sources-hint", Label).update(t("sources_hint", lang))
        tabs = self.query_one(TabbedContent)
        for pane, key in (("advice", "tab_advice"), ("gpus", "tab_gpus"), ("sources", "tab_sources")):
            tabs.get_tab(pane).label = t(key, lang)
        self._footer_keys()
        if self.last is not None:
            self._prompt(self.last)

    def _footer_keys(self) -> None:
        """The footer's keys in the current language; below NARROW columns only those a call needs
        (the others stay on their keys, in the palette and in the help), so the footer fits."""
        lang, narrow = self.lang, self.size.width < NARROW
        for key, bindings in self._bindings.key_to_bindings.items():
            self._bindings.key_to_bindings[key] = [
                replace(
                    b,
                    description=t(KEY_LABELS[b.action], lang),
                    show=b.show if b.action not in WIDE_ONLY else not narrow,
                )
                if b.action in KEY_LABELS
                else b
                for b in bindings
            ]
        app_bindings = self.app._bindings.key_to_bindings
        for key, bindings in app_bindings.items():
            app_bindings[key] = [
                replace(b, description=t("key_palette", lang)) if b.action == "command_palette" else b for b in bindings
            ]
        self.query_one(Footer).compact = narrow
        self.refresh_bindings()

    def on_resize(self, event: events.Resize) -> None:
        """Crossing NARROW: the footer shows fewer keys or all of them again."""
        narrow = event.size.width < NARROW
        if narrow != self._narrow:
            self._narrow = narrow
            self._footer_keys()

    # --- side panel --------------------------------------------------------------------------------

    def on_facts_table_edit_requested(self, event: FactsTable.EditRequested) -> None:
        """Open the editor for a fact; its value comes back as `/set FACT VALUE`."""
        from advisor.chat.replies import choice_text
        from advisor.tui.edit import EditFactScreen

        row = event.row
        spec = self.engine.kb.facts.get(row.fact) if self.engine is not None else None
        choices = tuple(choice_text(c) for c in spec.choices) if spec is not None else ()
        value = choice_text(row.value) if isinstance(row.value, bool) and choices else str(row.value)
        if isinstance(row.value, bool) and not choices:
            value = t("yes" if row.value else "no", self.lang)

        def done(new: str | None) -> None:
            self.query_one(ChatInput).focus()
            if new is not None and new.strip() and new.strip() != value:
                self.submit(f"/set {row.fact} {new.strip()}")

        self.app.push_screen(EditFactScreen(row.label, value, choices, self.lang), done)

    def on_sources_list_source_chosen(self, event: SourcesList.SourceChosen) -> None:
        """A source chosen in the list."""
        self.open_source(event.number)

    def open_source(self, number: int) -> None:
        """Show footnote `number` of the current recommendation."""
        from advisor.tui.source import SourceScreen

        if self.engine is None or not 1 <= number <= len(self.notes):
            return
        self.app.push_screen(SourceScreen(number, self.notes[number - 1], self.engine.kb, self.lang))

    # --- actions -----------------------------------------------------------------------------------

    def action_help(self) -> None:
        """The help page."""
        from advisor.tui.help import HelpScreen

        self.app.push_screen(HelpScreen(self.lang))

    def _show_side(self) -> None:
        """On a narrow screen the side panel takes the conversation's place (Escape gives it back)."""
        self.add_class("-side-open")

    def action_facts(self) -> None:
        """Move to the facts panel."""
        self._show_side()
        self.query_one(FactsTable).focus()

    def action_report(self) -> None:
        """The full report."""
        self.submit("/report")

    def action_gpus(self) -> None:
        """Show the GPU drawing."""
        self._show_side()
        self.query_one(TabbedContent).active = "gpus"

    def action_sources(self) -> None:
        """Show the sources and move to them."""
        self._show_side()
        self.query_one(TabbedContent).active = "sources"
        self.query_one(SourcesList).focus()

    def action_toggle_lang(self) -> None:
        """English ↔ German."""
        self.submit("/lang " + ("en" if self.lang == "de" else "de"))

    def action_save(self) -> None:
        """Save the transcript."""
        self.submit("/save")

    def action_new(self) -> None:
        """A new consultation."""
        self.submit("/new")

    def action_focus_input(self) -> None:
        """Back to the input (and, on a narrow screen, to the conversation)."""
        self.remove_class("-side-open")
        self.query_one(ChatInput).focus()

    def action_quit_session(self) -> None:
        """Quit (the transcript is saved first); with a consultation open, ask first."""
        if self.session is None or not self.session.c.fields:
            self.app.call_later(self.app.action_quit)
            return
        from advisor.tui.confirm import QuitScreen

        def answered(quit: bool | None) -> None:
            if quit:
                self.app.call_later(self.app.action_quit)

        self.app.push_screen(QuitScreen(self.lang), answered)

    def close_session(self) -> str:
        """Close the transcript; the message saying where it is."""
        return self.session.close() if self.session is not None else ""
