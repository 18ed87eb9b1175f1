"""What a value is, judged by itself: a reference to a secret rather than the secret ($HF_TOKEN, <token>,
{{ .Values.key }}), a path, a number, a switch, something that looks like a password, or a random token.

`random_token` is the entropy test for values no name or structure vouches for: a segment of at least 16
characters that mixes letter cases and digits the way random tokens do, and unlike identifiers, which are
made of words (camelCase, snake_case) or are hexadecimal digests (hashes, commit ids, image digests: known
safe). Guarantees: every test is linear in the value's length and needs no context.
"""

from __future__ import annotations

import math
import re
from collections import Counter

_REFERENCE = re.compile(
    r"\$\{?[A-Za-z_][\w.]{0,128}\}?;?$|\$\{[A-Za-z_][\w.]{0,128}:?[-=?+]|\$\{env:"
    r"|\$\(|\$\{\{|%[A-Za-z_][\w]{0,128}%$|\{\{|<[^<>\n]{0,200}>$|\[[A-Za-z _-]{0,40}\]$"
    r"|(?:[*xX•.]){3,}$|[\w.-]{0,24}?\*{3,}|[\w-]{0,16}?-x{4,}$|[\w-]{0,16}?\.{3}\w{0,8}$|…$|(?:secret|host|ip|mac|user|email|serial|uuid|gpu-uuid|guid)-\d{1,9}$"
    r"|(?:env|vault|op|secretsmanager|ssm|gcp-secret|azure-keyvault|file|keyring):"
    # an AWS ARN of a stored secret or parameter names where it is (arn:aws:secretsmanager:region:acct:secret:x)
    r"|arn:aws[\w-]{0,16}:(?:secretsmanager|ssm|kms):"
    # HCL and code that read a secret from elsewhere: var.db_password, local.x, os.environ["X"], process.env.X
    r"|(?:var|local|data|module|each|self)\.[A-Za-z_][\w]{0,128}(?:\.[\w\[\]\"-]{1,128}){0,6}$"
    r"|(?:os\.environ|os\.getenv|process\.env|ENV|System\.getenv|System\.get_env|Environment\.GetEnvironmentVariable)\b"
    # CloudFormation's intrinsic functions: !Ref TurnstileSecret, !GetAtt, !Sub, !ImportValue
    r"|!(?:Ref|GetAtt|Sub|ImportValue|FindInMap|Join|Select|Base64)\b"
    # placeholders: YOUR_API_KEY, your-token-here, sk-xxxxxxxxxxxx, <redacted> (above), changeme (not_values)
    r"|(?i:(?:your|my|insert|enter|paste|replace[_-]?me|change[_-]?me|fill[_-]?in)[_-][a-z0-9_-]{2,40})$|[\w.-]{0,16}?(?:x{6,}|X{6,}|\*{4,})$"
)
# a path, or a lookup table of one (postfix's hash:/etc/postfix/sasl_passwd, lmdb:, texthash:, regexp:)
_PATH = re.compile(r"(?:/|~/|\./|\.\./|file://|[A-Za-z]:\\|[a-z][a-z0-9]{1,11}:/(?!/))")
# a digest of something, written with its algorithm: sha256:<hex> (image digests, CA certificate pins)
_DIGEST = re.compile(r"(?i)(?:sha1|sha224|sha256|sha384|sha512|md5|blake2b|blake3|sha3-256):[0-9a-f]{32,128}")
_NUMBER = re.compile(r"[-+]?[\d][\d.,_]{0,40}(?:[eE][-+]?\d{1,3})?(?:[ \t]{0,2}[A-Za-z%]{0,6})?")
_WORDS = re.compile(r"[A-Z]?[a-z]{3,}")
_HEX = re.compile(r"[0-9a-fA-F]+")
_SYMBOLS = frozenset("!@#$%^&*+=?~§€£/\\|")


def reference(value: str) -> bool:
    """A variable, a template, a placeholder or a secret manager's reference: where the secret is, not it."""
    return _REFERENCE.match(value) is not None


# a relative path of lower-case words that ends in a file's extension (edge/terraform.tfstate, certs/ca.pem)
_RELATIVE = re.compile(r"[a-z0-9_-]{1,64}(?:/[a-z0-9_.-]{1,64}){1,16}\.[a-z]{1,10}")


def path(value: str) -> bool:
    """A file's path (a key file, a token file): not the secret itself."""
    return _PATH.match(value) is not None or _RELATIVE.fullmatch(value) is not None


