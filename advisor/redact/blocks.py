"""Secrets that span lines, found by their structure: private-key blocks (PEM, OpenSSH, PGP, from BEGIN to
END), PuTTY key files (the lines Private-Lines counts, and Private-MAC), the values of a Kubernetes Secret's
`data:` and `stringData:`, and a YAML block scalar under a credential name (`private_key: |`).

Guarantees: each block is found from a marker the text holds (a cheap `in` test first), read line by line,
and bounded (MAX_LINES lines, or its END marker); a line is read by at most one block, so the work stays
linear in the text's length.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

Span = tuple[int, int]
MAX_LINES = 400

# any armoured block whose label names a private or secret key (RSA PRIVATE KEY, OPENSSH PRIVATE KEY, PGP
# PRIVATE KEY BLOCK, OpenVPN Static key V1, ENCRYPTED PRIVATE KEY); a public key or certificate is not one
_BEGIN = re.compile(r"-----BEGIN ([A-Za-z0-9 _.-]{1,60})-----")
_SECRET_LABEL = re.compile(r"(?i)\b(?:private|secret|static key|key)\b")
_PUBLIC_LABEL = re.compile(r"(?i)\b(?:public|certificate|cert)\b")
# the lines a shell prints after `cat` (or head, less, sudo cat ...) of a file named for a secret:
# `$ cat config/master.key`, `cat ~/.config/hf/token`, `type secrets\api.txt`
_CAT = re.compile(
    r"(?m)^[^\n]{0,80}?(?:^|[$#>%][ \t]{1,4}|[ \t])(?:sudo[ \t]{1,4})?(?:cat|head|tail|less|more|type|bat)[ \t]{1,4}"
    r"([^\s|;&<>]{1,256})[ \t]{0,8}$"
)
_SECRET_FILE = re.compile(
    r"(?i)(?:^|[/\\._-])(?:master\.key|[\w-]{0,40}\.key|token|tokens|secret|secrets|password|passwd|credentials?"
    r"|api[_-]?key|apikey|id_rsa|id_ed25519|id_ecdsa|\.netrc|\.pgpass|htpasswd|\.git-credentials|auth|pass|passphrase"
    r"|pwd|pw|psk)(?:$|[._-])"
)
_SETTING = re.compile(r"[ \t]{0,8}[A-Za-z_][\w.-]{0,127}=")
_OUTPUT_TOKEN = re.compile(r"[ \t]{0,8}[^\s$#>]{8,4096}[ \t]{0,8}")
_PUTTY = re.compile(r"Private-Lines:[ \t]{0,8}(\d{1,4})[ \t]{0,8}$", re.M)
_MAC = re.compile(r"Private-MAC:[ \t]{0,8}([0-9A-Za-z+/=]{8,256})")
_SECRET_KIND = re.compile(r"(?m)^[ \t]{0,16}kind:[ \t]{0,8}[\"']?Secret[\"']?[ \t]{0,8}$")
_DATA = re.compile(r"(?m)^([ \t]{0,16})(?:data|stringData):[ \t]{0,8}$")
_ITEM = re.compile(r"([ \t]{1,32})[\"']?([\w.-]{1,253})[\"']?:[ \t]{1,8}(?![|>][-+]?[ \t]*$)(\S[^\n]{0,8191})")


_VAULT = re.compile(r"\$ANSIBLE_VAULT;[\w.;]{1,64}[ \t]{0,8}$", re.M)
_HEX_LINE = re.compile(r"[ \t]{0,32}[0-9a-fA-F]{8,256}[ \t]{0,8}")


def find(text: str) -> Iterator[Span]:
    """Every multi-line secret's span."""
    if "-----BEGIN " in text:
        yield from _pem(text)
    if "cat " in text or "head " in text or "type " in text:
        yield from _cat_output(text)
    if "$ " in text or "# " in text:
        yield from _made_output(text)
    if "$ANSIBLE_VAULT;" in text:
        yield from _vault(text)
    if "Private-Lines:" in text:
        yield from _putty(text)
    if "Secret" in text and "ata:" in text:
        yield from _kubernetes(text)


