"""Secrets shown by the form around them, where no assignment names them: what an `echo` pipes into a
command that reads its secret from standard input (chpasswd, cryptsetup, docker login --password-stdin), a
credential given as a (user, password) pair (Gradio's and requests' auth=(...)), a network device's typed
secret (IOS `password 7 <hex>`, `key 0 <plain>`), and the `user:secret` of a login setting (squid's
login=user:secret).

Guarantees: every pattern stays on one line and every repeat is bounded; the commands, options and names
come from knowledge/secrets.yaml (`stdin_readers`, `names.login_pairs`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache

from advisor.redact.names import strength, words
from advisor.redact.values import number, password_like, reference
from advisor.redact.vocabulary import StdinReader, vocabulary

Span = tuple[int, int]

_ARG = r"(?:\"[^\"\n]{1,512}\"|'[^'\n]{1,512}'|[^\s|;&\"'()<>]{1,512})"
# echo -n 'x' | ..., printf '%s\n' "$x" | ...: one or two arguments, then a pipe (not ||)
_ECHO = re.compile(
    r"(?<![\w./-])(echo|printf)(?:[ \t]{1,4}-[neE]{1,3}){0,3}((?:[ \t]{1,4}" + _ARG + r"){1,2})[ \t]{0,4}\|(?!\|)"
)
_WORD = re.compile(_ARG)
_SEGMENT_END = re.compile(r"\|\|?|;|&&|\n|$")
_WRAPPERS = frozenset({"sudo", "doas", "env", "exec", "command", "time", "nohup"})
_ASSIGNMENT = re.compile(r"[A-Za-z_]\w{0,127}=")


def find(text: str) -> Iterator[Span]:
    """Every secret of these forms in `text`."""
    if "|" in text or "<<<" in text:
        yield from _piped(text)
    if "(" in text or "[" in text:
        yield from _pairs(text)
    yield from _typed(text)
    if ":" in text:
        yield from _logins(text)


def _piped(text: str) -> Iterator[Span]:
    """echo SECRET | [sudo] reader ...: the argument the reader takes from its standard input; and a here
    string given to one (chpasswd <<< 'user:secret')."""
    for m in _ECHO.finditer(text):
        args = [(a.start() + m.start(2), a.group(0)) for a in _WORD.finditer(m.group(2))]
        if m.group(1) == "printf" and len(args) == 2 and "%" in args[0][1]:
            args = args[1:]  # printf '%s' SECRET: the format, then the value
        reader = _reader_of(text, m.end())
        if reader is not None and len(args) == 1:
            yield from _written(args[0][0], args[0][1], reader)
    if "<<<" in text:
        pattern, table = _here_pattern()
        for m in pattern.finditer(text):
            reader = _matching(table[m.group(1)], m.group(2))
            if reader is not None:
                yield from _written(m.start(3), m.group(3), reader)


def _reader_of(text: str, at: int) -> StdinReader | None:
    """The stdin reader that the pipeline segment starting at `at` runs, if it is one (its options match)."""
    end = _SEGMENT_END.search(text, at)
    segment = text[at : end.start() if end else len(text)]
    tokens = segment.split()
    while tokens and (tokens[0] in _WRAPPERS or tokens[0].startswith("-") or _ASSIGNMENT.match(tokens[0])):
        tokens = tokens[1:]  # sudo -S, env A=B: the command comes after
    if not tokens:
        return None
    table = _readers()
    return _matching(table.get(tokens[0], ()), " ".join(tokens[1:]))


def _matching(readers: tuple[StdinReader, ...], rest: str) -> StdinReader | None:
    """The reader whose options the rest of its command line holds (one without options always matches)."""
    given = rest.split()
    for reader in readers:
        if not reader.when or any(t == w or t.startswith(w + "=") for t in given for w in reader.when):
            return reader
    return None


def _written(at: int, token: str, reader: StdinReader) -> Iterator[Span]:
    """The secret in what is written to a reader: the whole value, or what follows "user:" for readers of
    user:secret lines (chpasswd)."""
    if len(token) >= 2 and token[0] in "\"'" and token[-1] == token[0]:
        at, token = at + 1, token[1:-1]
    if reader.form == "user":
        head, colon, tail = token.partition(":")
        if not colon:
            return
        at, token = at + len(head) + 1, tail
    token = token.removesuffix("\\n")
    if len(token) >= 3 and not reference(token):
        yield at, at + len(token)


@lru_cache(maxsize=1)
def _readers() -> dict[str, tuple[StdinReader, ...]]:
    table: dict[str, tuple[StdinReader, ...]] = {}
    for r in vocabulary().stdin_readers:
        table[r.command] = (*table.get(r.command, ()), r)
    return table


@lru_cache(maxsize=1)
def _here_pattern() -> tuple[re.Pattern[str], dict[str, tuple[StdinReader, ...]]]:
    table = _readers()
    names = "|".join(re.escape(n) for n in sorted(table, key=len, reverse=True)) or "(?!x)x"
    pattern = re.compile(r"(?<![\w./-])(" + names + r")(?![\w.-])([^\n|;&<]{0,256})<<<[ \t]{0,4}(" + _ARG + ")")
    return pattern, table


# auth=("user", "secret"), credentials: ['user', 'secret']: a credential's name, then a pair of strings
_PAIR = re.compile(
    r"([A-Za-z_][\w.-]{0,63})[\"']?[ \t]{0,4}[=:][ \t]{0,4}[(\[][ \t]{0,4}(\"[^\"\n]{0,256}\"|'[^'\n]{0,256}')"
    r"[ \t]{0,4},[ \t]{0,4}(\"[^\"\n]{1,256}\"|'[^'\n]{1,256}')[ \t]{0,4}[)\]]"
)


def _pairs(text: str) -> Iterator[Span]:
    """The second string of a (user, password) pair given to a credential's name (auth=, http_auth=)."""
    for m in _PAIR.finditer(text):
        if strength(m.group(1)) is None:
            continue
        value = m.group(3)[1:-1]
        if len(value) >= 3 and not reference(value):
            yield m.start(3) + 1, m.end(3) - 1


