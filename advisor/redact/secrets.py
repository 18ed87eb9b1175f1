"""Where the secrets of a text are: by the name that holds them, by their structure, by their randomness.

Names, in every syntax customers paste: `NAME=value` (env, shell, INI, connection strings, URL queries),
`name: value` (YAML, headers, prose), `"name": "value"` (JSON, Python), `--name value` / `--name=value`
(command lines), name/value pairs (Kubernetes env, ECS, NuGet), commands whose options take a password
(sshpass -p, redis-cli -a, mysql -pSECRET, docker login -p), and prose ("the password is ...", "das
Passwort lautet ..."). Structure: URL user-info, authentication schemes, JWTs, private-key blocks (see
blocks.py). Randomness: a token no name vouches for (values.random_token), and vendors' prefixes.

Guarantees: no pattern here can match a line end, every repeat is bounded, and each pattern is led by its
first character class so that a search starts only where a match can; a match is judged by its name once
per distinct name. The spans returned are (start, end) of the values to hide, never of the names.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterable, Iterator
from functools import lru_cache

from advisor.redact import blocks, forms, structures
from advisor.redact.names import public, strength, words
from advisor.redact.values import digest, number, password_like, path, random_token, reference, secret_looking
from advisor.redact.vocabulary import Call, Command, Prefix, SafeNames, public_host, vocabulary

Span = tuple[int, int]

_QUOTED = r"\"(?:[^\"\\\n]|\\[^\n]){0,4096}\"|'[^'\n]{0,4096}'|`[^`\n]{0,4096}`"
_BARE = r"[^\s\"'`,;&|<>(){}\[\]]{1,4096}"
# JSON inside a JSON string (a log's "msg": "{\"password\": \"x\"}"): the quotes escaped
ESCAPED_ASSIGNMENT = re.compile(
    r'\\"([A-Za-z_][\w.-]{0,127})\\"[ \t]{0,8}:[ \t]{0,8}\\"((?:[^"\\\n]|\\[^"\n]){1,4096})\\"'
)
# <password>x</password>, <ns:ClientSecret>x</ns:ClientSecret>
XML_ELEMENT = re.compile(r"<([A-Za-z_][\w:.-]{0,63})>([^<\n]{1,4096})</\1>")
# a YAML key with no value of its own, its list on the lines below (api_keys:\n  - sk-...)
LIST_KEY = re.compile(r"(?m)^[ \t]{0,32}(?:-[ \t]{1,4})?([A-Za-z_][\w.-]{0,127}):[ \t]{0,8}$")
# ~/.pgpass: host:port:database:user:password
PGPASS = re.compile(
    r"(?m)^[ \t]{0,8}[\w.*-]{1,253}:(?:\d{1,5}|\*):[^:\s]{1,128}:[^:\s]{1,128}:((?:[^\s:\\]|\\[^\n]){1,512})[ \t]{0,8}$"
)
# a password hash in crypt(3) form ($1$, $2b$, $5$, $6$, $y$ yescrypt, $argon2id$, $scrypt$): /etc/shadow,
# htpasswd, a database's user table; offline it gives the password, so it is hidden like one
CRYPT = re.compile(
    r"(?<![\w$])(\$(?:1|2[abxy]?|5|6|7|y|gy|apr1|P|H|argon2(?:id|i|d)|scrypt|pbkdf2(?:-sha(?:1|256|512))?)\$[^\s:\"']{8,512})"
)
# Django's and Werkzeug's password hashes: algorithm$iterations$salt$hash (auth_user.password)
FRAMEWORK_HASH = re.compile(
    r"(?<![\w$])((?:pbkdf2_sha(?:1|256)|bcrypt_sha256|argon2|scrypt|pbkdf2:sha(?:1|256|512)(?::\d{1,7})?)"
    r"\$[^\s:\"']{16,512})"
)
# a Solana keypair file: a JSON array of the 64 bytes of an ed25519 secret and public key
BYTE_ARRAY_KEY = re.compile(r"(\[[ \t]{0,2}(?:\d{1,3}[ \t]{0,2},[ \t]{0,2}){63}\d{1,3}[ \t]{0,2}\])")
# user:password with a strong password (capitals, small letters, digits, a symbol), wherever it stands:
# BUNDLE_GEMS__HOST=user:pass, --user root:pass
BASIC_PAIR = re.compile(r"(?<![\w:/@])[\w.@-]{1,64}:([^\s:@/\"',;]{8,128})(?![\w@/:])")
# MySQL's mysql_native_password hash: '*' and 40 hexadecimal capitals (mysql.user's authentication_string)
MYSQL_HASH = re.compile(r"(?<![\w*])(\*[0-9A-F]{40})(?![\w])")
# Redis: ACL SETUSER name on >password ~keys +@cmds
REDIS_ACL = re.compile(r"(?i)\bACL[ \t]{1,4}SETUSER\b[^\n]{0,200}?[ \t]>([^\s]{1,256})")
# a configuration line `name value` (nslcd's bindpw, msmtprc's password, radius secret): the name at the line's
# start, one or more spaces, the rest of the line its value (up to a comment: " #" after a space)
CONFIG_LINE = re.compile(r"(?m)^[ \t]{0,32}([A-Za-z_][\w.-]{1,63})[ \t]{1,16}([^\s=:#\\{\[(\"'][^\n]{0,511})$")
_COMMENT = re.compile(r"[ \t]#")
_OPTION_WORDS = re.compile(r"(?:--?[a-z][\w-]{0,31}[ \t]{1,4}){1,4}")  # kickstart's rootpw --plaintext X
# a login that is an e-mail address and its secret after a colon (postfix sasl_passwd, .git-credentials maps,
# `user@example.com:password` in a paste)
LOGIN_SECRET = re.compile(r"(?<![\w.+-])[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63}){1,8}:([^\s:@\"'<>]{8,512})")
_BLOCK = r"[|>][-+]?(?=[ \t]{0,64}(?:\n|$))"  # a YAML block scalar's indicator: the value is on the next lines
# "name": "value", 'name' => value, os.environ["NAME"] = value: a quoted name, any operator
QUOTED_ASSIGNMENT = re.compile(
    r"([\"'`])([A-Za-z_][\w .$-]{0,127})\1\]?([ \t]{0,64})(:=|=>|=|:)([ \t]{0,64})("
    + _QUOTED
    + "|"
    + _BLOCK
    + "|"
    + _BARE
    + ")"
)
# NAME=value, NAME: value, name = value, name => value: a bare name; a colon only before a space or a quote
# (user:password, host:port and https:// are not assignments)
BARE_ASSIGNMENT = re.compile(
    r"([A-Za-z_](?<![\w.-][A-Za-z_])[\w.-]{0,127})\]?([ \t]{0,64})(:=|=>|=|:(?=[ \t\"'`]|$))([ \t]{0,64})"
    r"(" + _QUOTED + "|" + _BLOCK + "|" + _BARE + ")",
    re.M,
)
# --name value, --name=value, -Dname=value, and a JSON or YAML list's "--name", "value"
FLAG = re.compile(
    r"-(?<![\w-]-)(-?)([A-Za-z][\w.-]{0,63})(=|[ \t]{1,8}|[\"'][ \t]{0,4},[ \t]{0,4})(?!-)("
    + _QUOTED
    + "|"
    + _BARE
    + ")"
)
# an authentication scheme and its credentials, wherever they stand (Bearer eyJ..., Basic dXNlcjpw...)
SCHEME = re.compile(r"(?i)(?<![\w-])(?:bearer|basic|token|bot)[ \t]{1,8}([A-Za-z0-9._~+/=-]{8,4096})")
# scheme://user:password@host, scheme://token@host
USERINFO = re.compile(r"[A-Za-z](?<![\w+.-][A-Za-z])[\w+.-]{1,20}://([^\s:/@\"'<>]{0,256})(?::([^\s/@\"'<>]{0,512}))?@")
# a run of token characters: vendors' prefixes, JWTs, random tokens
RUN = re.compile(r"[A-Za-z0-9_+/.~$-](?<![A-Za-z0-9_+/.~$-][A-Za-z0-9_+/.~$-])[A-Za-z0-9_+/.~$-]{11,4095}={0,2}")
# "the password is X", "Passwort lautet X", "token: X" in prose; the value is judged by password_like
PROSE = re.compile(
    r"(?i)(?<![\w])(passwor[dt]s?|kennwort|passphrase|pw|pwd|token|api[ -]?key|api-schlüssel|secret|key|schlüssel"
    r"|zugangsdaten|credentials?|identified by)[)\]]?"
    r"((?:[ \t]{1,4}(?:is|was|ist|lautet|war|wäre|heißt|è|é|est|now|set|to|still|noch"
    r"|immer|here|hier|it's|=|->|→)){0,3})[ \t]{0,4}[:=]?[ \t]{1,4}"
    r"(\"[^\"\n]{1,256}\"|'[^'\n]{1,256}'|`[^`\n]{1,256}`|„[^“”\n]{1,256}[“”]|»[^«\n]{1,256}«|«[^»\n]{1,256}»"
    r"|[^\s\"'`„»«]{4,256})"
)
# a netrc's "password SECRET" on a line of its own
NETRC = re.compile(r"(?m)^[ \t]{0,32}(?:password|passwd|account)[ \t]{1,8}([^\s]{1,512})[ \t]{0,8}$")
# docs.x.com/y: an address ends in a top-level domain of letters (Mistral.661pine_EFQS does not)
_ADDRESS = re.compile(
    r"[(\[]?(?:https?://)?[\w-]{1,63}(?:\.[\w-]{1,63}){0,7}\.[A-Za-z]{2,24}(?::\d{1,5})?(?:/[^\s]{0,256})?"
)
_SINGLE_DASH = re.compile(r"[a-z][a-z_.-]{1,63}")  # -password, -storepass: a name, not a letter and a value
# a quoted string or a short option's value shaped like a strong password: capitals, small letters, digits
# and a symbol, no path, no URL ('Ld4pBind!Orion#552', -w 'Htp@ssw0rd-Maple93')
QUOTED = re.compile(r"(?<![\w])([\"'])([^\s\"'/:<>{}]{8,128})\1|(?<![\w-])-[A-Za-z][ \t]{1,4}([^\s\"'/:<>{}]{8,128})")
_STRONG_SYMBOLS = frozenset("!@#$%^&*?~")
# a webhook's URL: the path after the part that names the hook carries its secret
WEBHOOK = re.compile(r"https?://([A-Za-z0-9.-]{1,253})(?::\d{1,5})?(/[^\s\"'<>()]{1,2048})")
_PATH_WORD = re.compile(r"[\w-]{8,512}")
_TOKEN = re.compile(r"(?:[^\s\"'|;&]|\"[^\"\n]{0,4096}\"|'[^'\n]{0,4096}'){1,64}")
_SEPARATOR = re.compile(r"[|;&\n]|$")
_TRAILING = ".,;:!?)]}'\"`“”»«"
_PROSE_STRONG = ("passw", "kennwort", "passphrase", "pw", "zugangsdaten", "credential", "identified")


def find(text: str, safe: SafeNames) -> Iterator[Span]:
    """The spans of every secret in `text`."""
    yield from blocks.find(text)
    yield from _assignments(text, safe)
    yield from _flags(text, safe)
    yield from _schemes(text)
    yield from _userinfo(text)
    yield from _commands(text)
    yield from forms.find(text)
    yield from structures.find(text)
    yield from _prose(text, safe)
    yield from _runs(text, safe)
    if any(q in text for q in "\"'-"):
        yield from _strong_passwords(text)
    if "hook" in text.lower():
        yield from _webhooks(text)
    if "://" in text:
        yield from _capability_paths(text)
    for m in NETRC.finditer(text):
        if not reference(m.group(1)):
            yield m.span(1)
    yield from _nested(text, safe)


def _nested(text: str, safe: SafeNames) -> Iterator[Span]:
    """Names that hold their value in other forms, and structures that are secret by themselves: escaped
    JSON in a string, an XML element, a YAML list under a credential key, a crypt(3) hash, Redis ACL
    passwords, `name value` configuration lines, an e-mail login's secret, a pgpass line."""
    for present, finder in _NESTED:
        if present(text):
            yield from finder(text, safe)