def _pem(text: str) -> Iterator[Span]:
    """From each BEGIN line of a private or secret key to its END line (or the text's end)."""
    covered = -1
    for m in _BEGIN.finditer(text):
        label = m.group(1)
        if m.start() < covered or not _SECRET_LABEL.search(label) or _PUBLIC_LABEL.search(label):
            continue  # inside a block already taken, or a public key, a certificate, a message
        end = text.find(f"-----END {label}-----", m.end())
        covered = end + len(label) + 14 if end >= 0 else len(text)
        yield m.start(), covered


def _cat_output(text: str) -> Iterator[Span]:
    """The output of a command that prints a file named for a secret: each line after it that is one
    token of eight characters or more, until a blank line, a prompt or a line of words (MAX_LINES)."""
    for m in _CAT.finditer(text):
        name = m.group(1).strip("\"'")
        if not _SECRET_FILE.search(name) or name.endswith((".pub", ".crt", ".pem.pub")):
            continue
        for at, line in following_lines(text, m.end() + 1):
            if not _OUTPUT_TOKEN.fullmatch(line) or line.strip().startswith(("-----", "```")):
                break
            lead = len(line) - len(line.lstrip())
            yield at + lead, at + len(line.rstrip())


# a shell command line after its prompt, and a command that makes a credential: a verb that makes one and a
# word that names one (headscale preauthkeys create, gh auth token, vault token create), or a generator of
# secrets by itself (wg genkey, openssl rand)
_PROMPTED = re.compile(r"(?m)^[ \t]{0,8}(?:[\w@.:~/()-]{0,64}[$#%][ \t]{1,4})([^\n]{1,400})$")
_MAKES = re.compile(r"(?i)(?<![\w-])(?:create|generate|gen|new|issue|mint|rotate|regenerate|reset)(?![\w-])")
_CREDENTIAL = re.compile(r"(?i)(?:keys?|tokens?|secrets?|passw(?:or)?ds?|credentials?|psk)(?![a-z])")
_GENERATOR = re.compile(r"(?<![\w-])(?:wg[ \t]{1,4}genkey|wg[ \t]{1,4}genpsk|openssl[ \t]{1,4}rand|pwgen|apg)(?![\w-])")


def _made_output(text: str) -> Iterator[Span]:
    """The output of a command that makes a credential: each line after it that is one token of eight
    characters or more, until a blank line, a prompt or a line of words (MAX_LINES)."""
    for m in _PROMPTED.finditer(text):
        command = m.group(1)
        if not (_GENERATOR.search(command) or (_MAKES.search(command) and _CREDENTIAL.search(command))):
            continue
        if "pubkey" in command or "public" in command.lower():
            continue  # wg pubkey, ssh-keygen -y: what they print is public
        for at, line in following_lines(text, m.end() + 1):
            if not _OUTPUT_TOKEN.fullmatch(line) or line.strip().startswith(("-----", "```")) or _SETTING.match(line):
                break  # NODE_ENV=production after "# rotate via 1Password": a setting, which its name judges
            lead = len(line) - len(line.lstrip())
            yield at + lead, at + len(line.rstrip())


def following_lines(text: str, at: int) -> Iterator[tuple[int, str]]:
    """The lines of `text` from offset `at` on, each with its start, MAX_LINES at most."""
    for _ in range(MAX_LINES):
        if at >= len(text):
            return
        nxt = text.find("\n", at)
        end = len(text) if nxt < 0 else nxt
        yield at, text[at:end]
        at = end + 1


def _vault(text: str) -> Iterator[Span]:
    """An Ansible Vault's lines of hexadecimal after its $ANSIBLE_VAULT header."""
    for m in _VAULT.finditer(text):
        start = at = m.end() + 1
        for _ in range(MAX_LINES * 10):
            nxt = text.find("\n", at)
            end = len(text) if nxt < 0 else nxt
            if at >= len(text) or not _HEX_LINE.fullmatch(text, at, end):
                break
            at = end + 1
        if at > start:
            yield start, min(at - 1, len(text))


def list_items(text: str, key_start: int, key_end: int) -> Iterator[Span]:
    """The `- item` values of a YAML list that follows a key with no value of its own (`api_keys:`), on the
    lines indented at least as deep as the key, at most MAX_LINES."""
    line_start = text.rfind("\n", 0, key_start) + 1
    indent = key_start - line_start
    at = text.find("\n", key_end)
    for _ in range(MAX_LINES):
        if at < 0 or at + 1 >= len(text):
            return
        at += 1
        nxt = text.find("\n", at)
        end = len(text) if nxt < 0 else nxt
        line = text[at:end]
        stripped = line.lstrip(" \t")
        lead = len(line) - len(stripped)
        if not stripped.startswith("- ") or lead < indent:
            return
        value = stripped[2:].strip().strip("\"'")
        if value and ": " not in value:  # `- name: ngc-pull`: a mapping that names a secret, not one
            begin = text.find(value, at, end)
            yield begin, begin + len(value)
        at = end


