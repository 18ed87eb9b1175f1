"""`advisor chat --plain`: the consultation as a line-based dialogue on stdin/stdout.

For pipes, scripts, serial consoles and screen readers: the same Consultation as the full-screen
app, one answer per line, each turn recorded (and flushed) before the reply is printed.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TextIO

from advisor.chat.consult import Consultation
from advisor.core.engine import Engine
from advisor.render.common import headline
from advisor.i18n import number

HELP = {
    "en": "Type answers in your own words; 'why' explains the question, 'how' the result, 'skip' skips, 'quit' ends.",
    "de": "Antworten Sie in eigenen Worten; 'warum' erklärt die Frage, 'wie' das Ergebnis, 'weiter' überspringt, 'ende' beendet.",
}


def reply_for(c: Consultation) -> str:
    """What the advisor says after an answer: an error, the next question, or the recommendation."""
    lang = c.lang
    if c.error:
        return f"! {c.error}"
    lines = []
    if c.rec is not None:
        lines.append(("Recommendation: " if lang == "en" else "Empfehlung: ") + headline(c.rec))
        lead = next((f for f in c.rec.findings if f.severity in ("error", "warning")), None) or next(
            (f for f in c.rec.findings if f.severity == "info"), None)
        if lead:
            lines.append(f"  {lead.title}: {lead.explanation}")
    q = c.next_question()
    if q is not None:
        lines.append(f"? {q.text}")
    elif c.rec is not None:
        assumed = ", ".join(f"{k}={v}" for k, v in c.assumed().items() if v not in (None, "unknown"))
        lines.append(("Settled. Assumed: " if lang == "en" else "Entschieden. Angenommen: ") + assumed)
    return "\n".join(lines)


def run(engine: Engine, lang: str = "en", transcripts: Path | None = None, stdin: TextIO = sys.stdin,
        stdout: TextIO = sys.stdout, redact: bool = True) -> int:
    """Read answers line by line until end of input or 'quit'; record every turn."""
    from advisor.transcripts import Recorder

    c = Consultation(engine, lang)
    recorder = Recorder.start("chat", engine, transcripts, lang, redact,
                              on_error=lambda m: print(f"(note: {m})", file=sys.stderr))
    print(HELP[lang], file=stdout)
    print(reply_for(c), file=stdout, flush=True)
    for line in stdin:
        said = line.strip()
        if not said:
            continue
        if said.lower() in ("quit", "exit", "ende", "q"):
            break
        word = said.lower().rstrip("?")
        understood: dict[str, object] = {}
        if word in ("why", "warum"):
            text = "\n".join(f"  {a}: {b}" for a, b in c.why()) or "  -"
        elif word in ("how", "wie"):
            text = "\n".join(f"  {t.title}: {t.formula} = {t.with_numbers} → {number(t.value, t.unit, lang)}"
                             for t in c.how()) or "  -"
        else:
            got = c.answer(said)
            understood = dict(got.fields)
            text = reply_for(c)
            if got.unsure.get("model"):
                text = ("Did you mean: " if lang == "en" else "Meinten Sie: ") + ", ".join(got.unsure["model"]) + "?\n" + text
        recorder.turn(said, text, c.rec, understood)
        print(text, file=stdout, flush=True)
    recorder.close(c.rec)
    return 0