# a typed declaration in code: const KEY: &str = "...", val token: String = "...", let key: string = '...'
TYPED_ASSIGNMENT = re.compile(
    r"(?<![\w.])([A-Za-z_]\w{0,127})[ \t]{0,4}:[ \t]{0,4}&?(?:'static[ \t]{1,4})?[A-Za-z_][\w.]{0,40}"
    r"(?:<[\w, ]{0,40}>)?\??[ \t]{0,4}=[ \t]{0,4}([\"'])([^\"'\n]{3,4096})\2"
)


# NAME = \"value\" inside a JSON string (a notebook's source line, a logged command)
ESCAPED_BARE = re.compile(
    r'(?<![\w.-])([A-Za-z_][\w.-]{0,127})[ \t]{0,8}=[ \t]{0,8}\\"((?:[^"\\\n]|\\[^"\n]){1,4096})\\"'
)


def _named_by(pattern: re.Pattern[str], value: int) -> Callable[[str, SafeNames], Iterator[Span]]:
    """The values of a pattern's matches whose first group names a credential and which are hidden under
    it (escaped JSON, typed declarations, NAME = \\"v\\" in a JSON string)."""

    def found(text: str, safe: SafeNames) -> Iterator[Span]:
        for m in pattern.finditer(text):
            level = strength(m.group(1))
            if level is not None and hidden(m.group(value), level, safe):
                yield m.span(value)

    return found


def _basic_pairs(text: str) -> Iterator[Span]:
    for m in BASIC_PAIR.finditer(text):
        if strong_password(m.group(1)):
            yield m.span(1)


def _xml_elements(text: str, safe: SafeNames) -> Iterator[Span]:
    """<password>X</password>, and a property's value named by its sibling: Hadoop's and Hive's
    <name>javax.jdo.option.ConnectionPassword</name><value>X</value>, web.xml's param-name/param-value."""
    names = vocabulary().names
    pair_names, pair_values = frozenset(names.pair_names), frozenset(names.pair_values)
    pending, pending_level = -1, "strong"
    for m in XML_ELEMENT.finditer(text):
        element = m.group(1).rsplit(":", 1)[-1].lower()
        inner = m.group(2).strip()
        if element in pair_names or element.endswith("-name"):
            level_of_name = strength(inner)
            pending, pending_level = (m.end() + 400, level_of_name) if level_of_name else (-1, "strong")
            continue
        if (element in pair_values or element.endswith("-value")) and m.start() <= pending:
            pending = -1
            if not path(inner) and hidden(inner, pending_level, safe):
                yield m.span(2)
            continue
        level = strength(element)
        if level is not None and hidden(inner, level, safe):
            yield m.span(2)


def _list_values(text: str, safe: SafeNames) -> Iterator[Span]:
    for m in LIST_KEY.finditer(text):
        if strength(m.group(1)) in ("strong", "medium"):
            for a, b in blocks.list_items(text, m.start(1), m.end()):
                item = text[a:b]  # compose's `secrets: [- db_password]` names them, letters only
                if not (_names_a_credential(item) and not any(c.isdigit() for c in item)):
                    yield a, b


def _spans_of(pattern: re.Pattern[str], placeholder: bool = False) -> Callable[[str, SafeNames], Iterator[Span]]:
    """Every match's first group: a structure that is secret whatever names it (with `placeholder`, not one
    that shows where the secret goes: $6$rounds=5000$placeholder$<hash-from-vault>)."""

    def found(text: str, _safe: SafeNames) -> Iterator[Span]:
        for m in pattern.finditer(text):
            if placeholder and ("<" in m.group(1) or "placeholder" in m.group(1).lower()):
                continue
            yield m.span(1)

    return found


