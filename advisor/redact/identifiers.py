"""Identifiers a ticket must not carry: host names, IPv4 and IPv6 addresses, MACs, GUIDs, GPU and other UUIDs,
serial numbers, user names and e-mail addresses, each found from its context (a flag, a key, a prompt, a
log prefix) or its own unmistakable shape (an address).

Known-safe values are never taken for one: a model's or GPU's name ("host Llama-3.3-70B-Instruct" is a
verb and a model), an image digest (`image@sha256:...` is no user@host), a version (TensorRT 10.3.0.26,
libnccl2=2.21.5) is no address. Guarantees: no pattern can match a line end, every repeat is bounded and
each pattern is led by its first character class; a pattern runs only on a text holding one of its needles.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterator
from functools import lru_cache

from advisor.redact.vocabulary import SafeNames, public_host, vocabulary

Found = tuple[int, int, str]  # start, end, kind


class Rule:
    """One pattern and what its groups hold: (kind, group) outputs, and the lower-case needles one of which
    a text must contain for the pattern to be worth a scan."""

    __slots__ = ("outputs", "pattern", "needles")

    def __init__(self, outputs: tuple[tuple[str, int], ...], pattern: str, needles: tuple[str, ...]) -> None:
        self.outputs, self.pattern, self.needles = outputs, re.compile(pattern), needles


def _rule(kind: str, pattern: str, needles: str, group: int = 1) -> Rule:
    return Rule(((kind, group),), pattern, tuple(needles.split()))


def _led(first: str, not_before: str) -> str:
    """A pattern's first class, then the check that the character before it is not in `not_before`: the
    class leads, so a search skips to the next character that can start a match."""
    return f"{first}(?<!{not_before}{first})"


_HOST_KEY = (
    r"(?:host[ _-]?name|host|hosts|node|nodename|node[_-]name|nodelist|node[_-]list|slurm_nodelist|slurm_job_nodelist"
    r"|slurmd_nodename|master[_-]addr|master[_-]address|head[_-]node|dist[_-]init[_-]addr|node[_-]ip[_-]address"
    r"|rdzv[_-]endpoint|kubernetes\.io/hostname)"
)
_FLAG_SEP = r"[\"']?(?:=|,?[ \t]{1,8})"

RULES: tuple[Rule, ...] = (
    # user:password@host in a URL: the user and the host (the password is a secret, see secrets.py)
    Rule((("user", 1), ("host", 2)), r"://([^\s:/@\"'<>]{1,200}):[^\s/@\"'<>]{0,400}@([\w.-]{1,253})", ("://",)),
    # a URL's host in a customer's own network (corp, internal, lab, cluster, example ... labels)
    _rule("url-host", r"://([A-Za-z0-9][A-Za-z0-9-]{0,62}(?:\.[A-Za-z0-9-]{1,63}){1,8})", "://"),
    # the same without a URL: a name of three labels or more, one of them a private network's
    # (nas01.fra2.int.example.de in fstab, lb-a.edge.corp.acme-ai in an inventory, dc01.ad.acme.lan)
    _rule(
        "url-host",
        "(" + _led("[A-Za-z0-9]", r"[\w.-]") + r"[A-Za-z0-9-]{0,62}(?:\.[A-Za-z0-9-]{1,63}){2,8})(?![\w-])",
        ".corp. .int. .internal .lan .intra .mgmt. .ad. .priv. .private. .local .lab. .home.",
    ),
    # docker login -u NAME, database clients' -u NAME / -U NAME (the gap stops at the next client's name)
    _rule(
        "user",
        r"(?i)(?<![\w-])docker[ \t]{1,8}login\b(?:(?!docker[ \t])[^\n|;&]){0,200}?[ \t](?:-u|--username)[ =]{1,4}"
        r"[\"']?([^\s\"']{1,256})",
        "docker",
    ),
    _rule(
        "user",
        r"(?<![\w-])(?:mysql|mysqldump|psql|pg_dump|mongosh|mongo|redis-cli)[ \t](?:(?!mysql|psql)[^\n|;&]){0,200}?"
        r"[ \t](?:-u|-U)[ \t]{0,4}([A-Za-z_][\w.-]{0,63})",
        "mysql psql pg_dump mongo redis-cli",
    ),
    # curl -u user:password (also as a JSON or YAML list: "-u", "user:password")
    Rule(
        (("user", 1), ("secret", 2)),
        r"(?<![\w-])(?:-u|--user)[\"']?(?:=|,?[ \t]{1,8})[\"']?([^\s:\"'$-][^\s:\"']{0,63}):([^\s\"']{1,256})",
        ("-u", "--user"),
    ),
    # aws configure set aws_secret_access_key VALUE
    _rule(
        "secret",
        r"(?<![\w-])aws[ \t]{1,8}configure[ \t]{1,8}set[ \t]{1,8}(?:[a-z0-9]{1,32}_){0,4}(?:secret_access_key"
        r"|session_token)[ \t]{1,8}[\"'`]?([^\s\"'`,;&<>)\]}]{1,4096})",
        "aws",
    ),
    # ~/.netrc: machine HOST login USER password SECRET
    Rule(
        (("host", 1), ("user", 2), ("secret", 3)),
        r"(?<![\w-])machine[ \t]{1,8}([A-Za-z0-9][\w.-]{0,252})[ \t]{1,8}login[ \t]{1,8}([^\s]{1,64})[ \t]{1,8}"
        r"password[ \t]{1,8}([^\s]{1,256})",
        ("machine",),
    ),
    # /etc/hosts: an address at the start of a line, then the names it stands for
    Rule(
        (("host", 1), ("host", 2)),
        r"(?m)^(?:\d{1,3}(?:\.\d{1,3}){3}|[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7}(?::\d{1,3}(?:\.\d{1,3}){3})?)"
        r"[ \t]{1,32}([A-Za-z][\w.-]{0,252})(?:[ \t]{1,32}([A-Za-z][\w.-]{0,252}))?",
        (".", ":"),
    ),
    _rule(
        "email",
        "(" + _led("[A-Za-z0-9._%+-]", "[A-Za-z0-9._%+-]") + r"[A-Za-z0-9._%+-]{0,255}@[A-Za-z0-9-]{1,63}"
        r"(?:\.[A-Za-z0-9-]{1,63}){0,8}\.[A-Za-z]{2,63})",
        "@",
    ),
    _rule(
        "gpu-uuid",
        r"((?:G(?<![\w-]G)PU|M(?<![\w-]M)IG)-[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})",
        "gpu- mig-",
    ),
    _rule(
        "uuid",
        "(" + _led("[0-9a-fA-F]", r"[\w-]") + r"[0-9a-fA-F]{7}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}"
        r"-[0-9a-fA-F]{12})(?![\w-])",
        "-",
    ),
    _rule(
        "serial",
        r"(?i)(?<![\w-])(?:Serial Number|Board Part Number|serial|serial_number)[ \t]{0,64}[:=][ \t]{0,8}"
        r"([A-Za-z0-9-]{6,64})",
        "serial part",
    ),
    # a serial number in prose ("board serial 1654123045999", "S/N 1234567"): a value with a digit only
    _rule(
        "serial",
        r"(?i)(?<![\w-])(?:serial(?: number)?|s/n)[ \t]{1,8}(?=[A-Za-z-]{0,40}\d)([A-Za-z0-9-]{6,64})(?![\w-])",
        "serial s/n",
    ),
    _rule(
        "serial", r"(?i)<(?:serial|board_part_number)>[ \t]{0,8}([A-Za-z0-9-]{4,64})[ \t]{0,8}</", "<serial <board_part"
    ),
    _rule(
        "guid",
        r"(?i)(?<![\w-])(?:node|port|system image|sys_image)[ _]guid[ \t]{0,8}[:=]?[ \t]{0,8}(0x[0-9a-f]{16})",
        "guid",
    ),
    _rule(
        "mac",
        "(" + _led("[0-9a-fA-F]", "[0-9A-Fa-f:-]") + r"[0-9a-fA-F](?:[:-][0-9a-fA-F]{2}){5})(?![0-9A-Fa-f:-])",
        ": -",
    ),
    _rule("ip", "(" + _led("[0-9]", r"[\d.]") + r"[0-9]{0,2}(?:\.[0-9]{1,3}){3})(?!\.?\d)", "."),
    # every IPv6 form, shortened ones included; the shape is only a candidate, `ipaddress` decides
    _rule(
        "ip6",
        "(" + _led("[0-9A-Fa-f:]", "[0-9A-Za-z:.]") + r"[0-9A-Fa-f]{0,3}:?(?:[0-9A-Fa-f]{0,4}:){1,7}"
        r"(?:(?:\d{1,3}\.){3}\d{1,3}|[0-9A-Fa-f]{0,4}))(?![0-9A-Za-z:])",
        ":",
    ),
    _rule(
        "user", r"(?:/home/|/Users/|\\Users\\|/var/home/)([A-Za-z0-9._-]{1,64})", "/home/ /users/ \\users\\ /var/home/"
    ),
    # user@host (ssh, a shell prompt, an authorized_keys comment): one scan, two values
    Rule(
        (("user", 1), ("host", 2)),
        "(" + _led("[A-Za-z0-9._-]", "[A-Za-z0-9._-]") + r"[A-Za-z0-9._-]{0,63})@"
        r"([A-Za-z0-9][A-Za-z0-9.-]{0,252}[A-Za-z0-9])(?=[:\s~\]$#]|$)",
        ("@",),
    ),
    _rule(
        "user",
        r"(?<![\w-])(?:--user(?:name)?[= ]|(?:USER|LOGNAME|SUDO_USER)=|sudo[ \t]{1,8}-u[ \t]{1,8})[\"']?"
        r"([A-Za-z_][A-Za-z0-9_.-]{1,31})",
        "--user user= logname= sudo",
    ),
    # a user name under a key: POSTGRES_USER=x, user=x (a DSN) anywhere; "username: x" as a YAML or JSON key
    # at the start of a line only, so "ask the user: Lena" in prose stays
    _rule(
        "user",
        r"(?<![\w.-])(?:[A-Z][A-Z0-9]{0,30}_USER(?:NAME)?|user(?:name)?)=[\"']?([A-Za-z_][A-Za-z0-9_.-]{1,31})(?![\w@:/-])",
        "user",
    ),
    _rule(
        "user",
        r"(?m)^[ \t]{0,16}(?:-[ \t]{1,4})?[\"']?(?:[A-Z][A-Z0-9]{0,30}_USER(?:NAME)?|user(?:name)?)[\"']?[ \t]{0,8}:"
        r"[ \t]{0,8}[\"']?([A-Za-z_][A-Za-z0-9_.-]{1,31})[\"']?,?[ \t]{0,64}$",
        "user",
    ),
    _rule("host", r"\bPid[ \t]{1,8}\d{1,9}[ \t]{1,8}on[ \t]{1,8}([A-Za-z0-9][\w.-]{0,252})[ \t]{1,8}device", "pid"),
    # NCCL's line prefix: host:pid:tid [local rank] NCCL INFO ...
    _rule("host", r"(?<![\w.-])([A-Za-z][\w.-]{0,252}):\d{1,9}:\d{1,9}[ \t]{1,4}\[\d{1,4}\][ \t]{0,4}NCCL", "nccl"),
    _rule("host", r"(?m)^[ \t]{0,8}([A-Za-z][\w.-]{0,252})[ \t]{1,8}slots[ \t]{0,8}=[ \t]{0,8}\d", "slots"),
    # ssh NAME: only a name with a digit, a dot or a dash (ssh into ... is prose)
    _rule(
        "ssh-host",
        r"(?<![\w-])ssh[ \t]{1,8}(?:-[A-Za-z][ \t]{1,8}[^\s]{1,256}[ \t]{1,8}){0,4}([A-Za-z][\w.-]{0,252})(?![\w@.-])",
        "ssh",
    ),
    # a node named in prose ("on node gpu-a17 the card", "auf dem Knoten gpu-c09"): only a name with a
    # digit and a dash or dot, so "the host H100" or "a node with 8 GPUs" stay as they are
    _rule(
        "prose-host",
        r"(?i)(?<![\w-])(?:node|host|server|machine|box|knoten|rechner|maschine)[ \t]{1,4}"
        r"(?=[\w.-]{0,250}\d)([A-Za-z][A-Za-z0-9]{0,62}(?:[-.][A-Za-z0-9]{1,63}){1,8})(?![\w-])",
        "node host server machine box knoten rechner maschine",
    ),
    # NCCL's interface:address<n> (eth0:fe80::1%eth0<0>): an address right after the interface's colon
    _rule(
        "ip6",
        r"(?<![\w-])[A-Za-z][\w.-]{0,15}:((?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4})(?:%[\w.-]{1,16})?<\d{1,3}>",
        "<",
    ),
    _rule("host", r"(?i)(?<![\w-])--" + _HOST_KEY + _FLAG_SEP + r"[\"']?([A-Za-z][\w.\[\],-]{0,252})", "--"),
    _rule(
        "host",
        r"(?i)(?<![\w.-])" + _HOST_KEY + r"[\"']?(?:=|[ \t]{0,8}:[ \t]{0,8})[\"']?([A-Za-z][\w.\[\],-]{0,252})",
        "host node master head dist kubernetes rdzv",
    ),
    # compose extra_hosts ("name:10.0.0.2") and docker --add-host name:address
    _rule(
        "host",
        r"(?m)(?:^[ \t]{0,16}-[ \t]{0,4}[\"']?|--add-host[= ][\"']?)([A-Za-z][\w.-]{0,252})"
        r":(?:\d{1,3}\.){3}\d{1,3}[\"']?[ \t]{0,64}$",
        ":",
    ),
    # Kubernetes hostAliases: hostnames: ["name", ...]
    _rule("host", r"hostnames:[ \t]{0,8}\[?[ \t]{0,8}[\"']?([A-Za-z][\w.-]{0,252})", "hostnames"),
    # a registry under a docker config's "auths": "registry.example.com": { (its "auth" on this line or the next)
    _rule(
        "registry-host",
        r"\"(?:https?://)?([A-Za-z0-9][A-Za-z0-9.-]{0,252})(?::\d{1,5})?(?:/[^\"\s]{0,200})?\"[ \t]{0,8}:[ \t]{0,8}\{",
        '"auth"',
    ),
    # a Slack webhook's path
    _rule(
        "secret",
        r"hooks\.slack\.com/(?:services|workflows|triggers)/([A-Za-z0-9]{6,16}/[A-Za-z0-9]{6,16}/[A-Za-z0-9]{16,64})",
        "hooks.slack",
    ),
)

# a URL host is hidden when one of its labels says it is a customer's own network
_INTERNAL_LABELS = frozenset(
    "corp internal intranet intra local lan lab cluster svc example test invalid localdomain home int mgmt ad priv"
    " private".split()
)
PUBLIC_HOSTS = frozenset("github.com gitlab.com huggingface.co hf.co nvcr.io docker.io ghcr.io quay.io".split())
_HASHES = frozenset("sha1 sha224 sha256 sha384 sha512 md5 blake2b blake2s blake3 xxh64 crc32".split())
_SCHEMES = frozenset("http https git ssh ftp s3 gs file hf".split())
_HOST_KINDS = frozenset({"host", "url-host", "ssh-host", "prose-host"})
_LABEL = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?")


def _hostname(value: str) -> bool:
    """A name a host can have (RFC 1123 labels: letters, digits, inner hyphens; no underscore), not a URL
    scheme word, with an optional :port."""
    name = value.split(":", 1)[0].rstrip(".")
    if not name or name.lower() in _SCHEMES:
        return False
    return all(_LABEL.fullmatch(label) for label in name.split("."))


# the last parts of file names that no host name ends in (key and certificate files, logs, configs, weights)
_FILE_ENDINGS = frozenset(
    "key crt pem cer csr der p12 pfx jks keystore pub log txt json yaml yml toml conf cfg ini env lock pid sock "
    "safetensors gguf bin pt pth onnx engine plan ckpt npz tar gz tgz bz2 xz zst".split()
)


def _file_in_path(value: str, text: str, start: int) -> bool:
    """Whether a host-shaped name is the last part of a path that names a file by its ending."""
    return start > 0 and text[start - 1] in "/\\" and value.rsplit(".", 1)[-1].lower() in _FILE_ENDINGS


_KIND = {"ip6": "ip", "ssh-host": "host", "url-host": "host", "prose-host": "host", "registry-host": "host"}
_DOTTED = re.compile(r"\d{1,4}\.\d{1,4}")


def find(text: str, safe: SafeNames) -> Iterator[Found]:
    """(start, end, kind) of every identifier in `text`; kinds as the placeholders name them."""
    low = text.lower()
    for rule in RULES:
        if not any(n in low for n in rule.needles):
            continue
        judged: dict[tuple[str, ...], tuple[tuple[int, int, int, str], ...]] = {}
        for m in rule.pattern.finditer(text):
            groups = m.groups("")
            parts = judged.get(groups)
            if parts is None:
                parts = tuple(
                    (g, a, b, kind)
                    for kind, g in rule.outputs
                    if _keep(kind, groups[g - 1], m, text, safe)
                    for a, b, kind in _pieces(groups[g - 1], _KIND.get(kind, kind))
                )
                if len(judged) < 100_000:
                    judged[groups] = parts
            for g, a, b, kind in parts:
                at = m.start(g)
                yield at + a, at + b, kind


def _pieces(value: str, kind: str) -> Iterator[tuple[int, int, str]]:
    """A value's parts to hide (offsets in it): a host list (node1,node2) host by host, without a trailing
    ':' or '.'."""
    if kind != "host":
        yield 0, len(value), kind
        return
    for piece in re.finditer(r"[^,\[\]\n]{1,253}", value):
        part = piece.group(0).rstrip(":.")
        if worth(part) and part.lower() not in PUBLIC_HOSTS and not public_host(part):
            yield piece.start(), piece.start() + len(part), kind


def _keep(kind: str, value: str, m: re.Match[str], text: str, safe: SafeNames) -> bool:
    """Whether a candidate of `kind` is an identifier to hide (not a safe name, a digest, a version...)."""
    if not value or not worth(value):
        return False
    if kind in _HOST_KINDS and not _hostname(value):
        return False  # https (from `host: https://...`), System.get_env: no host name
    if kind in _HOST_KINDS and _file_in_path(value, text, m.start(1)):
        return False  # /etc/ssl/private/comfy.lab.key: a file of a path, not a host
    checks = {
        "ip": lambda: _address(value) and not _version(text, m.start(1), m.end(1)),
        "ip6": lambda: _ipv6(value),
        "ssh-host": lambda: re.search(r"[\d.-]", value) is not None and not safe.word(value),
        "url-host": lambda: bool(_INTERNAL_LABELS.intersection(value.lower().split("."))) and not public_host(value),
        "prose-host": lambda: not safe.word(word_at(text, m.start(1))) and not _DOTTED.search(value),
        "registry-host": lambda: (
            "." in value and '"auth"' in text[m.end() : m.end() + 300] and not public_host(value.split(":")[0])
        ),
        "user": lambda: not safe.word(value) and not _digest_or_scheme(m),
        "host": lambda: not public_host(value.split(":")[0]) and not safe.word(value) and not _digest_or_scheme(m),
    }
    check = checks.get(kind)
    return check() if check else value.lower() not in PUBLIC_HOSTS


def _digest_or_scheme(m: re.Match[str]) -> bool:
    """image@sha256:..., pkg@https://...: a digest or a URL after the @, not a host."""
    if m.lastindex is None or m.lastindex < 2:
        return False
    after = m.group(m.lastindex).lower()
    return after in _HASHES or after in _SCHEMES or _REF.fullmatch(after) is not None


