"""`advisor chat`: the full-screen consultation. `make_app` builds the app for the command line, the
Pilot tests and the snapshot tests; `run` runs it and prints where the transcript went.

Startup imports only Textual and the first screen's widgets; the engine loads in a worker after the
screen is up, and the heavier modules (audit, reports, evidence parsers) load on first use.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from textual.app import App
from textual.binding import Binding

from advisor.chat.recording import RecorderFactory
from advisor.chat.recording import recorder_factory as transcript_recorders
from advisor.chat.strings import t
from advisor.i18n import LANGS
from advisor.tui.chat import ChatScreen
from advisor.tui.commands import AdvisorCommands

if TYPE_CHECKING:
    from advisor.core.engine import Engine


class AdvisorApp(App[str]):
    """The chat app; exits with a line saying where the transcript was saved (or '')."""

    CSS_PATH = "app.tcss"
    COMMANDS = App.COMMANDS | {AdvisorCommands}
    BINDINGS = [
        Binding("ctrl+c", "quit", "Quit", show=False, priority=True),
        Binding("ctrl+q", "quit", "Quit", show=False),
    ]
    ENABLE_COMMAND_PALETTE = True

    def __init__(
        self,
        engine: Engine | None = None,
        lang: str = "en",
        recorder_factory: RecorderFactory | None = None,
        forced_lang: bool = True,
    ) -> None:
        super().__init__()
        self.engine = engine
        self.lang = lang if lang in LANGS else "en"
        self.forced_lang = forced_lang
        self.recorder_factory = recorder_factory
        self.title = t("title", self.lang)
        self.sub_title = t("language_name", self.lang)

    def get_default_screen(self) -> ChatScreen:
        """The chat screen is the app's screen."""
        return ChatScreen(self.engine, self.lang, self.recorder_factory, self.forced_lang)

    @property
    def chat(self) -> ChatScreen:
        """The chat screen (under any modal)."""
        screen = self.screen_stack[0]
        assert isinstance(screen, ChatScreen)
        return screen

    def type_line(self, line: str, submit: bool = True) -> None:
        """Enter a line as the user would (the command palette uses this); or leave it in the input."""
        if submit:
            self.chat.submit(line)
        else:
            from advisor.tui.chatinput import ChatInput

            field = self.chat.query_one(ChatInput)
            field.value = line
            field.cursor_position = len(line)
            field.focus()

    async def action_quit(self) -> None:
        """Save the transcript, then quit."""
        self.exit(self.chat.close_session())


def make_app(
    engine: Engine | None = None,
    lang: str = "en",
    transcripts: Path | None = None,
    recorder_factory: RecorderFactory | None = None,
    redact: bool = True,
    forced_lang: bool = True,
) -> AdvisorApp:
    """The chat app. `engine`: an already loaded engine (else it loads after the screen is up);
    `transcripts`: the transcript folder; `recorder_factory(engine, lang)`: returns a recorder or None
    (default: advisor.transcripts.Recorder into `transcripts`)."""
    factory = recorder_factory if recorder_factory is not None else transcript_recorders(transcripts, redact)
    return AdvisorApp(engine, lang, factory, forced_lang)


def run(lang: str = "en", transcripts: Path | None = None, redact: bool = True, forced_lang: bool = True) -> None:
    """Run the chat in the terminal; afterwards say where the transcript was saved. `forced_lang`: the
    language was chosen (--lang), so the customer's words do not switch it."""
    message = make_app(lang=lang, transcripts=transcripts, redact=redact, forced_lang=forced_lang).run()
    if message:
        print(f"advisor: {message.replace('`', '')}", file=sys.stderr)