def _config_lines(text: str, _safe: SafeNames) -> Iterator[Span]:
    for m in CONFIG_LINE.finditer(text):
        if strength(m.group(1)) != "strong":
            continue
        value, at = m.group(2), m.start(2)
        comment = _COMMENT.search(value)
        value = (value[: comment.start()] if comment else value).rstrip()
        options = _OPTION_WORDS.match(value)
        if options and options.end() < len(value):  # rootpw --iscrypted $6$..., rootpw --plaintext X
            value, at = value[options.end() :], at + options.end()
        if reference(value) or path(value) or value.lower() in _not_values():
            continue
        words_ = value.split()
        spoken = len(words_) > 1 and (len(words_) > 6 or any(w.lower() in _prose_words() for w in words_))
        if not spoken:  # "password required for root" is a sentence; "faou opds hbnt woof" an app password
            yield at, at + len(value)


def _login_secrets(text: str, _safe: SafeNames) -> Iterator[Span]:
    for m in LOGIN_SECRET.finditer(text):
        value = m.group(1)
        if not number(value) and not reference(value) and not path(value) and secret_looking(value):
            yield m.span(1)


def _pgpass(text: str, _safe: SafeNames) -> Iterator[Span]:
    for m in PGPASS.finditer(text):
        if not reference(m.group(1)) and not m.group(1).isdigit():
            yield m.span(1)


# (cheap test that the text can hold it, finder): each finder scans only texts that pass its test
_NESTED: tuple[tuple[Callable[[str], bool], Callable[[str, SafeNames], Iterator[Span]]], ...] = (
    (lambda t: '\\"' in t, _named_by(ESCAPED_ASSIGNMENT, 2)),
    (lambda t: "</" in t, _xml_elements),
    (lambda t: ":\n" in t, _list_values),
    (lambda t: "$" in t, _spans_of(CRYPT, placeholder=True)),
    (lambda t: "SETUSER" in t or "setuser" in t, _spans_of(REDIS_ACL)),
    (lambda t: "*" in t, _spans_of(MYSQL_HASH)),
    (lambda t: "$" in t, _spans_of(FRAMEWORK_HASH)),
    (lambda t: "[" in t, _spans_of(BYTE_ARRAY_KEY)),
    (lambda t: ":" in t, lambda t, _safe: _basic_pairs(t)),
    (lambda t: '\\"' in t, _named_by(ESCAPED_BARE, 2)),
    (lambda t: ":" in t and "=" in t, _named_by(TYPED_ASSIGNMENT, 3)),
    (lambda t: "(" in t, lambda t, safe: _calls(t, safe)),
    (lambda t: "(" in t and "," in t, lambda t, safe: _named_arguments(t, safe)),
    (lambda t: True, _config_lines),
    (lambda t: "@" in t and ":" in t, _login_secrets),
    (lambda t: t.count(":") >= 4, _pgpass),
)


def _unquote(value: str, start: int) -> tuple[str, int]:
    """A value without its quotes, and where it starts."""
    if len(value) >= 2 and value[0] in "\"'`" and value[-1] == value[0]:
        return value[1:-1], start + 1
    return value, start


def hidden(value: str, level: str, safe: SafeNames) -> bool:
    """Whether a value under a credential name of `level` is a secret to hide."""
    v = value.strip()
    if len(v) < 3 or slot(v) or v.lower() in _not_values() or _SPEC.fullmatch(v):
        return False  # _SPEC: --secret id=hf_token,env=HF_TOKEN names where a secret comes from
    if v.lower() in safe.names or public_token(v):
        return False
    if level == "strong":
        return True
    if _plain_url(v):
        return False  # doctrine://default?auto_setup=0: a connection string without user-info or password
    if level == "medium":
        # CLOUDSMITH_API_KEY=<40 hex>: under a credential's name hex is the key, unless it says it is a digest
        return not number(v) and not digest(v)
    return not digest(v) and secret_looking(v)


# BuildKit's secret and ssh mount options (docker buildx build --secret id=hf,env=HF_TOKEN): where a secret
# comes from, not the secret; a key outside them (b=FzN4...) is a password holding "="
_SPEC_KEYS = r"(?:id|env|src|source|type|target|dst|destination|required|mode|uid|gid)"
_SPEC = re.compile(_SPEC_KEYS + r"=[^,=\s]{1,256}(?:," + _SPEC_KEYS + r"=[^,=\s]{1,256}){0,16}")


def not_values() -> frozenset[str]:
    """The values that are switches, placeholders or scheme words, lower-cased: never a secret to seek."""
    return _not_values()


POINTER_WORDS = frozenset({"existing", "ref", "key", "name", "secretref"})  # a setting that names a secret
_SLUG = re.compile(r"[a-z][a-z0-9]{1,30}(?:[-_.][a-z][a-z0-9]{0,30}){1,6}")


def _names_a_credential(value: str) -> bool:
    """A lower-case slug of words whose own words name a credential (hf-secret, gateway-token,
    db-password-ref): the name of a Kubernetes Secret or of a key inside one, which a setting points to."""
    return _SLUG.fullmatch(value) is not None and strength(value) is not None


@lru_cache(maxsize=1)
def _not_values() -> frozenset[str]:
    names = vocabulary().names
    return frozenset(v.lower() for v in (*names.not_values, *names.schemes))


class _Assignment:
    """One `name op value` match, the same for quoted and bare names (made only for names that matter)."""

    __slots__ = ("match", "name", "pad_before", "op", "pad_after", "value", "quoted_name")

    def __init__(self, m: re.Match[str], quoted: bool) -> None:
        base = 1 if quoted else 0
        self.match, self.quoted_name = m, quoted
        self.name = m.group(base + 1)
        self.pad_before, self.op, self.pad_after = m.group(base + 2), m.group(base + 3), m.group(base + 4)
        self.value = base + 5  # the value's group


def _assignments(text: str, safe: SafeNames) -> Iterator[Span]:
    for pattern, quoted in ((QUOTED_ASSIGNMENT, True), (BARE_ASSIGNMENT, False)):
        yield from _assignments_of(pattern, quoted, text, safe)


NESTED_DEPTH = 2  # Environment="NAME=value", "see: https://host/?token=x": a value that holds assignments


def _inner(
    pattern: re.Pattern[str], quoted: bool, text: str, m: re.Match[str], group: int, safe: SafeNames, depth: int
) -> Iterator[Span]:
    """The secrets of the assignments inside a value that is no credential's (a systemd Environment= line,
    a URL's query after 'see:'), at their places in `text`."""
    value = m.group(group)
    if depth >= NESTED_DEPTH or len(value) < 5 or ("=" not in value and ": " not in value):
        return
    in_quotes = len(value) >= 2 and value[0] in "\"'`" and value[-1] == value[0]
    inner, offset = (value[1:-1], m.start(group) + 1) if in_quotes else (value, m.start(group))
    for start, end in _assignments_of(pattern, quoted, inner, safe, depth + 1):
        yield offset + start, offset + end


def _assignments_of(
    pattern: re.Pattern[str], quoted: bool, text: str, safe: SafeNames, depth: int = 0
) -> Iterator[Span]:
    """The secrets of one kind of assignment; a name/value pair's value (name: HF_TOKEN ... value: X) is
    taken within 400 characters of its name; a value that is no credential's is read for the assignments
    it holds (NESTED_DEPTH deep)."""
    names = vocabulary().names
    pair_names, pair_values = frozenset(names.pair_names), frozenset(names.pair_values)
    inherit = frozenset(names.inherit)
    name_group, value_group = (2, 6) if quoted else (1, 5)
    pending = -1
    templates = _Templates(text)
    for m in pattern.finditer(text):
        if templates.inside(m.start()):
            continue  # {{ lookup('hashi_vault', 'secret=kv/data/bmc:password') }}: a template's reference
        name = m.group(name_group)
        low = name.lower()
        if low in inherit:
            name = parent_name(text, m.start()) or name
        level = strength(name)
        if level is None and low not in pair_names and low not in pair_values:
            # the usual case: a name that is no credential, judged once per distinct name (cached)
            yield from _inner(pattern, quoted, text, m, value_group, safe, depth)
            continue
        raw, start = _unquote(m.group(value_group), m.start(value_group))
        if low in pair_values and m.start() <= pending:
            yield from _pair_value(raw, start)
            pending = -1
            continue
        if low in pair_names:
            # the next value field is this name's; a name that is no credential ends the one before
            pending = m.end() + 400 if strength(raw) in ("strong", "medium") else -1
            if level is None:
                continue
        if level is None:
            yield from _inner(pattern, quoted, text, m, value_group, safe, depth)
        elif not _quantity_before(text, m.start()) and not _PUBLIC_BEFORE.search(
            text, max(0, m.start() - 8), m.start()
        ):
            if level == "weak" and _qualified_by_parent(text, m.start()):
                level = "medium"  # 'crypt' => ['key' => '<32 hex>']: Magento's encryption key
            yield from _assigned(text, _Assignment(m, quoted), raw, start, level, safe)