# owner/repo@v4, pkg@1.2.3, image@latest: a version or a ref (three numbers at most: 10.44.0.31 is an address)
_REF = re.compile(
    r"v[0-9][\w.-]{0,40}|[0-9]{1,6}(?:\.[0-9]{1,6}){0,2}(?:[-+][\w.]{1,30})?|main|master|latest|stable|head"
    r"|[0-9a-f]{7,64}"  # actions/checkout@11bd7190...: a commit
)


def _address(value: str) -> bool:
    """A dotted quad that an address can be: octets up to 255, none written with a leading zero (no tool
    prints 10.0.50.07; iDRAC 7.10.50.00 and BIOS 2.10.01.00 are versions)."""
    octets = value.split(".")
    return all(int(o) <= 255 and (o == "0" or not o.startswith("0")) for o in octets)


@lru_cache(maxsize=1)
def _version_words() -> tuple[frozenset[str], tuple[str, ...]]:
    words = frozenset(w.lower() for w in vocabulary().version_words)
    return words, tuple(w for w in words if len(w) >= 4)


def _version(text: str, start: int, end: int) -> bool:
    """Whether a dotted quad is a version: named by a version word before it (TensorRT 10.3.0.26, driver
    570.x), pinned by a package (==, libnccl2=), or carrying a release suffix (10.3.0.26-1+cuda12.6)."""
    if re.match(r"[-+~][0-9A-Za-z]", text[end : end + 2]):
        return True
    before = text[max(0, start - 48) : start]
    before = before[before.rfind("\n") + 1 :]
    if before.endswith(("==", ">=", "<=", "~=", "!=", "@", "v", "V")):
        return True
    words, long_words = _version_words()
    previous = re.findall(r"[A-Za-z][\w.+-]{0,40}", before)
    if not previous:
        return False
    last = previous[-1].lower().rstrip("=:-_")
    return last in words or any(w in last for w in long_words)


