"""Where a chat's transcript goes: a recorder factory for the app and the plain chat alike."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

RecorderFactory = Callable[[Any, str], Any]


def recorder_factory(
    transcripts: Path | None = None, redact: bool = True, on_error: Callable[[str], None] | None = None
) -> RecorderFactory:
    """Transcripts through advisor.transcripts.Recorder into `transcripts` (default: ./transcripts or
    $ADVISOR_TRANSCRIPTS); `on_error` hears why a transcript could not be written; each result is kept
    with its ticket block (advisor.render.ticket) in the session's language."""

    def start(engine: Any, lang: str) -> Any:
        from advisor.render.ticket import brief
        from advisor.transcripts import Recorder

        return Recorder.start(
            "chat",
            engine,
            transcripts,
            lang,
            redact=redact,
            on_error=on_error,
            brief=lambda result: brief(result, engine.kb),
        )

    return start