class _Templates:
    """The {{ ... }} template expressions of a text (Jinja, Helm, Go templates), found once, each on its line;
    one pass over the text (each search starts where the last one ended, each line's end is found once)."""

    def __init__(self, text: str) -> None:
        self.spans: list[tuple[int, int]] = []
        pos, line_end = 0, -1
        while True:
            a = text.find("{{", pos)
            if a < 0:
                break
            if a > line_end:
                nl = text.find("\n", a)
                line_end = len(text) if nl < 0 else nl
            b = text.find("}}", a + 2, line_end)
            if b < 0:
                pos = line_end + 1  # no closing on this line
                continue
            self.spans.append((a, b + 2))
            pos = b + 2
        self.starts = [a for a, _b in self.spans]

    def inside(self, at: int) -> bool:
        """Whether `at` stands inside one of them."""
        if not self.spans:
            return False
        i = bisect.bisect_right(self.starts, at) - 1
        return i >= 0 and at < self.spans[i][1]


def _pair_value(raw: str, start: int) -> Iterator[Span]:
    """The secret of a name/value pair's value field (name: HF_TOKEN ... value: X)."""
    if not reference(raw) and not path(raw) and len(raw) >= 3:
        inside = _secrets_inside(raw, start)
        yield from ((start, start + len(raw)),) if inside is None else inside


def _qualified_by_parent(text: str, at: int) -> bool:
    """Whether the key above a bare `key` or `pass` qualifies it (crypt: key:, smtp: pass:)."""
    parent = parent_name(text, at)
    if parent is None:
        return False
    names, found = vocabulary().names, words(parent)
    return any(w in names.qualifiers for w in found) and not any(w in names.neutral for w in found)


def _quantity_before(text: str, start: int) -> bool:
    """Whether the word before a name makes it a quantity in prose: "time per token: 35 ms", "max key: 4"."""
    before = text[max(0, start - 24) : start]
    before = before[before.rfind("\n") + 1 :].rstrip(" \t\"'")
    word = before.rsplit(" ", 1)[-1].lower() if before else ""
    return bool(word) and word in _quantities()


@lru_cache(maxsize=1)
def _quantities() -> frozenset[str]:
    return frozenset(vocabulary().names.quantities)


def _assigned(text: str, a: _Assignment, raw: str, start: int, level: str, safe: SafeNames) -> Iterator[Span]:
    """The secret of one credential assignment: its value, the rest of the line for `name: two words`
    and INI's `name = two words`, a YAML block scalar's lines, an authentication scheme's credentials."""
    m = a.match
    quoted = m.group(a.value)[:1] in "\"'`"
    spaced = a.op == ":" or (a.pad_before and a.pad_after)
    if raw in ("|", "|-", "|+", ">", ">-", ">+"):
        yield from blocks.scalar(text, m.start(), m.end())
        return
    if not quoted and spaced:
        raw = _rest_of_line(text, start, "" if a.quoted_name else text[m.start() - 1 : m.start()])
    if a.name.lower() in ("cookie", "set-cookie") and "=" in raw:
        yield from _cookie_pairs(raw, start, safe)
        return
    scheme = _scheme_of(raw)
    if scheme:
        start, raw = start + len(scheme), raw[len(scheme) :].strip()
        start = text.find(raw, start) if raw else start
        params = _auth_params(raw, start)
        if params is not None:
            yield from params  # Digest's response, SigV4's Signature: the rest is sent in the clear
            return
    elif level != "strong" and " " in raw.strip():
        return  # a token or a key is one word: "token: 80 or 160 per layer" is prose
    if not raw or _names_another(raw, level, a.name) or not hidden(raw, level, safe):
        return
    inside = _secrets_inside(raw, start)
    yield from ((start, start + len(raw)),) if inside is None else inside


# an authentication scheme's parameters (RFC 7235 auth-param: name=value or name="value", comma-separated)
AUTH_PARAM = re.compile(r"([A-Za-z][\w-]{0,63})[ \t]{0,2}=[ \t]{0,2}(\"[^\"\n]{0,4096}\"|[^\s,\"]{1,4096})")


def _auth_params(raw: str, start: int) -> list[Span] | None:
    """The secret parameters of a scheme's credentials given as auth-params, or None where they are one token
    (Bearer eyJ...): the parameters their specifications send in the clear (Digest's username, realm, nonce;
    SigV4's Credential scope and SignedHeaders) stay, the others (response, Signature) are hidden."""
    found = list(AUTH_PARAM.finditer(raw))
    at = 0
    for m in found:  # the parameters must make up the whole value: base64's trailing "=" is no parameter
        if raw[at : m.start()].strip(" \t,") or m.group(2).startswith("="):
            return None
        at = m.end()
    if not found or raw[at:].strip(" \t,"):
        return None
    public = _public_params()
    out = []
    for m in found:
        value, at = _unquote(m.group(2), m.start(2))
        if m.group(1).lower() not in public and len(value) >= 4 and not reference(value):
            out.append((start + at, start + at + len(value)))
    return out


@lru_cache(maxsize=1)
def _public_params() -> frozenset[str]:
    return frozenset(p.lower() for p in vocabulary().names.auth_params_public)


_QUERY_PARAM = re.compile(r"(?:^|[?&;])([A-Za-z_][\w.-]{0,127})=([^&;#\s\"']{1,4096})")


def _secrets_inside(raw: str, start: int) -> list[Span] | None:
    """Where a credential's value is a structure that shows its own secret, that secret alone: a URL's
    user-info password (SENTRY_DSN: https://<public key>:<secret>@host/1), the credential parameters of a
    signed query (rds_token: host:5432/?Action=connect&...&X-Amz-Signature=...); None where the value is
    no such structure, or one whose secret parts no name shows (then the whole value is the secret)."""
    if USERINFO.match(raw):
        return [(start + a, start + b) for a, b in _userinfo(raw)]
    if raw.count("=") < 2 or not ("&" in raw or "?" in raw):
        return None
    named = [m for m in _QUERY_PARAM.finditer(raw) if strength(m.group(1)) is not None]
    if not named:
        return None
    return [(start + m.start(2), start + m.end(2)) for m in named if not reference(m.group(2))]


def _names_another(raw: str, level: str, name: str) -> bool:
    """A value that is not the credential its name is about: which secret a setting points to
    (existingSecret: llm-gateway-secrets, tokenSecretKey: gateway-token), or a short word under a session's
    name (JSESSIONID.routing=node2: a session id is long and random, a route is not)."""
    found = words(name)
    if len(raw) < 8 and level != "strong" and SESSION_WORDS.intersection(found):
        return True
    if _OBJECT_NAME.fullmatch(raw) and _NAMING_WORDS.intersection(found):
        return True  # existingSecret: inference-redis, secretRef: hf-cache: a Kubernetes object's name
    return _names_a_credential(raw) and bool(POINTER_WORDS.intersection(found))


# words that make a setting the name of a stored secret rather than the secret (Helm's existingSecret,
# secretRef, secretName), and a Kubernetes object's name (RFC 1123 labels: lower case, digits, '-', '.')
_NAMING_WORDS = frozenset({"existing", "ref", "secretref", "from"})  # Drone's from_secret: registry_password
_OBJECT_NAME = re.compile(r"[a-z0-9](?:[a-z0-9_-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9_-]{0,61}[a-z0-9])?){0,8}")


