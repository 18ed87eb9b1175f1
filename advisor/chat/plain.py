"""`advisor chat --plain`: the chat as a line dialogue on stdin/stdout.

For pipes, scripts, serial consoles and screen readers: the same ChatSession as the full-screen app
(answers in one's own words, why, how, why not, what if, /commands, a pasted `nvidia-smi topo -m`),
each turn recorded before its reply is printed. Replies are plain text without Markdown marks, with
the sources their [n] marks cite; the open question is a reply's last paragraph and its first line
starts with '? '; every reply ends with an empty line. A pasted matrix is read from its header line
up to the next empty line.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from advisor.chat import replies
from advisor.chat.dialogue import ChatSession, Reply
from advisor.chat.recording import recorder_factory
from advisor.core.engine import Engine
from advisor.kb.knowledge import Knowledge

MATRIX_HEADER = re.compile(r"^\s*GPU0\s+GPU1\b")
_MARKS = (
    (re.compile(r"\*\*((?:(?!\*\*)[^\n]){1,2000})\*\*"), r"\1"),
    (re.compile(r"(?<![\w*])\*(?!\s)((?:(?!\*)[^\n]){1,2000})(?<!\s)\*(?![\w*])"), r"\1"),
    (re.compile(r"`([^`]*)`"), r"\1"),
    (re.compile(r" {2}\n"), "\n"),
)


def plain(text: str) -> str:
    """Markdown as plain text: emphasis and code marks dropped, hard line breaks kept as breaks."""
    for pattern, repl in _MARKS:
        text = pattern.sub(repl, text)
    return text


def reply_text(reply: Reply, kb: Knowledge) -> str:
    """A reply as the plain chat prints it: the sources its [n] marks refer to, and the open question
    last, on a line of its own marked '? '."""
    text, asked = reply.text, ""
    if reply.question is not None:
        asked = replies.question_text(reply.question, reply.lang)
        text = text.replace(asked, "").rstrip() if text.endswith(asked) else text
        asked = asked if asked not in text else ""
    parts = [plain(text).strip(), plain(replies.cited(text, reply.notes, kb)), "? " + plain(asked) if asked else ""]
    return "\n\n".join(p for p in parts if p) + "\n"


def messages(stdin: TextIO) -> Iterator[str]:
    """Each line typed, or a pasted topology matrix as one message."""
    lines = iter(stdin)
    for line in lines:
        if MATRIX_HEADER.match(line):
            block = [line.rstrip("\n")]
            for more in lines:
                if not more.strip():
                    break
                block.append(more.rstrip("\n"))
            yield "\n".join(block)
        else:
            yield line.strip()


def run(
    engine: Engine,
    lang: str = "en",
    transcripts: Path | None = None,
    stdin: TextIO = sys.stdin,
    stdout: TextIO = sys.stdout,
    redact: bool = True,
) -> int:
    """Answer message by message until end of input or a quit ('quit', 'exit', '/quit' typed alone: the
    session's own reading, so a message starting with "q" is a message); every turn is recorded before
    it is printed."""
    factory = recorder_factory(transcripts, redact, on_error=lambda m: print(f"(note: {m})", file=sys.stderr))
    session = ChatSession(engine, lang, factory)
    print(reply_text(session.opening(), engine.kb), file=stdout, flush=True)
    for said in messages(stdin):
        if not said:
            continue
        reply = session.respond(said)
        if reply.action == "quit":
            break
        print(reply_text(reply, engine.kb) if reply.text else "", file=stdout, flush=True)
    note = session.close()
    if note:
        print(plain(note), file=sys.stderr)
    return 0