# IOS, NX-OS and EOS configuration: a secret's keyword, its encryption type (0 plain, 5/8/9 hashes, 7 the
# reversible Vigenère), then the value: `password 7 0822455D0A16`, `key 0 s3cret`, `secret 5 $1$...`
_TYPED = re.compile(r"(?<![\w-])([A-Za-z][\w-]{1,40})[ \t]{1,4}([0-9])[ \t]{1,4}([^\s]{4,512})")


def _typed(text: str) -> Iterator[Span]:
    for m in _TYPED.finditer(text):
        name, kind, value = m.group(1), m.group(2), m.group(3)
        level = strength(name)
        if level is None and words(name)[-1:] != ("key",):
            continue
        if number(value) or reference(value) or "<" in value:
            continue  # secret 9 $9$<hashed, omitted>: where the hash was
        if kind == "0" or value.startswith("$") or _TYPE7.fullmatch(value) or password_like(value):
            yield m.span(3)


_TYPE7 = re.compile(r"[0-9]{2}[0-9A-F]{2,510}")


# login=user:secret (squid's cache_peer), userpass: user:secret: a login setting holding both halves
_LOGIN = re.compile(
    r"([A-Za-z_][\w.-]{0,63})[\"']?[ \t]{0,4}[=:][ \t]{0,4}[\"']?([^\s:\"'@/=]{1,64}):([^\s\"'@]{3,256}@?)(?![\w.-])"
)


def _logins(text: str) -> Iterator[Span]:
    logins = _login_words()
    for m in _LOGIN.finditer(text):
        found = words(m.group(1))
        if not found or found[-1] not in logins:
            continue
        value = m.group(3)
        if not number(value) and not reference(value) and not value.startswith("//"):
            yield m.span(3)


@lru_cache(maxsize=1)
def _login_words() -> frozenset[str]:
    return frozenset(vocabulary().names.login_pairs)