def _ipv6(value: str) -> bool:
    """Whether a candidate is an IPv6 address (a clock time or a PCI address is not)."""
    if value.count(":") < 2 or value.strip(":") == "":
        return False
    try:
        ipaddress.IPv6Address(value)
    except ValueError:
        return False
    return True


def inside_longer_word(text: str, start: int, end: int) -> bool:
    """Whether text[start:end] continues into a longer name (a model's repository, a dotted name)."""
    return (start > 0 and text[start - 1] in "./") or (end < len(text) and text[end] in "./")


def word_at(text: str, start: int) -> str:
    """The run of name characters around `start` (at most 256 each way)."""
    a = start
    while a > 0 and start - a < 256 and (text[a - 1].isalnum() or text[a - 1] in "._/-"):
        a -= 1
    b = start
    while b < len(text) and b - start < 256 and (text[b].isalnum() or text[b] in "._/-"):
        b += 1
    return text[a:b]


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
        # the fixed user names vendors prescribe for token logins (GitLab oauth2, Bitbucket x-token-auth,
        # GitHub x-access-token, PyPI __token__, NGC $oauthtoken, Google _json_key): not a person
        "oauth2",
        "x-token-auth",
        "x-access-token",
        "x-oauth-basic",
        "__token__",
        "$oauthtoken",
        "_json_key",
        "git",
    }
)
PLACEHOLDER = re.compile(r"(?:host|ip|mac|user|email|secret|serial|uuid|gpu-uuid|guid)-\d{1,9}")


def worth(value: str) -> bool:
    """Whether a value is worth a placeholder: three characters or more, not a word every host has."""
    return len(value) >= 3 and value not in KEEP and value.lower() not in KEEP and not PLACEHOLDER.fullmatch(value)
