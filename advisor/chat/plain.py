"""`advisor chat --plain`: the chat as a line dialogue on stdin/stdout.

For pipes, scripts, serial consoles and screen readers: the same ChatSession as the full-screen app
(answers in one's own words, why, how, why not, what if, /commands, a pasted `nvidia-smi topo -m`),
each turn recorded before its reply is printed. Replies are plain text without Markdown marks, with
the sources their [n] marks cite; the open question is a reply's last paragraph and its first line
starts with '? '; every reply ends with an empty line. A paste is one message: what the terminal marks
as pasted (bracketed paste), a matrix from its header line to the next empty line, machine output
(a log line, a command line) with the lines that go on it.
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


PASTE_START, PASTE_END = "\x1b[200~", "\x1b[201~"  # a terminal's bracketed paste around pasted text
# the lines that go on a block of machine output: a matrix's rows and legend, indented lines, log lines
CONTINUES = re.compile(r"^(\s|GPU ?\d|NIC\d|mlx|Legend|  X|\|)")  # "GPU 0: ..." of nvidia-smi -L too


def messages(stdin: TextIO) -> Iterator[str]:
    """Each line typed is a message; a paste is one: what a terminal marks as pasted (bracketed paste),
    a topology matrix from its header to the next empty line, and machine output (a log line, a
    command) with the lines that go on it."""
    from advisor.chat.reading import _evidence_line

    lines = iter(stdin)
    held: str | None = None
    while True:
        line = held if held is not None else next(lines, None)
        held = None
        if line is None:
            return
        if PASTE_START in line:
            yield _pasted(line, lines)
            continue
        if MATRIX_HEADER.match(line) or _evidence_line().match(line.strip()):
            block = [line.rstrip("\n")]
            matrix = bool(MATRIX_HEADER.match(line))
            for more in lines:
                if not more.strip():
                    break
                if not matrix and not (CONTINUES.match(more) or _evidence_line().match(more.strip())):
                    held = more
                    break
                block.append(more.rstrip("\n"))
            yield "\n".join(block).strip("\n")
        else:
            yield line.strip()


def _pasted(first: str, lines: Iterator[str]) -> str:
    """The text between the paste markers, as one message."""
    text = first.split(PASTE_START, 1)[1]
    while PASTE_END not in text:
        more = next(lines, None)
        if more is None:
            break
        text += more
    return text.split(PASTE_END, 1)[0].strip()


def run(
    engine: Engine,
    lang: str = "en",
    transcripts: Path | None = None,
    stdin: TextIO = sys.stdin,
    stdout: TextIO = sys.stdout,
    redact: bool = True,
    forced_lang: bool = True,
) -> int:
    """Answer message by message until end of input or a quit ('quit', 'exit', '/quit' typed alone: the
    session's own reading, so a message starting with "q" is a message); every turn is recorded before
    it is printed."""
    factory = recorder_factory(transcripts, redact, on_error=lambda m: print(f"(note: {m})", file=sys.stderr))
    session = ChatSession(engine, lang, factory, forced_lang)
    bracketed = stdout.isatty() and stdin.isatty()
    if bracketed:  # the terminal marks what is pasted, so a pasted block is one message
        print("\x1b[?2004h", end="", file=stdout, flush=True)
    try:
        return _dialogue(session, engine, stdin, stdout)
    finally:
        if bracketed:
            print("\x1b[?2004l", end="", file=stdout, flush=True)


def _dialogue(session: ChatSession, engine: Engine, stdin: TextIO, stdout: TextIO) -> int:
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