COOKIE_PAIR = re.compile(r"(?:^|;)[ \t]{0,4}([^=;\s]{1,128})=([^;\n]{0,4096})")
COOKIE_ATTRIBUTES = frozenset("path domain expires max-age samesite secure httponly priority partitioned".split())
SESSION_WORDS = frozenset("sess sid sessid session sessionid jsessionid phpsessid csrf xsrf".split())


def _cookie_pairs(raw: str, start: int, safe: SafeNames) -> Iterator[Span]:
    """A Cookie or Set-Cookie header's values, each judged by its own name: a session id or a token is
    hidden, a language or a consent is not; Set-Cookie's attributes (Path, Expires, SameSite) never are."""
    for m in COOKIE_PAIR.finditer(raw):
        name, value = m.group(1), m.group(2).strip()
        if name.lower() in COOKIE_ATTRIBUTES or len(value) < 3 or reference(value):
            continue
        level = strength(name)
        sessionish = bool(SESSION_WORDS.intersection(words(name))) and len(value) >= 8 and not number(value)
        if (
            (level is not None and (level == "strong" or len(value) >= 8) and hidden(value, level, safe))
            or sessionish
            or random_token(value)
            or (len(value) >= 16 and secret_looking(value))
        ):
            yield start + m.start(2), start + m.start(2) + len(m.group(2).rstrip())


def _rest_of_line(text: str, start: int, quote: str) -> str:
    """The value from `start` to the line's end (at most 512 characters), without a trailing comment; up to
    the closing quote where the assignment stands inside one (curl -H "Authorization: Bearer ...")."""
    end = text.find("\n", start, start + 512)
    rest = text[start : end if end >= 0 else min(len(text), start + 512)]
    if quote in "\"'`" and quote and quote in rest:
        rest = rest[: rest.index(quote)]
    cut = rest.find(" #")
    return (rest[:cut] if cut >= 0 else rest).rstrip(" \t,;")


def _scheme_of(value: str) -> str:
    """The authentication scheme a value starts with ('Bearer '), or ''."""
    word = value.split(" ", 1)[0]
    if " " in value and word.lower() in _scheme_words():
        return value[: len(word) + 1]
    return ""


@lru_cache(maxsize=1)
def _scheme_words() -> frozenset[str]:
    return frozenset(s.lower() for s in vocabulary().names.schemes)


def _flags(text: str, safe: SafeNames) -> Iterator[Span]:
    for m in FLAG.finditer(text):
        if not m.group(1) and m.group(3) != "=" and not _SINGLE_DASH.fullmatch(m.group(2)):
            continue  # -pSECRET, -u name: an option with its value attached, not a name (see _commands)
        level = strength(m.group(2))
        if level is None:
            continue
        raw, start = _unquote(m.group(4), m.start(4))
        if hidden(raw, level, safe):
            yield start, start + len(raw)


def _schemes(text: str) -> Iterator[Span]:
    for m in SCHEME.finditer(text):
        value = m.group(1).rstrip(_TRAILING)
        if value.startswith("-") or _ASSIGNED.match(text, m.start(1)):
            continue  # docker login -u bot --password-stdin, "job token CI_JOB_TOKEN=...": not a token
        if any(c.isdigit() or c in "+/=._~-" for c in value) and not slot(value):
            yield m.start(1), m.start(1) + len(value)


def _userinfo(text: str) -> Iterator[Span]:
    """The password of scheme://user:password@host, or a token standing as the user (https://TOKEN@host)."""
    for m in USERINFO.finditer(text):
        if m.group(2):
            if not reference(m.group(2)):
                yield m.span(2)
        elif random_token(m.group(1)) or _prefixed(m.group(1)):
            yield m.span(1)


def _alternation(words: Iterable[str]) -> str:
    """A regex alternation of the words, longest first (so "api key" wins over "key"); one that never
    matches where there are none."""
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True)) or "(?!x)x"


@lru_cache(maxsize=1)
def _other_prose() -> re.Pattern[str]:
    """'le mot de passe est X', 'パスワードは X', 'la contraseña es: X': the vocabulary's words for a password
    in other languages, a particle or a suffix written onto the word ('sandinya', 'รหัสผ่านของเครื่อง'), up to
    six words and a linking word, then the value (the same groups as PROSE)."""
    names = vocabulary().names
    words, links, attached = (_alternation(w) for w in (names.prose_names, names.prose_links, names.prose_attached))
    return re.compile(
        rf"(?i)(?<![A-Za-z0-9_-])({words})((?:{attached}|[^\x00-\x7f\s：，。]{{1,24}}(?=[ \t]))?"
        rf"(?:(?:[ \t]{{1,4}}[^\s:=]{{1,24}}){{0,6}}?(?:[ \t]{{1,4}}(?:{links})(?![\w])|(?=[:：])))?)"
        r"[ \t]{0,4}[:=：]?[ \t]{0,4}"
        r"(\"[^\"\n]{1,256}\"|'[^'\n]{1,256}'|`[^`\n]{1,256}`|„[^“”\n]{1,256}[“”]|»[^«\n]{1,256}«|«[^»\n]{1,256}»"
        r"|「[^」\n]{1,256}」|[^\s\"'`„»«「，。、；：！？）]{4,256})"
    )


def slot(value: str) -> bool:
    """Where a secret is or goes, not the secret: a reference, a path, a store's path of lower-case words
    (secret/gpu/ngc), a template's slot ($6$rounds=5000$placeholder$<hash-from-vault>, <salt>)."""
    return (
        reference(value)
        or path(value)
        or _SLASHED_WORDS.fullmatch(value) is not None
        or _TEMPLATE_SLOT.search(value) is not None
        or "placeholder" in value.lower()
    )


_TEMPLATE_SLOT = re.compile(r"<[a-z][\w-]{1,40}>")
_SLASHED_WORDS = re.compile(r"[a-z0-9_-]{1,64}(?:/[a-z0-9_.-]{1,64}){1,16}/?")
# a word right before the name that makes what follows a digest of the secret: "Key Hash (Token) = 0f11..."
_DIGEST_BEFORE = re.compile(r"(?i)(?:hash|digest|checksum|fingerprint|sha256|sha1|md5)[ \t(]{1,4}$")


_PUBLIC_BEFORE = re.compile(r"(?i)(?<![\w])(?:public|pub)[ \t_-]{1,2}$")


def _prose(text: str, safe: SafeNames) -> Iterator[Span]:
    judged: dict[tuple[str, bool], bool] = {}
    for m in _prose_matches(text):
        value, start = m.group(3), m.start(3)
        if _DIGEST_BEFORE.search(text, max(0, m.start() - 16), m.start()):
            continue
        if _PUBLIC_BEFORE.search(text, max(0, m.start() - 8), m.start()):
            continue  # WireGuard's "public key: 8sW3...=": public by its name
        if value[0] in "\"'`„»«「":
            inner = value[1:-1]
            sure = m.group(1).lower().startswith(_PROSE_STRONG)
            if len(inner) >= 4 and not slot(inner) and inner.lower() not in _not_values():
                if sure or password_like(inner):
                    yield start + 1, start + 1 + len(inner)
            continue
        value = value.rstrip(_TRAILING)
        linked = bool(m.group(2).strip()) or text[m.end(2) : m.start(3)].strip() in (":", "=", "：")
        sure = m.re is PROSE and m.group(1).lower().startswith(_PROSE_STRONG)  # elsewhere: password-like only
        verdict = judged.get((value, linked and sure))
        if verdict is None:
            verdict = judged[(value, linked and sure)] = _prose_secret(value, linked, sure, safe)
        if verdict:
            yield start, start + len(value)


def _prose_matches(text: str) -> Iterator[re.Match[str]]:
    """PROSE's matches, then those of the other languages' words where the text is not all ASCII or holds one,
    and where it is not all ASCII those of verb-final sentences."""
    yield from _chained(PROSE, text)
    lowered = text.lower()
    if not text.isascii() or any(w in lowered for w in _ascii_prose_names()):
        yield from _chained(_other_prose(), text)
    if not text.isascii():
        yield from _chained(_final_prose(), text)