def _putty(text: str) -> Iterator[Span]:
    """The lines a PuTTY key file's Private-Lines counts, and its Private-MAC."""
    for m in _PUTTY.finditer(text):
        lines = min(int(m.group(1)), MAX_LINES)
        start = at = m.end() + 1
        for _ in range(lines):
            nxt = text.find("\n", at)
            at = len(text) if nxt < 0 else nxt + 1
        if at > start:
            yield start, at - 1 if text[at - 1 : at] == "\n" else at
        mac = _MAC.search(text, at, at + 400)
        if mac:
            yield mac.span(1)


def _kubernetes(text: str) -> Iterator[Span]:
    """The values under data: and stringData: of each `kind: Secret` document (up to the next ---)."""
    for kind in _SECRET_KIND.finditer(text):
        doc_start = text.rfind("\n---", 0, kind.start()) + 1
        doc_end = text.find("\n---", kind.end())
        doc_end = len(text) if doc_end < 0 else doc_end
        for data in _DATA.finditer(text, doc_start, doc_end):
            yield from _items(text, data.end() + 1, doc_end, len(data.group(1)))


def _items(text: str, start: int, end: int, indent: int) -> Iterator[Span]:
    at = start
    for _ in range(MAX_LINES):
        if at >= end:
            return
        nxt = text.find("\n", at, end)
        line_end = end if nxt < 0 else nxt
        line = text[at:line_end]
        if line.strip():
            lead = len(line) - len(line.lstrip(" \t"))
            if lead <= indent:
                return
            m = _ITEM.match(text, at, line_end)
            if m and not _plain_setting(m.group(2)) and not public_encoded(m.group(3)):
                yield m.start(3), line_end
        at = line_end + 1


# what a public certificate or key starts with, once decoded (a kubernetes.io/tls Secret's tls.crt, ca.crt)
_PUBLIC_HEADS = (
    b"-----BEGIN CERTIFICATE",
    b"-----BEGIN PUBLIC KEY",
    b"-----BEGIN X509 CRL",
    b"ssh-ed25519 ",
    b"ssh-rsa ",
    b"ecdsa-sha2-",
)


def public_encoded(value: str) -> bool:
    """Whether a base64 value decodes to a certificate or a public key: published by design, not hidden."""
    import base64
    import binascii

    head = value.strip().strip("\"'")[:32]
    if len(head) < 32:
        return False
    try:
        decoded = base64.b64decode(head, validate=True)
    except (binascii.Error, ValueError):
        return False
    return decoded.startswith(_PUBLIC_HEADS)


def _plain_setting(name: str) -> bool:
    """A Secret's key whose name says it holds no credential (AUTHENTICATION_APIKEY_USERS, DB_HOST): its value
    is judged like any other, not hidden for where it stands."""
    from advisor.redact.names import strength, words
    from advisor.redact.vocabulary import vocabulary

    found = words(name)
    return bool(found) and strength(name) is None and found[-1] in vocabulary().names.plain_data


def scalar(text: str, key_start: int, key_end: int) -> Iterator[Span]:
    """The lines of a YAML block scalar (`key: |`) that follow a credential's key: those indented deeper
    than the key's line, at most MAX_LINES."""
    line_start = text.rfind("\n", 0, key_start) + 1
    head = text[line_start:key_start]
    indent = len(head) - len(head.lstrip(" \t-"))
    at = text.find("\n", key_end)
    if at < 0:
        return
    start = at = at + 1
    last = start
    for _ in range(MAX_LINES):
        if at >= len(text):
            break
        nxt = text.find("\n", at)
        line_end = len(text) if nxt < 0 else nxt
        line = text[at:line_end]
        if line.strip() and len(line) - len(line.lstrip(" \t")) <= indent:
            break
        last = line_end
        at = line_end + 1
    if last > start:
        yield start, last
