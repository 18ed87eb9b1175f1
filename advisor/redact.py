"""Redaction of what a transcript must not carry: host names, IPv4 and IPv6 addresses, MACs, GUIDs,
GPU and other UUIDs, serial numbers, user names, e-mail addresses, tokens, passwords and private keys.

Guarantees: each distinct value maps to one stable placeholder (host-1, secret-2, ...) for the life of
one Redactor, and a value learned anywhere is replaced everywhere (`document` learns from every string
of a transcript before it replaces any, so a host named in a later turn is hidden in earlier ones too).
Values are only learned from their context (a flag, a key, a header, a prompt, a log prefix) or their
own unmistakable shape (a token prefix, an address), so technical words such as formula names, GPU
names and model repositories are left as they are. Every pattern starts only where its leading
character class begins a run and uses bounded repetition, so redaction is linear in the text's length.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterator
from typing import Any

_SECRET_KEY = (
    r"(?:token|secret|password|passwd|passphrase|pwd|pass|api[_-]?key|apikey|access[_-]?key|secret[_-]?key"
    r"|private[_-]?key|client[_-]?secret|credentials?|auth)"
)
# words that make a key a measured quantity, not a credential (allreduce_bytes_per_token, max_token)
_QUANTITY_WORDS = frozenset(
    "per bytes byte num max min count size len length total avg mean kv prefill decode first last time".split()
)
_HOST_KEY = (
    r"(?:host[ _-]?name|host|hosts|node|nodename|node[_-]name|nodelist|node[_-]list|slurm_nodelist|slurm_job_nodelist"
    r"|slurmd_nodename|master[_-]addr|master[_-]address|head[_-]node|dist[_-]init[_-]addr|node[_-]ip[_-]address"
    r"|kubernetes\.io/hostname)"
)
_VALUE = r"[\"'`]?([^\s\"'`,;&<>)\]}]{1,4096})"

# (kind, pattern, group holding the value, validator name); secrets first, so a token inside a URL or
# a header is a secret before it could be read as anything else
PATTERNS: tuple[tuple[str, re.Pattern[str], int], ...] = (
    (
        "secret",
        re.compile(
            r"(?<![A-Za-z0-9_-])(hf_[A-Za-z0-9]{20,}|sk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}|gh[pousr]_[A-Za-z0-9]{20,}"
            r"|github_pat_[A-Za-z0-9_]{20,}|glpat-[A-Za-z0-9_-]{20,}|xox[abprs]-[A-Za-z0-9-]{10,}"
            r"|(?:AKIA|ASIA)[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{30,}|nvapi-[A-Za-z0-9_-]{20,}|npm_[A-Za-z0-9]{30,}"
            r"|pypi-[A-Za-z0-9_-]{40,}|dckr_pat_[A-Za-z0-9_-]{20,}|wandb_v1_[A-Za-z0-9_-]{20,}"
            r"|eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,})"
        ),
        1,
    ),
    # user:password@host in a URL (registry, proxy, database)
    (
        "secret",
        re.compile(r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{0,20}://[^\s:/@]{1,200}:([^\s/@]{1,400})@"),
        1,
    ),
    ("user", re.compile(r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{0,20}://([^\s:/@]{1,200}):[^\s/@]{1,400}@"), 1),
    (
        "host",
        re.compile(r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{0,20}://[^\s:/@]{1,200}:[^\s/@]{1,400}@([\w.-]{1,253})"),
        1,
    ),
    # headers: Authorization with any scheme, API key headers
    (
        "secret",
        re.compile(
            r"(?i)(?<![\w-])(?:proxy-)?authorization\s*[:=]\s*[\"']?(?:Bearer|Basic|token|Digest|Bot)?\s*([^\s\"',;]{6,})"
        ),
        1,
    ),
    ("secret", re.compile(r"(?i)(?<![\w-])(?:Bearer|Basic)\s+([A-Za-z0-9._~+/=-]{8,})"), 1),
    # docker login -u NAME -p SECRET (and --password / --username); the gap stops at the next "docker", so
    # a run of "docker login" scans each character from one start only
    (
        "secret",
        re.compile(r"(?i)(?<![\w-])docker\s+login\b(?:(?!docker\s)[^\n|;&]){0,200}?\s-p[ =]+[\"']?([^\s\"']{1,4096})"),
        1,
    ),
    (
        "user",
        re.compile(
            r"(?i)(?<![\w-])docker\s+login\b(?:(?!docker\s)[^\n|;&]){0,200}?"
            r"\s(?:-u|--username)[ =]+[\"']?([^\s\"']{1,256})"
        ),
        1,
    ),
    # --api-key X, --token=X, HF_TOKEN=X, "password": "X", api_key: X, ?token=X
    (
        "secret",
        re.compile(r"(?i)(?<![\w-])--((?:[a-z0-9]+-)*" + _SECRET_KEY + r")(?:=|\s+)" + _VALUE),
        2,
    ),
    (
        "secret",
        re.compile(
            r"(?<![\w.-])([A-Z][A-Z0-9_]*(?:TOKEN|SECRET|PASSWORD|PASSWD|API_KEY|APIKEY|ACCESS_KEY|SECRET_KEY|CREDENTIALS?))\s{0,8}=\s{0,8}"
            + _VALUE
        ),
        2,
    ),
    (
        "secret",
        re.compile(r"(?i)(?<![\w.-])((?:[a-z0-9]+[_.-])*" + _SECRET_KEY + r")[\"']?\s{0,8}[=:]\s{0,8}" + _VALUE),
        2,
    ),
    # Kubernetes env: - name: HF_TOKEN / value: X
    (
        "secret",
        re.compile(
            r"(?i)(?<![\w-])name:\s{0,8}[\"']?((?:[a-z0-9]+_)*" + _SECRET_KEY + r")[\"']?\s{1,80}value:\s{0,8}" + _VALUE
        ),
        2,
    ),
    ("secret", re.compile(r"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY( BLOCK)?-----"), 0),
    (
        "email",
        re.compile(r"(?<![A-Za-z0-9._%+-])([A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,})"),
        1,
    ),
    (
        "gpu-uuid",
        re.compile(
            r"(?<![\w-])((?:GPU|MIG)-[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})"
        ),
        1,
    ),
    (
        "uuid",
        re.compile(r"(?<![\w-])([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})(?![\w-])"),
        1,
    ),
    (
        "serial",
        re.compile(
            r"(?i)(?<![\w-])(?:Serial Number|Board Part Number|serial|serial_number)\s*[:=]\s*([A-Za-z0-9-]{6,})"
        ),
        1,
    ),
    ("serial", re.compile(r"(?i)<(?:serial|board_part_number)>\s{0,8}([A-Za-z0-9-]{4,})\s{0,8}</"), 1),
    ("guid", re.compile(r"(?i)(?<![\w-])(?:node|port|system image|sys_image)[ _]guid\s*[:=]?\s*(0x[0-9a-f]{16})"), 1),
    ("mac", re.compile(r"(?<![0-9A-Fa-f:-])((?:[0-9a-fA-F]{2}[:-]){5}[0-9a-fA-F]{2})(?![0-9A-Fa-f:-])"), 1),
    ("ip", re.compile(r"(?<![\d.])((?:25[0-5]|2[0-4]\d|1?\d?\d)(?:\.(?:25[0-5]|2[0-4]\d|1?\d?\d)){3})(?!\.?\d)"), 1),
    # every IPv6 form, shortened ones included; the shape is only a candidate, `ipaddress` decides
    (
        "ip6",
        re.compile(
            r"(?<![0-9A-Za-z:.])((?:[0-9A-Fa-f]{0,4}:){2,7}(?:(?:\d{1,3}\.){3}\d{1,3}|[0-9A-Fa-f]{0,4}))(?![0-9A-Za-z:])"
        ),
        1,
    ),
    ("user", re.compile(r"(?:/home/|/Users/|\\Users\\|/var/home/)([A-Za-z0-9._-]+)"), 1),
    (
        "user",
        re.compile(r"(?<![A-Za-z0-9._-])([A-Za-z0-9._-]+)@[A-Za-z0-9][A-Za-z0-9.-]*[A-Za-z0-9](?=[:\s~\]$#]|$)"),
        1,
    ),
    (
        "host",
        re.compile(r"(?<![A-Za-z0-9._-])[A-Za-z0-9._-]+@([A-Za-z0-9][A-Za-z0-9.-]*[A-Za-z0-9])(?=[:\s~\]$#]|$)"),
        1,
    ),
    (
        "user",
        re.compile(
            r"(?<![\w-])(?:--user(?:name)?[= ]|(?:USER|LOGNAME|SUDO_USER)=)[\"']?([A-Za-z_][A-Za-z0-9_.-]{1,31})"
        ),
        1,
    ),
    ("host", re.compile(r"\bPid\s+\d+\s+on\s+([A-Za-z0-9][\w.-]{0,252})\s+device"), 1),
    # NCCL's line prefix: host:pid:tid [local rank] NCCL INFO ...
    ("host", re.compile(r"(?<![\w.-])([A-Za-z][\w.-]{0,252}):\d+:\d+\s{1,4}\[\d+\]\s{0,4}NCCL"), 1),
    ("host", re.compile(r"(?m)^\s{0,8}([A-Za-z][\w.-]{0,252})\s+slots\s*=\s*\d+"), 1),
    # ssh NAME: only a name with a digit, a dot or a dash (ssh into ... is prose)
    ("ssh-host", re.compile(r"(?<![\w-])ssh\s+(?:-[A-Za-z]\s+\S+\s+){0,4}([A-Za-z][\w.-]{0,252})(?![\w@.-])"), 1),
    # a node named in prose ("on node gpu-a17 the card", "auf dem Knoten gpu-c09"): only a name with a
    # digit and a dash or dot, so "the host H100" or "a node with 8 GPUs" stay as they are
    (
        "host",
        re.compile(
            r"(?i)(?<![\w-])(?:node|host|server|machine|box|knoten|rechner|maschine)\s{1,4}"
            r"(?=[\w.-]{0,250}\d)([A-Za-z][A-Za-z0-9]{0,62}(?:[-.][A-Za-z0-9]{1,63}){1,8})(?![\w-])"
        ),
        1,
    ),
    # NCCL's interface:address<n> (eth0:fe80::1%eth0<0>): an address right after the interface's colon
    (
        "ip6",
        re.compile(
            r"(?<![\w-])[A-Za-z][\w.-]{0,15}:((?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4})(?:%[\w.-]{1,16})?<\d{1,3}>"
        ),
        1,
    ),
    ("host", re.compile(r"(?i)(?<![\w-])--" + _HOST_KEY + r"(?:=|\s+)[\"']?([A-Za-z][\w.\[\],-]{0,252})"), 1),
    (
        "host",
        re.compile(r"(?i)(?<![\w.-])" + _HOST_KEY + r"[\"']?(?:=|\s{0,8}:\s{0,8})[\"']?([A-Za-z][\w.\[\],-]{0,252})"),
        1,
    ),
)
_KEYWORDS = ("token", "secret", "pass", "pwd", "key", "credential", "auth")
# what a text must contain (lower-cased) for each pattern to be worth a scan: most texts skip most patterns
NEEDLES: tuple[tuple[str, ...], ...] = (
    tuple(
        "hf_ sk- ghp_ gho_ ghu_ ghs_ ghr_ github_pat_ glpat- xox akia asia aiza nvapi- npm_ pypi- dckr_pat_ "
        "wandb_v1_ eyj".split()
    ),
    ("://",),
    ("://",),
    ("://",),
    ("authorization",),
    ("bearer", "basic"),
    ("docker",),
    ("docker",),
    ("--",),
    _KEYWORDS,
    _KEYWORDS,
    ("name:",),
    ("private key",),
    ("@",),
    ("gpu-", "mig-"),
    ("-",),
    ("serial", "part number"),
    ("<serial", "<board_part"),
    ("guid",),
    (":", "-"),
    (".",),
    (":",),
    ("/home/", "/users/", "\\users\\", "/var/home/"),
    ("@",),
    ("@",),
    ("--user", "user=", "logname="),
    ("pid",),
    ("nccl",),
    ("slots",),
    ("ssh",),
    ("node", "host", "server", "machine", "box", "knoten", "rechner", "maschine"),
    ("<",),
    ("--",),
    ("host", "node", "master", "head", "dist", "kubernetes"),
)
assert len(NEEDLES) == len(PATTERNS)
KEEP = frozenset(
    {
        "localhost",
        "root",
        "ubuntu",
        "admin",
        "user",
        "X",
        "N/A",
        "0.0.0.0",
        "127.0.0.1",
        "255.255.255.255",
        "::",
        "::1",
        "ff:ff:ff:ff:ff:ff",
        "00:00:00:00:00:00",
        "none",
        "null",
        "true",
        "false",
        "auto",
        "any",
        "all",
        "default",
        "unknown",
        "yes",
        "no",
    }
)
PLACEHOLDER = re.compile(r"(?:host|ip|mac|user|email|secret|serial|uuid|gpu-uuid|guid)-\d+")
_PRIVATE_END = re.compile(r"-----END [A-Z0-9 ]{0,40}PRIVATE KEY( BLOCK)?-----")
# the placeholder kind of a pattern kind (IPv6 addresses are ip-N like IPv4)
_KIND = {"ip6": "ip", "ssh-host": "host"}
_NUMBER = re.compile(r"[\d.,]{1,7}")
_SIBLING = re.compile(r"([A-Za-z][A-Za-z0-9]{0,30}-(?:[A-Za-z0-9]{1,30}-){0,4}[A-Za-z]{0,8})\d{1,6}")  # stem, number
_NODE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9]{0,62}(?:-[A-Za-z0-9]{1,62}){0,8}")  # a DNS label, letter first
_PUBLIC_HOSTS = frozenset("github.com gitlab.com huggingface.co hf.co nvcr.io docker.io ghcr.io quay.io".split())


class Redactor:
    """Replaces sensitive values with placeholders that stay the same for the same value."""

    def __init__(self) -> None:
        self.mapping: dict[str, str] = {}
        self.counts: dict[str, int] = {}
        self._index: _Index | None = None
        self.steps = 0  # regex scans and values handled: proportional to the work, for the linear-time test

    def placeholder(self, kind: str, value: str) -> str:
        """The placeholder of one value, allocating the next number of its kind for a new one."""
        if value not in self.mapping:
            self.counts[kind] = self.counts.get(kind, 0) + 1
            self.mapping[value] = f"{kind}-{self.counts[kind]}"
            self._index = None
            first = value.split(".", 1)[0]
            if kind == "host" and first != value and _NODE_NAME.fullmatch(first) and any(c.isdigit() for c in first):
                # gpu-a17.cluster.example.org: the bare gpu-a17 in prose too (a numbered node name only,
                # so a "proxy" or "registry" label does not hide the word everywhere)
                if self._worth(first):
                    self.placeholder(kind, first)
        return self.mapping[value]

    def _found(self, text: str) -> Iterator[tuple[int, int, str, str]]:
        """(start, end, kind, value) of every sensitive value its context or shape gives away."""
        covered = 0  # a BEGIN inside a block already taken is not another block
        low = text.lower()
        for (kind, pattern, group), needles in zip(PATTERNS, NEEDLES, strict=True):
            if not any(n in low for n in needles):
                continue
            self.steps += 1
            placeholder_kind = _KIND.get(kind, kind)
            if group == 0:  # a private-key block runs to its END line, or to the end of the text
                for m in pattern.finditer(text):
                    self.steps += 1
                    if m.start() < covered:
                        continue
                    end = _PRIVATE_END.search(text, m.end())
                    covered = end.end() if end else len(text)
                    yield m.start(), covered, kind, text[m.start() : covered]
                continue
            # the values to hide in each distinct match, judged once: a text made of one value repeated
            # costs a dictionary look-up per occurrence (this loop is the redactor's hot path)
            memo: dict[Any, tuple[tuple[int, str], ...]] = {}
            matches = 0
            for m in pattern.finditer(text):
                matches += 1
                if group == 2:
                    value, key = m.group(2), m.group(1)
                    parts = memo.get((value, key))
                    if parts is None:
                        parts = memo[(value, key)] = self._pieces(kind, value, key)
                else:
                    value = m.group(group)
                    parts = memo.get(value)
                    if parts is None:
                        parts = memo[value] = self._pieces(kind, value, None)
                if parts:
                    start = m.start(group)
                    for offset, part in parts:
                        yield start + offset, start + offset + len(part), placeholder_kind, part
            self.steps += matches

    def _pieces(self, kind: str, value: str, key: str | None) -> tuple[tuple[int, str], ...]:
        """The (offset, text) of the values to hide in one matched value; the same for every occurrence of
        the match, so a text made of repeated values judges each distinct one once."""
        if key is not None and (not _credential_key(key) or _NUMBER.fullmatch(value)):
            return ()  # a quantity (time per token: 35.2), not a credential
        if kind == "ip6" and not _ipv6(value):
            return ()
        if kind == "ssh-host" and not re.search(r"[\d.-]", value):
            return ()  # ssh into the node: prose, not a host
        if "host" not in kind:
            return ((0, value),) if self._worth(value) and value.lower() not in _PUBLIC_HOSTS else ()
        out = []
        for piece in re.finditer(r"[^,]+", value):
            part = piece.group(0).rstrip(":.")
            if self._worth(part) and part.lower() not in _PUBLIC_HOSTS:
                out.append((piece.start(), part))
        return tuple(out)

    def learn(self, text: str) -> None:
        """Allocate placeholders for the sensitive values in `text` without changing it."""
        for _start, _end, kind, value in self._found(text):
            self.placeholder(kind, value)

    def text(self, text: str) -> str:
        """`text` with every sensitive value replaced; a value learned anywhere is replaced everywhere."""
        mapping = self.mapping
        # (start, -end, placeholder): sorted as they are, the longest value at a start comes first
        spans = [(s, -e, mapping.get(v) or self.placeholder(k, v)) for s, e, k, v in self._found(text)]
        spans += [(s, -e, name) for s, e, name in self._sibling_spans(text)]
        spans += [(s, -e, name) for s, e, name in self._known_spans(text)]
        if not spans:
            return text
        self.steps += len(spans)
        spans.sort()
        out, at = [], 0
        for start, minus_end, name in spans:
            if start < at:
                continue  # inside a longer value already replaced
            out += [text[at:start], name]
            at = -minus_end
        out.append(text[at:])
        return "".join(out)

    def _sibling_spans(self, text: str) -> list[tuple[int, int, str]]:
        """Numbered node names next to a learned one: with gpu-a17 known, a bare gpu-a18 in prose is its
        sibling (the same stem with a dash, then other digits)."""
        stems = sorted(
            {
                m.group(1)
                for v, name in self.mapping.items()
                if name.startswith("host-")
                for m in [_SIBLING.fullmatch(v)]
                if m
            }
        )
        if not stems:
            return []
        self.steps += 1
        pattern = re.compile(r"(?<![\w.-])(?:" + "|".join(map(re.escape, stems)) + r")\d{1,6}(?![\w-])")
        return [(m.start(), m.end(), self.placeholder("host", m.group(0))) for m in pattern.finditer(text)]

    def _known_spans(self, text: str) -> list[tuple[int, int, str]]:
        """Where the values learned so far occur as whole words of `text` (a host named bare in prose).

        A word run is cut at the separators an address or a URL is made of; only a piece that begins
        some known value starts a lookup, which tries only the lengths of the values starting with that
        piece, and a word seen before is not looked up again, so the work stays linear and a text made
        of one value repeated costs little. Values with other characters are found by plain search."""
        if self._index is None:
            self._index = _Index(self.mapping)
        index, out = self._index, []
        # the spans inside one word depend on the word alone: a text of repeated words looks each up once
        memo: dict[str, list[tuple[int, int, str]]] = {}
        for run in _RUN.finditer(text) if index.first else ():  # no word can start a known value: skip the words
            self.steps += 1
            word = run.group(0)
            found = memo.get(word)
            if found is None:
                found = self._word_spans(word, index)
                if len(memo) < 100_000:  # bounded memory for a text of distinct words
                    memo[word] = found
            at = run.start()
            out += [(at + a, at + b, name) for a, b, name in found]
        for value in index.odd:
            at = text.find(value)
            while at != -1:
                self.steps += 1
                out.append((at, at + len(value), self.mapping[value]))
                at = text.find(value, at + len(value))
        return out

    def _word_spans(self, word: str, index: _Index) -> list[tuple[int, int, str]]:
        """(start, end, placeholder) of the known values inside one word, longest first at each cut."""
        out = []
        marks = [m.start() for m in _CUT.finditer(word)]  # one separator character each
        ends = {*marks, len(word)}
        first = index.first
        for i, a in enumerate([0, *(m + 1 for m in marks)]):
            lengths = first.get(word[a : marks[i] if i < len(marks) else len(word)])
            if lengths is None:
                continue
            for length in lengths:  # only the lengths a known value with this first piece has, longest first
                self.steps += 1
                if a + length in ends and word[a : a + length] in self.mapping:
                    out.append((a, a + length, self.mapping[word[a : a + length]]))
                    break
        return out

    @staticmethod
    def _worth(value: str) -> bool:
        return len(value) >= 3 and value not in KEEP and value.lower() not in KEEP and not PLACEHOLDER.fullmatch(value)

    def value(self, data: Any) -> Any:
        """Redact every string inside a JSON-like value."""
        if isinstance(data, str):
            return self.text(data)
        if isinstance(data, dict):
            return {k: self.value(v) for k, v in data.items()}
        if isinstance(data, (list, tuple)):
            return [self.value(v) for v in data]
        return data

    def document(self, data: Any) -> Any:
        """Redact a whole transcript: learn from every string first, so what a later turn gives away
        is hidden in the earlier turns as well."""
        for s in _strings(data):
            self.learn(s)
        return self.value(data)


_RUN = re.compile(r"[A-Za-z0-9_.:%+/=@~-]+")
_CUT = re.compile(r"[.:%+/=@~]")


class _Index:
    """The learned values arranged for lookup: for each first piece, the lengths of the values that start
    with it (longest first); the odd ones, found by plain search."""

    def __init__(self, mapping: dict[str, str]) -> None:
        lengths: dict[str, set[int]] = {}
        self.odd: list[str] = []
        for value in mapping:
            if _RUN.fullmatch(value) and len(value) <= 512:
                lengths.setdefault(_CUT.split(value, 1)[0], set()).add(len(value))
            else:
                self.odd.append(value)
        self.first: dict[str, tuple[int, ...]] = {k: tuple(sorted(v, reverse=True)) for k, v in lengths.items()}


def _strings(data: Any) -> Iterator[str]:
    if isinstance(data, str):
        yield data
    elif isinstance(data, dict):
        for v in data.values():
            yield from _strings(v)
    elif isinstance(data, (list, tuple)):
        for v in data:
            yield from _strings(v)


def _credential_key(key: str) -> bool:
    """Whether a key names a credential rather than a quantity (hf_token yes, allreduce_bytes_per_token no)."""
    words = re.split(r"[_.-]", key.lower())
    return not _QUANTITY_WORDS.intersection(words)


def _ipv6(value: str) -> bool:
    """Whether a candidate is an IPv6 address (a clock time or a PCI address is not)."""
    if value.count(":") < 2 or value.strip(":") == "":
        return False
    try:
        ipaddress.IPv6Address(value)
    except ValueError:
        return False
    return True