@lru_cache(maxsize=1)
def _final_prose() -> re.Pattern[str]:
    """'رمز عبور من X است': a word for a password, up to two words (my, of the server), the value, then a
    copula of a verb-final language (the same groups as PROSE; the value is judged as password-like only)."""
    names = vocabulary().names
    words, finals = _alternation(names.prose_names), _alternation(names.prose_final_links)
    return re.compile(
        rf"(?i)(?<![A-Za-z0-9_-])({words})((?:[ \t]{{1,4}}[^\sA-Za-z0-9:=]{{1,24}}){{0,2}})[ \t]{{1,4}}"
        rf"([!-~]{{6,128}})[ \t]{{1,4}}(?:{finals})(?![\w])"
    )


def _chained(pattern: re.Pattern[str], text: str) -> Iterator[re.Match[str]]:
    """A prose pattern's matches, each next one searched from the value of the one before: in "the key
    secret is X" the value "secret" of "key" starts the match that finds X (each start moves forward)."""
    at = 0
    while at < len(text):
        m = pattern.search(text, at)
        if m is None:
            return
        yield m
        at = max(m.start(3), m.start() + 1)


@lru_cache(maxsize=1)
def _ascii_prose_names() -> tuple[str, ...]:
    return tuple(w.lower() for w in vocabulary().names.prose_names if w.isascii())


# NAME=value, name.key=value: a variable's name (capitals or small letters, not a password's mix: hTyh=0Cgrz9)
_ASSIGNED = re.compile(r"(?:[A-Z_][A-Z0-9_]{2,127}|[a-z_][a-z0-9_.-]{2,127})=(?![=\s]|$)")


def _prose_secret(value: str, linked: bool, sure: bool, safe: SafeNames) -> bool:
    """Whether a word after "password", "token" ... in prose is the secret: a password-like word after a
    linking word ("is", "lautet", ":"), a secret-looking one directly after the name."""
    if reference(value) or safe.word(value) or value.lower() in _not_values() or _ADDRESS.fullmatch(value):
        return False
    if public_token(value):
        return False  # "the client key is live_ck_...": a key its vendor says may be published
    if _ASSIGNED.match(value):
        return False  # "job token CI_JOB_TOKEN=[MASKED]": an assignment, which its name judges
    if slot(value):
        return False  # vault kv get -field=token secret/gpu/ngc: a path in a store, not the token
    if not linked:
        return secret_looking(value)
    plain_word = sure and len(value) >= 6 and value.lower() not in _prose_words()  # "the password is sunshine"
    return password_like(value) or plain_word


@lru_cache(maxsize=1)
def _prose_words() -> frozenset[str]:
    return frozenset(vocabulary().names.prose_not_secrets)


def _runs(text: str, safe: SafeNames) -> Iterator[Span]:
    """Runs of token characters that are a vendor's token, a JWT or random; each distinct run judged once."""
    judged: dict[str, tuple[Span, ...]] = {}
    public = _public_blocks(text)
    for m in RUN.finditer(text):
        run = m.group(0)
        if public and any(a <= m.start() < b for a, b in public):
            continue  # a certificate's or public key's body
        if (
            PUBLIC_KEY_TYPE.search(text, max(0, m.start() - 48), m.start())
            or FINGERPRINT.search(text, max(0, m.start() - 8), m.start())
            or (_named_public(text, m.start()) and not (_prefixed(run) or _jwt(run)))
            or (_labelled_public(text, m.start()) and not (_prefixed(run) or _jwt(run)))
        ):
            continue  # an SSH public key; a value its name calls public or an id (PublicKey =, "clientId":)
        spans = judged.get(run)
        if spans is None:
            spans = _judge_run(run, safe)
            if len(judged) < 200_000:
                judged[run] = spans
        for a, b in spans:
            yield m.start() + a, m.start() + b


def _judge_run(run: str, safe: SafeNames) -> tuple[Span, ...]:
    """The parts of one run to hide: the whole token (prefix, JWT, base64), or its random pieces."""
    lead = len(run) - len(run.lstrip("/.~+-_$"))
    body = run[lead:].rstrip(".")
    if len(body) < 12 or safe.word(body):
        return ()
    if reference(body) or AGE_RECIPIENT.fullmatch(body):
        return ()  # sk-xxxxxxxxxxxx, YOUR_API_KEY: a placeholder; age1...: an age recipient, a public key
    if public_token(body):
        return ()  # a publishable key (pk_live_, phc_): its vendor says it may be published
    if _prefixed(body) or _jwt(body):
        return ((lead, lead + len(body)),)
    if _harmless_base64(body, safe):
        return ()
    out: list[Span] = []
    at = lead
    for piece in body.split("/"):
        if len(piece) >= 16 and not safe.word(piece) and random_token(piece):
            out.append((at, at + len(piece)))
        at += len(piece) + 1
    if not out and random_token(body) and "/" in body and not any(c in body for c in "-_.~"):
        out.append((lead, lead + len(body)))  # base64 with its slashes
    return tuple(out)


AGE_RECIPIENT = re.compile(r"age1[02-9ac-hj-np-z]{58}")  # bech32: the public half of an AGE-SECRET-KEY-1
# a key's fingerprint as ssh-keygen -l prints it (SHA256:<base64>, MD5:<hex pairs>): what the key is checked by
FINGERPRINT = re.compile(r"(?:SHA256|SHA1|MD5):$")
# armoured blocks that are public (certificates, public keys), and SAML's <ds:X509Certificate> element
_PUBLIC_BEGIN = re.compile(r"-----BEGIN ((?:[A-Z0-9 ]{0,30})(?:CERTIFICATE|PUBLIC KEY)(?: BLOCK)?)-----")
_X509 = re.compile(r"X509Certificate>")


def _public_blocks(text: str) -> list[Span]:
    """Where the text holds a certificate or a public key: from its BEGIN to its END line, or the body of
    an X509Certificate element."""
    out: list[Span] = []
    if "-----BEGIN " in text:
        for m in _PUBLIC_BEGIN.finditer(text):
            end = text.find(f"-----END {m.group(1)}-----", m.end())
            out.append((m.start(), end if end >= 0 else len(text)))
    if "X509Certificate>" in text:
        for m in _X509.finditer(text):
            close = text.find("<", m.end())
            out.append((m.end(), close if close >= 0 else len(text)))
    return out


# the name right before a value on its line: NAME = , NAME: , "NAME": " (for _named_public)
NAME_BEFORE = re.compile(r"([A-Za-z_][\w.-]{0,63})\\?[\"']?\]?[ \t]{0,16}[:=][ \t]{0,4}\\?[\"']?$")
_PUBLIC_WORDS = frozenset({"public", "pub", "pubkey", "id", "ids", "uuid", "guid"})


def _named_public(text: str, start: int) -> bool:
    """Whether the name the value stands under says it is public or an identifier (PublicKey, clientId,
    project_id) and nothing in it names a credential."""
    line_start = text.rfind("\n", 0, start) + 1
    m = NAME_BEFORE.search(text, max(line_start, start - 72), start)
    if m is None:
        return False
    name = m.group(1)
    names = vocabulary().names
    if name.lower() in names.inherit:
        name = parent_name(text, start) or name
    if name in names.public_members:
        return True  # a JSON Web Key's "x", "y", "n", "e"
    found = words(name)
    if not found or strength(name) is not None:
        return False
    return public(found) or found[-1] in _PUBLIC_WORDS or found[-1] in _DESCRIBING


# the last word of a name whose value says what something is, not a secret (algorithm: PBEWITHHMACSHA512...)
_DESCRIBING = frozenset({"algorithm", "alg", "type", "kind", "mode", "format", "scheme", "method", "cipher", "domain"})


# the name a line ends in: `DbPassword:`, `variable "db_password" {`, `[section]`
_PARENT = re.compile(r"([A-Za-z_][\w.-]{0,127})[\"'\]]?[ \t]{0,4}(?:=>|[:={])?[ \t]{0,4}[\[{]?[ \t]{0,4}$")
PARENT_LINES = 8