def digest(value: str) -> bool:
    """A hash written with its algorithm (sha256:ab12...): what something is checked against, not a key."""
    return _DIGEST.fullmatch(value) is not None


def number(value: str) -> bool:
    """A number, perhaps with a short unit (4096, 35.2 ms, 1e-5)."""
    return _NUMBER.fullmatch(value) is not None


def password_like(value: str) -> bool:
    """Whether a word looks like a password or a key rather than an English or German word: a digit or a
    symbol beside letters, or capitals inside it, or a random token; at least six characters."""
    if len(value) < 6 or " " in value:
        return False
    letters = any(c.isalpha() for c in value)
    digits = any(c.isdigit() for c in value)
    symbols = any(c in _SYMBOLS for c in value)
    inner_caps = any(c.isupper() for c in value[1:]) and any(c.islower() for c in value)
    return letters and (digits or symbols or inner_caps) or random_token(value)


def secret_looking(value: str) -> bool:
    """For names that are credentials only sometimes (key, pass, code): a value that looks like a key:
    a random token, a long mix of letters and digits (a Kaggle key), or a password of eight or more."""
    if len(value) < 8 or " " in value:
        return False
    if random_token(value):
        return True
    letters = sum(c.isalpha() for c in value)
    digits = sum(c.isdigit() for c in value)
    if letters and digits and len(value) >= 16 and re.fullmatch(r"[A-Za-z0-9+/=_-]+", value):
        return True
    mixed = any(c.isupper() for c in value) and any(c.islower() for c in value)
    return bool(letters and digits and (mixed or any(c in _SYMBOLS for c in value)))


def entropy(text: str) -> float:
    """Shannon entropy of the characters, bits per character."""
    if not text:
        return 0.0
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in Counter(text).values())


def random_token(value: str) -> bool:
    """Whether some segment of `value` (split at - _ . ~ / + =) is random: at least 16 characters, not
    hexadecimal, not digits only, mixing classes as random tokens do and unlike words."""
    if len(value) < 16:
        return False
    if _base64(value) and _random(value.rstrip("=").replace("+", "").replace("/", "")):
        return True  # base64: the slashes are part of it
    return any(_random(seg) for seg in re.split(r"[-_.~/+=]", value) if len(seg) >= 16)


def _base64(value: str) -> bool:
    """Base64 rather than a path: its alphabet only, and about as few '/' and '+' as random data has
    (one in 32 characters; NET/IB/9/GDRDMA/Shared is a path)."""
    return (
        len(value) >= 24
        and re.fullmatch(r"[A-Za-z0-9+/]{24,4096}={0,2}", value) is not None
        and value.count("/") + value.count("+") <= len(value) / 16 + 1
    )


def _random(seg: str) -> bool:
    """The test of one segment of letters and digits, by which classes of characters it mixes."""
    n = len(seg)
    if n < 16 or not seg.isalnum() or not seg.isascii() or seg.isdigit() or _HEX.fullmatch(seg):
        return False
    if entropy(seg) < 3.0:
        return False
    upper = sum(c.isupper() for c in seg)
    lower = sum(c.islower() for c in seg)
    digits = n - upper - lower
    test = _BY_CLASSES.get((upper > 0, lower > 0, digits > 0))
    return bool(test and test(seg, n, digits))


def _word_share(seg: str) -> float:
    """How much of a segment is made of words (runs of three small letters, capitalised or not)."""
    return sum(len(w) for w in _WORDS.findall(seg)) / len(seg)


# (capitals, small letters, digits present) -> the test of a random segment of that mix
_BY_CLASSES = {
    (True, True, True): lambda seg, n, digits: _word_share(seg) < 0.5,
    (True, True, False): lambda seg, n, digits: n >= 20 and _word_share(seg) < 0.3 and _switches(seg) >= 0.4,
    (False, True, True): lambda seg, n, digits: n >= 20 and digits / n >= 0.1 and entropy(seg) >= 3.5,
    (True, False, True): lambda seg, n, digits: digits / n >= 0.1 and entropy(seg) >= 3.3,
}


def _switches(seg: str) -> float:
    """How often consecutive characters change class (capital, small, digit): about 0.6 for random."""
    kinds = ["u" if c.isupper() else "l" if c.islower() else "d" for c in seg]
    return sum(a != b for a, b in zip(kinds, kinds[1:], strict=False)) / max(1, len(seg) - 1)
