"""German is first-class: the German output of every command a customer call uses carries no English
word from a deny-list (function words and the advisor's own domain words). Allowed: proper nouns of
the catalogue (models, GPUs, platforms), flags, units, rule ids and fact names (code, or written as
ids), quoted text (a tool's own message, a source's quote) and the list of sources (a source's title
and its quote stay in the source's language)."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from advisor.chat.dialogue import ChatSession
from advisor.chat.plain import run as plain_run
from advisor.cli import main

DATA = Path(__file__).parent / "data"
DENY = frozenset(
    """the and with of for to is are not would could this that these from into per only each every which
    what when why how one two no yes instead adds drops nothing see below above
    user users layout layouts throughput unknown none conversation conversations assumed settled fits
    answer warning error advice choices noted skipped question weights memory speed tokens result results
    source sources rule rules fix evidence finding findings summary alternatives recommendation
    copy copies default""".split()
)
# At the start of a sentence: the same words capitalised, less those German writes alike.
STARTERS = frozenset(w.capitalize() for w in DENY) - {"Tokens", "Default"}
SOURCE_LIST = re.compile(r"\s*(#+\s*)?(Quellen|Sources)\b")
EXPRESSION = re.compile(r"^\s+\w+ (==|!=|>=|<=|<|>|in) .*\b[a-z]+_[a-z_]+\b")
FOOTNOTE = re.compile(r"\s*(\[\d+\]|\d+\.\s)")
ALLOWED = (
    re.compile(r"`[^`]*`"),  # code: rule ids, flags, commands
    re.compile(r"https?://\S+"),
    re.compile(r"--[\w-]+"),  # flags
    re.compile(r"“[^”]*”|\"[^\"]*\"|„[^“]*“|'[^']*'"),  # quoted text
    re.compile(r"\b[\w-]+(?:,[\w-]+)+\b"),  # topic ids, comma-joined
    re.compile(r"\b[a-z0-9]+(?:[-_.][a-z0-9]+)+\b"),  # rule ids and fact names
    re.compile(r"\b[A-Za-z]+(?:-[A-Za-z]+)+\b"),  # German compounds of English terms: All-to-All, Peer-to-Peer
    re.compile(r"\bUnknown Error\b"),  # nvidia-smi's own message
)


def english_words(text: str, proper: frozenset[str] = frozenset()) -> list[tuple[str, str]]:
    """(word, line) for each deny-listed English word outside what is allowed; `proper` are names."""
    found = []
    fenced = False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):  # a code block: launch lines and their comments
            fenced = not fenced
            continue
        if fenced:
            continue
        if SOURCE_LIST.match(line):
            break
        if EXPRESSION.search(line):  # a rule's condition over fact names is code
            continue
        if FOOTNOTE.match(line) and "—" in line:  # a cited source: title and quote stay as published
            continue
        rest = line
        for name in proper:
            rest = rest.replace(name, " ")
        for pattern in ALLOWED:
            rest = pattern.sub(" ", rest)
        found += [(w, line.strip()) for w in re.findall(r"[A-Za-zÄÖÜäöüß]+", rest) if w in DENY or w in STARTERS]
        if "tokens/s" in rest:
            found.append(("tokens/s", line.strip()))
    return found


@pytest.fixture(scope="module")
def names(engine) -> frozenset[str]:
    """The catalogue's proper names: platforms as `size` lists them."""
    return frozenset(p.name for p in engine.kb.platforms.values())


def cli(capsys, *argv: str) -> str:
    """A command's German output."""
    main(list(argv))
    return capsys.readouterr().out


L40S = ("--model", "Llama 3.3 70B", "--gpu", "L40S", "--gpus", "4", "--users", "100", "--lang", "de")
RTX4090 = ("--model", "Llama 3.1 70B", "--gpu", "RTX 4090", "--gpus", "4", "--users", "60", "--lang", "de")


@pytest.mark.parametrize(
    "argv",
    [
        ("recommend", *L40S),
        ("recommend", *L40S, "--format", "md"),
        ("recommend", *RTX4090),
        ("recommend", *RTX4090, "--precision", "fp8", "--format", "md"),
        ("size", "--model", "Llama 3.3 70B", "--users", "1", "--lang", "de"),
        ("size", "--model", "Llama 3.3 70B", "--users", "60", "--lang", "de", "--format", "md"),
        ("explain", "split-for-capacity", "--lang", "de"),
        ("rules", "--lang", "de"),
    ],
    ids=lambda a: " ".join(a) if isinstance(a, tuple) else a,
)
def test_a_command_speaks_german(capsys, names, argv):
    text = cli(capsys, *argv)
    assert text.strip()
    assert english_words(text, names) == []


def german_call(engine, lines: list[str]) -> str:
    """A whole German consultation as the chat shows it (Markdown, with its code marks): the lines,
    then "weiß ich nicht" until settled, then why and how. `chat --plain` prints the same replies
    without the marks."""
    session = ChatSession(engine, "de")
    said = [session.opening().text]
    for line in [*lines, *["weiß ich nicht"] * 10, "warum", "wie"]:
        reply = session.respond(line)
        said.append(reply.text)
    return "\n\n".join(said)


def test_a_full_german_consultation_has_no_english_word(engine, tmp_path):
    lines = [
        "Llama 3.1 70B auf 4 RTX 4090",
        "60 Chat-Nutzer",
        "warum",
        "was wäre, wenn die Gewichte FP8 sind",
        "warum nicht TP 4",
        "fp8",
    ]
    text = german_call(engine, lines)
    assert "Entschieden" in text and "Angenommen, und könnte die Antwort noch ändern" in text
    assert english_words(text) == []
    # `chat --plain` runs the same dialogue: the same replies, the same German
    out = io.StringIO()
    typed = "\n".join([*lines, *["weiß ich nicht"] * 10, "warum", "wie"]) + "\n"
    plain_run(engine, "de", transcripts=tmp_path, stdin=io.StringIO(typed), stdout=out)
    assert "Angenommen, und könnte die Antwort noch ändern" in out.getvalue()


@pytest.mark.parametrize(
    "capture",
    ["topo_01_2xA100_della_2socket_SYS_mlx5_cols.txt", "smi_03_v100sxm2_azure_nvlink_status_two_links_inactive.txt"],
)
@pytest.mark.parametrize("fmt", ["text", "md"])
def test_the_audit_of_a_real_capture_speaks_german(capsys, names, capture, fmt):
    main(["audit", str(DATA / "audit" / capture), "--lang", "de", "--format", fmt, "--fail-on", "never"])
    text = capsys.readouterr().out
    assert text.strip()
    assert english_words(text, names) == []