def parent_name(text: str, at: int) -> str | None:
    """The key above the line holding `at`: the nearest line before it, at most PARENT_LINES back, that is
    indented less, if that line ends in a name (YAML's `Key:`, HCL's `variable "name" {`)."""
    line_start = text.rfind("\n", 0, at) + 1
    line = text[line_start:at]
    indent = len(line) - len(line.lstrip(" \t-"))
    end = line_start - 1
    for _ in range(PARENT_LINES):
        if end <= 0:
            return None
        start = text.rfind("\n", 0, end) + 1
        above = text[start:end]
        end = start - 1
        if not above.strip():
            continue
        if len(above) - len(above.lstrip(" \t-")) < indent:
            m = _PARENT.search(above, max(0, len(above) - 160))
            return m.group(1) if m else None
    return None


def _labelled_public(text: str, start: int) -> bool:
    """A value alone on its line under a line that calls it a public key (minisign's `untrusted comment:
    minisign public key ...`)."""
    line_start = text.rfind("\n", 0, start) + 1
    before = text[max(line_start, start - 200) : start].lower()
    if before.strip():  # "# pubkey of the above, used in the deposit UI: 3jXS..."
        public = any(w in before for w in ("public key", "pubkey"))
        return public and not any(w in before for w in ("secret", "private"))
    if line_start == 0:
        return False
    above = text[text.rfind("\n", 0, line_start - 1) + 1 : line_start - 1][-200:].lower()
    return "public key" in above and not any(w in above for w in ("secret", "private"))


_URL = re.compile(r"[a-z][a-z0-9+.-]{1,20}://[^\s@]{1,2048}")


def _plain_url(value: str) -> bool:
    """A URL without user-info and without a credential-named query parameter."""
    if not _URL.fullmatch(value):
        return False
    query = value.partition("?")[2]
    return not any(strength(pair.partition("=")[0]) for pair in query.split("&") if pair)


def public_token(value: str) -> bool:
    """Whether a value starts with a prefix its vendor documents as publishable (pk_live_, phc_)."""
    return any(value.startswith(p.prefix) and len(value) - len(p.prefix) >= p.min for p in _public_prefixes())


@lru_cache(maxsize=1)
def _public_prefixes() -> tuple[Prefix, ...]:
    return tuple(p for p in vocabulary().prefixes if p.public)


# an SSH public key's type, right before its base64 (ssh-ed25519 AAAA..., ecdsa-sha2-nistp256 AAAA...)
PUBLIC_KEY_TYPE = re.compile(
    r"(?:ssh-(?:rsa|dss|ed25519|ed448)|ecdsa-sha2-nistp[0-9]{3}|sk-(?:ssh-ed25519|ecdsa-sha2-nistp256)@openssh\.com)"
    r"[ \t]{1,4}$"
)
_BASE64 = re.compile(r"[A-Za-z0-9+/]{16,4096}={0,2}|[A-Za-z0-9_-]{16,4096}={0,2}")


# the first bytes of files that are inlined as base64 and hold no secret: PNG, JPEG, GIF, PDF, WebP, ICO
_FILE_MAGIC = (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"GIF87a", b"GIF89a", b"%PDF-", b"RIFF", b"\x00\x00\x01\x00")


def _file_head(body: str) -> bool:
    """Whether base64 starts with the bytes of a file kind that holds no secret (its first 16 characters)."""
    import base64
    import binascii

    try:
        head = base64.b64decode(body[:16], altchars=b"-_" if "-" in body[:16] or "_" in body[:16] else None)
    except (binascii.Error, ValueError):
        return False
    return head.startswith(_FILE_MAGIC)


def _harmless_base64(body: str, safe: SafeNames) -> bool:
    """Base64 that decodes to readable text holding no secret of its own (a JSON request body, a config):
    it is judged by what it says, as the decoded text would be."""
    if not _BASE64.fullmatch(body):
        return False
    if _file_head(body):
        return True  # an image or a document inlined as base64 (iVBORw0KGgo...: a PNG)
    if len(body) % 4 not in (0, 2, 3):
        return False
    import base64
    import binascii

    try:
        raw = base64.b64decode(body + "=" * (-len(body) % 4), altchars=b"-_" if "-" in body or "_" in body else None)
        decoded = raw.decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return False
    printable = sum(c.isprintable() or c in "\n\t" for c in decoded)
    if len(decoded) < 12 or printable < len(decoded) or not (" " in decoded.strip() or decoded.lstrip()[:1] in "{["):
        return False  # bytes, or one word (tok:94f0b481-...): a key's base64 is no text
    return not any(b - a >= 3 for a, b in find(decoded, safe))


def strong_password(value: str) -> bool:
    """Capitals, small letters, digits and one of !@#$%^&*?~, eight characters or more, not an e-mail and not
    an assignment (P2P=Enabled)."""
    if not (any(c.isupper() for c in value) and any(c.islower() for c in value) and any(c.isdigit() for c in value)):
        return False
    if not _STRONG_SYMBOLS.intersection(value) or value[0] in "-$%" or "=" in value:
        return False
    at = value.find("@")
    return at < 0 or "." not in value[at:]


def _strong_passwords(text: str) -> Iterator[Span]:
    for m in QUOTED.finditer(text):
        group = 2 if m.group(2) else 3
        if strong_password(m.group(group)):
            yield m.span(group)


def _webhooks(text: str) -> Iterator[Span]:
    """The path parts after a webhook's marker (hooks.slack.com/services/T../B../X.., .../webhookb2/...,
    discord.com/api/webhooks/ID/TOKEN): each of eight characters or more with a digit in it."""
    for m in WEBHOOK.finditer(text):
        host, path = m.group(1).lower(), m.group(2)
        marked = "hook" in host
        at = m.start(2)
        for piece in re.finditer(r"[^/@?#&=\n]{1,512}", path):
            word = piece.group(0)
            hook = "hook" in word.lower()
            if marked and not hook and len(word) >= 8 and any(c.isdigit() for c in word) and _PATH_WORD.fullmatch(word):
                yield at + piece.start(), at + piece.end()
            marked = marked or hook
            if path[piece.end() : piece.end() + 1] in ("?", "#"):
                break


_HEX_KEY = re.compile(r"[0-9a-f]{32,128}|[0-9A-F]{32,128}")


def _capability_paths(text: str) -> Iterator[Span]:
    """A key that stands in a URL's path (a capability URL: cronitor.link/p/<key>/job, a QuickNode
    endpoint's /<token>/): a segment of 32 or more hex digits or a random token, unless the segment before
    it names what the hex is (a commit, a blob, a run, a digest) or the host is a public code or model host,
    whose paths carry commit and object ids."""
    objects, keys = _url_object_words(), _url_key_words()
    for m in WEBHOOK.finditer(text):
        host = m.group(1)
        if public_host(host):
            continue
        at, previous = m.start(2), ""
        for piece in re.finditer(r"[^/?#&=;\n]{1,512}", m.group(2)):
            word = piece.group(0)
            keyed = previous in keys and len(word) >= 8 and any(c.isdigit() for c in word)
            if keyed or (previous not in objects and (_HEX_KEY.fullmatch(word) or random_token(word))):
                yield at + piece.start(), at + piece.end()
            previous = word.lower()
            if m.group(2)[piece.end() : piece.end() + 1] in ("?", "#"):
                break


@lru_cache(maxsize=1)
def _url_object_words() -> frozenset[str]:
    return frozenset(vocabulary().names.url_object_words)


@lru_cache(maxsize=1)
def _url_key_words() -> frozenset[str]:
    return frozenset(vocabulary().names.url_key_words)


def _jwt(body: str) -> bool:
    parts = body.split(".")
    return len(parts) in (3, 5) and parts[0].startswith("eyJ") and all(len(p) >= 4 for p in parts[:2])


def _prefixed(token: str) -> bool:
    """Whether a token starts with a vendor's prefix and is long enough to be that vendor's token."""
    for prefix in _prefixes().get(token[:2], ()):
        if not token.startswith(prefix.prefix):
            continue
        rest = token[len(prefix.prefix) :]
        if prefix.exact and len(token) != prefix.exact:
            continue
        if prefix.shape:
            if _shape(prefix.shape).fullmatch(token):
                return True
            continue
        if len(rest) < prefix.min:
            continue
        if prefix.alphabet == "hex" and not re.fullmatch(r"[0-9a-fA-F]+", rest[: prefix.min]):
            continue
        if prefix.alphabet == "upper" and not re.fullmatch(r"[A-Z0-9]+", rest[: prefix.min]):
            continue
        return True
    return False


