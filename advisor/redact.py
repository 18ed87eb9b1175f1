"""Redaction of what a transcript must not carry: host names, IPv4 and IPv6 addresses, MACs, GUIDs,
GPU and other UUIDs, serial numbers, user names, e-mail addresses, tokens, passwords and private keys.

Guarantees: each distinct value maps to one stable placeholder (host-1, secret-2, ...) for the life of
one Redactor, and a value learned anywhere is replaced everywhere (`document` learns from every string
of a transcript before it replaces any, so a host named in a later turn is hidden in earlier ones too).
Values are only learned from their context (a flag, a key, a header, a prompt, a log prefix) or their
own unmistakable shape (a token prefix, an address), so technical words such as formula names, GPU
names and model repositories are left as they are. Redaction is linear in the text's length by
construction: every pattern uses bounded repetition and starts only where its leading character class
begins a run, written with the class first so the regex engine skips to the next possible start; a
pattern runs only on a text holding one of its needles (a cheap prefilter); each pattern's distinct
matches are found in C and judged once, so candidates that hide nothing cost no Python per match; the
values learned so far are found again by one compiled pattern, not word by word.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterator
from typing import Any

_SECRET_KEY = (
    r"(?:token|secret|password|passwd|passphrase|pwd|pass|api[_-]?key|apikey|access[_-]?key|secret[_-]?key"
    r"|private[_-]?key[_-]?id|private[_-]?key|client[_-]?secret|account[_-]?key|shared[_-]?access[_-]?key"
    r"|client[_-]?key[_-]?data|passwort|kennwort|credentials?|auth)"
)
# words that make a key a measured quantity, not a credential (allreduce_bytes_per_token, max_token)
_QUANTITY_WORDS = frozenset(
    "per bytes byte num max min count size len length total avg mean kv prefill decode first last time".split()
)
_HOST_KEY = (
    r"(?:host[ _-]?name|host|hosts|node|nodename|node[_-]name|nodelist|node[_-]list|slurm_nodelist|slurm_job_nodelist"
    r"|slurmd_nodename|master[_-]addr|master[_-]address|head[_-]node|dist[_-]init[_-]addr|node[_-]ip[_-]address"
    r"|rdzv[_-]endpoint|kubernetes\.io/hostname)"
)
_VALUE = r"[\"'`]?([^\s\"'`,;&<>)\]}]{1,4096})"
# between a flag and its value: "--api-key X", "--api-key=X", and a JSON or YAML list's '"--api-key", "X"'
_FLAG_SEP = r"[\"']?(?:=|,?\s{1,8})"
# the vendors' token shapes (each file of tests/data/secrets names the document that gives its shape)
_TOKENS = (
    "hf_[A-Za-z0-9]{20,4096}",
    "sk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,4096}",
    "sk_(?:live|test)_[A-Za-z0-9]{10,4096}",
    "rk_(?:live|test)_[A-Za-z0-9]{10,4096}",
    "gh[pousr]_[A-Za-z0-9]{20,4096}",
    "github_pat_[A-Za-z0-9_]{20,4096}",
    "glpat-[A-Za-z0-9_-]{20,4096}",
    "xox[abprsec]-[A-Za-z0-9-]{10,4096}",
    "xapp-[A-Za-z0-9-]{10,4096}",
    "AKIA[0-9A-Z]{16}",
    "ASIA[0-9A-Z]{16}",
    "AIza[0-9A-Za-z_-]{30,4096}",
    "nvapi-[A-Za-z0-9_-]{20,4096}",
    "npm_[A-Za-z0-9]{30,4096}",
    "pypi-[A-Za-z0-9_-]{40,4096}",
    "dckr_pat_[A-Za-z0-9_-]{20,4096}",
    "wandb_v1_[A-Za-z0-9_-]{20,4096}",
    "ATBB[A-Za-z0-9]{28,4096}",
    "BBDC-[A-Za-z0-9+/@_-]{40,64}",
    r"eyJ[A-Za-z0-9_-]{10,4096}\.[A-Za-z0-9_-]{10,4096}\.[A-Za-z0-9_-]{10,4096}",
)


def _led(first: str, not_before: str) -> str:
    """A pattern's first character class, then the check that the character before it is not in
    `not_before`: written this way round, the class leads the pattern, so the regex engine skips to the
    next character that can start a match instead of trying every position (a leading look-behind
    would make it try them all)."""
    return f"{first}(?<!{not_before}{first})"


def _token_branch(token: str) -> str:
    first = re.escape(token[0])
    return first + f"(?<![A-Za-z0-9_-]{first})" + token[1:]


class Rule:
    """One pattern and what its groups hold: (kind, group) outputs; `key` the group of a key whose
    name decides whether the value is a credential (0: none); the lower-case needles one of which a
    text must contain for the pattern to be worth a scan."""

    __slots__ = ("outputs", "pattern", "needles", "key")

    def __init__(
        self,
        outputs: tuple[tuple[str, int], ...],
        pattern: str,
        needles: tuple[str, ...],
        key: int = 0,
    ) -> None:
        self.outputs, self.pattern, self.needles, self.key = outputs, re.compile(pattern), needles, key


def _rule(kind: str, pattern: str, needles: str, group: int = 1, key: int = 0) -> Rule:
    return Rule(((kind, group),), pattern, tuple(needles.split()), key)


_KEYWORDS = "token secret pass pwd key credential auth"
# secrets first, so a token inside a URL or a header is a secret before it could be read as anything else
RULES: tuple[Rule, ...] = (
    _rule(
        "secret",
        "(" + "|".join(_token_branch(t) for t in _TOKENS) + ")",
        "hf_ sk- sk_live_ sk_test_ rk_live_ rk_test_ ghp_ gho_ ghu_ ghs_ ghr_ github_pat_ glpat- xox xapp- akia asia "
        "aiza nvapi- npm_ pypi- dckr_pat_ wandb_v1_ atbb bbdc- eyj",
    ),
    # user:password@host in a URL (registry, proxy, database): one scan, three values
    Rule(
        (("user", 1), ("secret", 2), ("host", 3)),
        r"://([^\s:/@]{0,200}):([^\s/@]{1,400})@([\w.-]{1,253})",
        ("://",),
    ),
    # a URL's host in a customer's own network (corp, internal, lab, cluster, example ... labels);
    # a public documentation or registry host stays
    _rule("url-host", r"://([A-Za-z0-9][A-Za-z0-9-]{0,62}(?:\.[A-Za-z0-9-]{1,63}){1,8})", "://"),
    _rule(
        "secret", r"hooks\.slack\.com/services/([A-Za-z0-9]{6,16}/[A-Za-z0-9]{6,16}/[A-Za-z0-9]{16,64})", "hooks.slack"
    ),
    # headers: Authorization with any scheme, API key headers
    _rule(
        "secret",
        r"(?i)(?<![\w-])(?:proxy-)?authorization\s{0,8}[:=]\s{0,8}[\"']?(?:Bearer|Basic|token|Digest|Bot)?\s{0,8}"
        r"(?=[A-Za-z]{0,64}[0-9+/=._~-])([^\s\"',;]{6,4096})",
        "authorization",
    ),
    _rule(
        "secret",
        r"(?i)(?<![\w-])(?:Bearer|Basic)\s{1,8}(?=[A-Za-z]{0,64}[0-9+/=._~-])([A-Za-z0-9._~+/=-]{8,4096})",
        "bearer basic",
    ),
    # docker login -u NAME -p SECRET (and --password / --username); the gap stops at the next "docker", so
    # a run of "docker login" scans each character from one start only
    _rule(
        "secret",
        r"(?i)(?<![\w-])docker\s+login\b(?:(?!docker\s)[^\n|;&]){0,200}?\s-p[ =]+[\"']?([^\s\"']{1,4096})",
        "docker",
    ),
    _rule(
        "user",
        r"(?i)(?<![\w-])docker\s+login\b(?:(?!docker\s)[^\n|;&]){0,200}?"
        r"\s(?:-u|--username)[ =]+[\"']?([^\s\"']{1,256})",
        "docker",
    ),
    # database clients: mysql -pSECRET (no space), -u NAME / -U NAME; the gap stops at the next client name
    _rule(
        "secret",
        r"(?<![\w-])mysql(?:dump|admin)?\s(?:(?!mysql)[^\n|;&]){0,200}?\s-p([^\s\"']{1,256})",
        "mysql",
    ),
    _rule(
        "user",
        r"(?<![\w-])(?:mysql|mysqldump|psql|pg_dump|mongosh|mongo|redis-cli)\s(?:(?!mysql|psql)[^\n|;&]){0,200}?"
        r"\s(?:-u|-U)\s{0,4}([A-Za-z_][\w.-]{0,63})",
        "mysql psql pg_dump mongo redis-cli",
    ),
    # curl -u user:password (also as a JSON or YAML list: "-u", "user:password")
    Rule(
        (("user", 1), ("secret", 2)),
        r"(?<![\w-])(?:-u|--user)[\"']?(?:=|,?\s{1,8})[\"']?([^\s:\"'$-][^\s:\"']{0,63}):([^\s\"']{1,256})",
        ("-u", "--user"),
    ),
    # aws configure set aws_secret_access_key VALUE
    _rule(
        "secret",
        r"(?<![\w-])aws\s+configure\s+set\s+((?:[a-z0-9]+_)*(?:secret_access_key|session_token))\s+" + _VALUE,
        "aws",
        group=2,
        key=1,
    ),
    # --api-key X, --token=X, HF_TOKEN=X, "password": "X", api_key: X, ?token=X
    _rule(
        "secret",
        r"(?i)(?<![\w-])--((?:[a-z0-9]+-)*" + _SECRET_KEY + r")" + _FLAG_SEP + _VALUE,
        "--",
        group=2,
        key=1,
    ),
    _rule(
        "secret",
        r"(?<![\w.-])([A-Z][A-Z0-9_]*(?:TOKEN|SECRET|PASSWORD|PASSWD|API_KEY|APIKEY|ACCESS_KEY|SECRET_KEY|CREDENTIALS?))"
        r"\s{0,8}=\s{0,8}" + _VALUE,
        _KEYWORDS,
        group=2,
        key=1,
    ),
    _rule(
        "secret",
        r"(?i)(?<![\w.-])((?:[a-z0-9]+[_.-])*" + _SECRET_KEY + r")[\"']?\s{0,8}[=:]\s{0,8}" + _VALUE,
        _KEYWORDS,
        group=2,
        key=1,
    ),
    # Kubernetes env: - name: HF_TOKEN / value: X
    _rule(
        "secret",
        r"(?i)(?<![\w-])name:\s{0,8}[\"']?((?:[a-z0-9]+_)*" + _SECRET_KEY + r")[\"']?\s{1,80}value:\s{0,8}" + _VALUE,
        "name:",
        group=2,
        key=1,
    ),
    # an image pull Secret's .dockerconfigjson, a docker config's "auth"
    _rule("secret", r"\.docker(?:configjson|cfg)[\"']?\s{0,8}:\s{0,8}" + _VALUE, ".docker"),
    # private-key blocks (BEGIN ... END) are found apart: see Redactor._blocks
    # ~/.netrc: machine HOST login USER password SECRET
    Rule(
        (("host", 1), ("user", 2), ("secret", 3)),
        r"(?<![\w-])machine\s{1,8}([A-Za-z0-9][\w.-]{0,252})\s{1,8}login\s{1,8}(\S{1,64})\s{1,8}password\s{1,8}(\S{1,256})",
        ("machine",),
    ),
    # an Azure SAS URL's signature
    _rule("secret", r"[?&]sig=([A-Za-z0-9%+/=]{16,256})", "sig="),
    # /etc/hosts: an address at the start of a line, then the names it stands for
    Rule(
        (("host", 1), ("host", 2)),
        r"(?m)^(?:\d{1,3}(?:\.\d{1,3}){3}|[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7}(?::\d{1,3}(?:\.\d{1,3}){3})?)"
        r"[ \t]{1,32}"
        r"([A-Za-z][\w.-]{0,252})(?:[ \t]{1,32}([A-Za-z][\w.-]{0,252}))?",
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
        r"(?i)(?<![\w-])(?:Serial Number|Board Part Number|serial|serial_number)\s{0,64}[:=]\s{0,8}"
        r"([A-Za-z0-9-]{6,64})",
        "serial part",
    ),
    # a serial number in prose ("board serial 1654123045999", "S/N 1234567"): a value with a digit only
    _rule(
        "serial",
        r"(?i)(?<![\w-])(?:serial(?: number)?|s/n)\s{1,8}(?=[A-Za-z-]{0,40}\d)([A-Za-z0-9-]{6,64})(?![\w-])",
        "serial s/n",
    ),
    _rule("serial", r"(?i)<(?:serial|board_part_number)>\s{0,8}([A-Za-z0-9-]{4,64})\s{0,8}</", "<serial <board_part"),
    _rule("guid", r"(?i)(?<![\w-])(?:node|port|system image|sys_image)[ _]guid\s*[:=]?\s*(0x[0-9a-f]{16})", "guid"),
    _rule(
        "mac",
        "(" + _led("[0-9a-fA-F]", "[0-9A-Fa-f:-]") + r"[0-9a-fA-F](?:[:-][0-9a-fA-F]{2}){5})(?![0-9A-Fa-f:-])",
        ": -",
    ),
    _rule(
        "ip",
        "(" + _led("[0-9]", r"[\d.]") + r"[0-9]{0,2}(?:\.[0-9]{1,3}){3})(?!\.?\d)",
        ".",
    ),
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
        r"(?<![\w-])(?:--user(?:name)?[= ]|(?:USER|LOGNAME|SUDO_USER)=|sudo\s+-u\s+)[\"']?"
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
        r"(?m)^\s{0,16}(?:-\s{1,4})?[\"']?(?:[A-Z][A-Z0-9]{0,30}_USER(?:NAME)?|user(?:name)?)[\"']?\s{0,8}:\s{0,8}"
        r"[\"']?([A-Za-z_][A-Za-z0-9_.-]{1,31})[\"']?,?\s*$",
        "user",
    ),
    _rule("host", r"\bPid\s+\d+\s+on\s+([A-Za-z0-9][\w.-]{0,252})\s+device", "pid"),
    # NCCL's line prefix: host:pid:tid [local rank] NCCL INFO ...
    _rule("host", r"(?<![\w.-])([A-Za-z][\w.-]{0,252}):\d+:\d+\s{1,4}\[\d+\]\s{0,4}NCCL", "nccl"),
    _rule("host", r"(?m)^\s{0,8}([A-Za-z][\w.-]{0,252})\s+slots\s*=\s*\d+", "slots"),
    # ssh NAME: only a name with a digit, a dot or a dash (ssh into ... is prose)
    _rule("ssh-host", r"(?<![\w-])ssh\s+(?:-[A-Za-z]\s+\S+\s+){0,4}([A-Za-z][\w.-]{0,252})(?![\w@.-])", "ssh"),
    # a node named in prose ("on node gpu-a17 the card", "auf dem Knoten gpu-c09"): only a name with a
    # digit and a dash or dot, so "the host H100" or "a node with 8 GPUs" stay as they are
    _rule(
        "host",
        r"(?i)(?<![\w-])(?:node|host|server|machine|box|knoten|rechner|maschine)\s{1,4}"
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
        r"(?i)(?<![\w.-])" + _HOST_KEY + r"[\"']?(?:=|\s{0,8}:\s{0,8})[\"']?([A-Za-z][\w.\[\],-]{0,252})",
        "host node master head dist kubernetes rdzv",
    ),
    # compose extra_hosts ("name:10.0.0.2") and docker --add-host name:address
    _rule(
        "host",
        r"(?m)(?:^\s{0,16}-\s{0,4}[\"']?|--add-host[= ][\"']?)([A-Za-z][\w.-]{0,252})"
        r":(?:\d{1,3}\.){3}\d{1,3}[\"']?\s*$",
        ":",
    ),
    # Kubernetes hostAliases: hostnames: ["name", ...]
    _rule("host", r"hostnames:\s{0,8}\[?\s{0,8}[\"']?([A-Za-z][\w.-]{0,252})", "hostnames"),
    # a registry under a docker config's "auths": "registry.example.com": { "auth": ...
    _rule(
        "host",
        r"\"(?:https?://)?([A-Za-z0-9][A-Za-z0-9.-]{0,252})(?::\d{1,5})?(?:/[^\"\s]{0,200})?\"\s{0,8}:\s{0,8}\{\s{0,80}\"auth\"",
        '"auth"',
    ),
)
# a URL host is hidden when one of its labels says it is a customer's own network
_INTERNAL_LABELS = frozenset(
    "corp internal intranet intra local lan lab cluster svc example test invalid localdomain home".split()
)
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
PLACEHOLDER = re.compile(r"(?:host|ip|mac|user|email|secret|serial|uuid|gpu-uuid|guid)-\d+")
_BEGIN = re.compile(r"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY( BLOCK)?-----")
_PRIVATE_END = re.compile(r"-----END [A-Z0-9 ]{0,40}PRIVATE KEY( BLOCK)?-----")
# the placeholder kind of a pattern kind (IPv6 addresses are ip-N like IPv4)
_KIND = {"ip6": "ip", "ssh-host": "host", "url-host": "host"}
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

    def _blocks(self, text: str) -> list[tuple[int, int]]:
        """(start, end) of each private-key block: from its BEGIN line to its END line, or to the end."""
        out: list[tuple[int, int]] = []
        if "private key" not in text.lower():
            return out
        for m in _BEGIN.finditer(text):
            self.steps += 1
            if out and m.start() < out[-1][1]:
                continue  # a BEGIN inside a block already taken is not another block
            end = _PRIVATE_END.search(text, m.end())
            out.append((m.start(), end.end() if end else len(text)))
        return out

    def _judged(self, text: str) -> Iterator[tuple[Rule, dict[Any, tuple[tuple[int, int, str, str], ...]]]]:
        """Each rule whose matches in `text` hide a value, with what each distinct match hides.

        The distinct matches are found in C (`findall`) and judged once each: a text made of candidates
        that hide nothing, or of one value repeated, costs no Python per match."""
        low = text.lower()
        for rule in RULES:
            if not any(n in low for n in rule.needles):
                continue  # the cheap prefilter: most texts skip most patterns
            self.steps += 1
            found = rule.pattern.findall(text)
            self.steps += len(found)
            # in the order of first appearance: placeholders are numbered the same on every run
            judged = {f: self._judge(rule, f) for f in dict.fromkeys(found)}
            if any(judged.values()):
                yield rule, judged

    def _judge(self, rule: Rule, found: str | tuple[str, ...]) -> tuple[tuple[int, int, str, str], ...]:
        """(group, offset, placeholder kind, text) of the values one match of `rule` hides."""
        groups = found if isinstance(found, tuple) else (found,)
        key = groups[rule.key - 1] if rule.key else None
        out = []
        for kind, group in rule.outputs:
            value = groups[group - 1]
            if value:
                out += [(group, offset, _KIND.get(kind, kind), part) for offset, part in self._pieces(kind, value, key)]
        return tuple(out)

    def _pieces(self, kind: str, value: str, key: str | None) -> tuple[tuple[int, str], ...]:
        """The (offset, text) of the values to hide in one matched value."""
        if key is not None and (not _credential_key(key) or _NUMBER.fullmatch(value)):
            return ()  # a quantity (time per token: 35.2), not a credential
        if value.startswith(("$", "-----")):
            return ()  # a shell variable ($HF_TOKEN) or a PEM armour line: the block rule takes the key
        if kind == "ip" and any(int(octet) > 255 for octet in value.split(".")):
            return ()  # a version (570.133.20.1), not an address
        if kind == "ip6" and not _ipv6(value):
            return ()
        if kind == "ssh-host" and not re.search(r"[\d.-]", value):
            return ()  # ssh into the node: prose, not a host
        if kind == "url-host" and not _INTERNAL_LABELS.intersection(value.lower().split(".")):
            return ()  # a public host (documentation, a registry)
        if "host" not in kind:
            return ((0, value),) if self._worth(value) and value.lower() not in _PUBLIC_HOSTS else ()
        out = []
        for piece in re.finditer(r"[^,]+", value):
            part = piece.group(0).rstrip(":.")
            if self._worth(part) and part.lower() not in _PUBLIC_HOSTS:
                out.append((piece.start(), part))
        return tuple(out)

    def learn(self, text: str) -> None:
        """Allocate placeholders for the sensitive values in `text` without changing it (no positions
        needed: only the distinct values of each pattern's matches)."""
        for start, end in self._blocks(text):
            self.placeholder("secret", text[start:end])
        for _rule, judged in self._judged(text):
            for parts in judged.values():
                for _group, _offset, kind, part in parts:
                    self.placeholder(kind, part)

    def text(self, text: str) -> str:
        """`text` with every sensitive value replaced; a value learned anywhere is replaced everywhere."""
        # (start, -end, placeholder): sorted as they are, the longest value at a start comes first
        spans = [(s, -e, self.placeholder("secret", text[s:e])) for s, e in self._blocks(text)]
        for rule, judged in self._judged(text):
            named = {
                f: tuple((group, at, self.placeholder(kind, part), len(part)) for group, at, kind, part in parts)
                for f, parts in judged.items()
            }
            many = rule.pattern.groups > 1
            for m in rule.pattern.finditer(text):
                for group, offset, name, length in named[m.groups("") if many else (m.group(1) or "")]:
                    start = m.start(group) + offset
                    spans.append((start, -start - length, name))
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
        mapping = self.mapping
        if index.pattern is not None:  # the usual case: a few thousand values at most, one scan in C
            out = [(m.start(), m.end(), mapping[m.group(0)]) for m in index.pattern.finditer(text)]
            self.steps += 1 + len(out)
        # the spans inside one word depend on the word alone: a text of repeated words looks each up once
        memo: dict[str, list[tuple[int, int, str]]] = {}
        for run in _RUN.finditer(text) if index.first and index.pattern is None else ():
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
_PATTERN_VALUES = 2000
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
        # the clean values as one pattern, each led by its first character (so the engine skips to where a
        # value can start) and bounded like a word run's pieces; too many values: the lookups above
        odd = set(self.odd)
        clean = sorted((v for v in mapping if v not in odd), key=lambda v: (-len(v), v))
        self.pattern: re.Pattern[str] | None = None
        if clean and len(clean) <= _PATTERN_VALUES:
            branches = (re.escape(v[0]) + f"(?<![A-Za-z0-9_-]{re.escape(v[0])})" + re.escape(v[1:]) for v in clean)
            self.pattern = re.compile("(?:" + "|".join(branches) + ")(?![A-Za-z0-9_-])")


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