@lru_cache(maxsize=256)
def _shape(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


@lru_cache(maxsize=1)
def _prefixes() -> dict[str, tuple[Prefix, ...]]:
    """The vendors' prefixes by their first two characters, longest first."""
    out: dict[str, list[Prefix]] = {}
    for p in sorted((p for p in vocabulary().prefixes if not p.public), key=lambda p: -len(p.prefix)):
        out.setdefault(p.prefix[:2], []).append(p)
    return {k: tuple(v) for k, v in out.items()}


_INSTRUCTIONS = frozenset({"ENV", "ARG"})


def _commands(text: str) -> Iterator[Span]:
    """The secrets given to commands' options (sshpass -p X, mysql -pX, docker login -p X, wandb login X)."""
    pattern, table = _command_pattern()
    found = list(pattern.finditer(text))
    # a command's arguments run to the next command's name, except a name that only sets a variable
    # (set, ENV) standing among the words of a line: gh secret set NAME --body X is one command
    ends, end = [0] * len(found), len(text)
    for i in range(len(found) - 1, -1, -1):
        ends[i] = end
        if not _mid_line_assign(text, found[i], table):
            end = found[i].start()
    for i, m in enumerate(found):
        if m.group(1) in _INSTRUCTIONS and text[text.rfind("\n", 0, m.start()) + 1 : m.start()].strip():
            continue  # ENV and ARG are a Dockerfile's instructions only at a line's start
        limit = min(m.end() + 2048, ends[i])
        stop = _SEPARATOR.search(text, m.end(), limit)
        for command in table[m.group(1)]:
            yield from _arguments(text, m.end(), stop.start() if stop else limit, command)


def _mid_line_assign(text: str, m: re.Match[str], table: dict[str, tuple[Command, ...]]) -> bool:
    """A command that only sets a variable (set, setx, ENV), named after other words of its line."""
    if not all(c.assign for c in table[m.group(1)]):
        return False
    line_start = text.rfind("\n", max(0, m.start() - 256), m.start()) + 1
    before = text[max(line_start, m.start() - 256) : m.start()].rstrip()
    return bool(before) and before[-1] not in "|;&"


def _arguments(text: str, start: int, end: int, command: Command) -> Iterator[Span]:
    """The secrets among one command's arguments (after its `after` word, where it has one)."""
    tokens = [(t.start(), t.group(0)) for t in _TOKEN.finditer(text, start, end)]
    active = not command.after
    plain = 0  # arguments that are no option, counted after the `after` word
    for i, (at, token) in enumerate(tokens):
        if not active:
            active = any(token == a or (a.endswith(".") and token.startswith(a)) for a in command.after)
            continue
        if command.argument and not token.startswith("-"):
            plain += 1
            if plain == command.argument:
                if not reference(token.strip("\"'")):
                    yield _piece(_value_span(at, token), text, command.part)
                return
            continue
        following = tokens[i + 1] if i + 1 < len(tokens) and not tokens[i + 1][1].startswith("-") else None
        span = _argument(command, at, token, following)
        if span is not None:
            yield span
            if command.assign:
                return


def _argument(command: Command, at: int, token: str, following: tuple[int, str] | None) -> Span | None:
    """The secret one argument gives: the next word after an option or a login word, the value after
    `--option=`, what is attached to `-p`, or a variable's value where its name means a credential."""
    name, eq, value = token.partition("=")
    if following and (token in command.options or token in command.login):
        return _value_span(*following)
    if eq and name in command.options:
        return _value_span(at + len(name) + 1, value)
    attached = next((a for a in command.attached if token.startswith(a) and len(token) > len(a)), None)
    if attached:
        return _value_span(at + len(attached), token[len(attached) :])
    if command.assign and following and not token.startswith("-") and strength(token) in ("strong", "medium"):
        return None if slot(following[1].strip("\"';")) else _value_span(*following)
    return None


def _piece(span: Span, text: str, part: int) -> Span:
    """The nth piece between slashes of an argument's span (microk8s join HOST:PORT/TOKEN/HASH), or all of it."""
    if not part:
        return span
    start = span[0]
    pieces = text[span[0] : span[1]].split("/")
    if len(pieces) < part:
        return span
    start += sum(len(p) + 1 for p in pieces[: part - 1])
    return start, start + len(pieces[part - 1])


def _value_span(at: int, token: str) -> Span:
    if len(token) >= 2 and token[0] in "\"'" and token[-1] == token[0]:
        return at + 1, at + len(token) - 1
    return at, at + len(token)


@lru_cache(maxsize=1)
def _command_pattern() -> tuple[re.Pattern[str], dict[str, tuple[Command, ...]]]:
    table: dict[str, tuple[Command, ...]] = {}
    for c in vocabulary().commands:
        table[c.command] = (*table.get(c.command, ()), c)
    names = _alternation(table)
    return re.compile(r"(?<![\w./-])(" + names + r")(?![\w.-])"), table


# a call whose first argument names a setting and whose second is its literal default or value:
# os.environ.get("HF_TOKEN", "hf_..."), envOr("MP_ACCESS_TOKEN", "APP_USR-..."), headers.set("X-Api-Key", "...")
NAMED_ARGUMENT = re.compile(
    r"\([ \t]{0,8}([\"'])([A-Za-z_][\w.-]{0,127})\1[ \t]{0,8},[ \t]{0,64}([\"'])([^\"'\n]{3,4096})\3[ \t]{0,8}[,)]"
)


def _named_arguments(text: str, safe: SafeNames) -> Iterator[Span]:
    templates = _Templates(text)
    for m in NAMED_ARGUMENT.finditer(text):
        if templates.inside(m.start()):
            continue  # {{ lookup('community.hashi_vault', 'secret=kv/...') }}: a template's reference
        level = strength(m.group(2))
        if level is not None and hidden(m.group(4), level, safe):
            yield m.span(4)


def _calls(text: str, _safe: SafeNames) -> Iterator[Span]:
    """The password a function call is given by its place (new PDO(dsn, user, 'pass'), mysqli_connect(host,
    user, 'pass'), DriverManager.getConnection(url, user, "pass")): a string literal at the call's password
    position, on the call's line."""
    pattern, table = _call_pattern()
    for m in pattern.finditer(text):
        line_end = text.find("\n", m.end())
        end = len(text) if line_end < 0 else line_end
        call = table[m.group(1)]
        arg = _nth_argument(text, m.end(), end, -1 if call.last else call.argument)
        if arg is not None:
            value = arg.group(1)
            if value[:1] in "\"'" and len(value) > 4 and not reference(value[1:-1]):
                if value[1:-1].lower() not in _not_values():
                    yield arg.start(1) + 1, arg.end(1) - 1


def _nth_argument(text: str, start: int, end: int, place: int) -> re.Match[str] | None:
    """The call's argument at `place` (from 1; -1: the last, up to the call's closing bracket)."""
    last = None
    for n, arg in enumerate(_ARGUMENT.finditer(text, start, end), 1):
        if n == place:
            return arg
        last = arg
        if arg.group(0).rstrip().endswith(")") or n >= 32:
            break
    return last if place == -1 else None


# one argument of a call and what ends it: a string literal or anything up to the next comma or bracket
_ARGUMENT = re.compile(r"[ \t]{0,8}(\"[^\"\n]{0,512}\"|'[^'\n]{0,512}'|[^,()\"'\n]{1,512})[ \t]{0,8}(?:,|\))")


@lru_cache(maxsize=1)
def _call_pattern() -> tuple[re.Pattern[str], dict[str, Call]]:
    table = {c.call: c for c in vocabulary().calls}
    names = _alternation(table)
    return re.compile(r"(?<![\w])(" + names + r")[ \t]{0,4}\(" if names else r"(?!x)x"), table
