"""Whether a name means a credential: the name is split into its words whatever its case style, and the
words decide (knowledge/secrets.yaml, `names`).

"clientSecret", "HF_TOKEN", "x-api-key", "VLLM_DB_PW", "keyStorePassword" and "_authToken" name credentials;
"max_tokens", "allreduce_bytes_per_token", "key_cache", "token_file", "secret_name" and "bos_token" do not.
Guarantees: a name is judged by its words alone (never its value); each distinct name is judged once per
vocabulary (cached); the work is linear in the name's length.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Literal

from advisor.redact.vocabulary import Names, vocabulary

Strength = Literal["strong", "medium", "weak"]

_PIECES = re.compile(r"[^\W_]+")
# camelCase, PascalCase and acronyms: "keyStorePassword" -> key Store Password, "HFToken" -> HF Token
_CAMEL = re.compile(r"[A-Z]{1,64}(?=[A-Z][a-z])|[A-Z]?[a-zß-ÿ]{1,128}|[A-Z]{1,128}|[0-9]{1,32}|[^\W\d_]{1,128}")
_RANK = {"strong": 3, "medium": 2, "weak": 1}


def words(name: str) -> tuple[str, ...]:
    """The lower-case words of a name in any case style."""
    out: list[str] = []
    for piece in _PIECES.findall(name[:256]):
        out += [w.lower() for w in _CAMEL.findall(piece)] or [piece.lower()]
    return tuple(out)


def strength(name: str) -> Strength | None:
    """How surely `name` names a credential (strong, medium, weak), or None where it names something else."""
    return _judge(name)


@lru_cache(maxsize=8192)
def _judge(name: str) -> Strength | None:
    names = vocabulary().names
    found = words(name)
    if not found:
        return None
    best: Strength | None = None
    credential_words: list[str] = []
    for word in found:
        level = _word_strength(word, found, names)
        if level is not None:
            credential_words.append(word)
            if best is None or _RANK[level] > _RANK[best]:
                best = level
    if best is None or (best == "weak" and found[-1] in ("id", "ids")):
        return None  # RAZORPAY_KEY_ID: an unqualified key's id names it; signing.keyId, private_key_id stay
    if any(w in names.neutral for w in found) and not _ends_in_credential(found, best, credential_words, names):
        return None  # max_tokens, password_file; but UV_INDEX_PRIVATE_PASSWORD ends in what it is
    if public(found) and not any(w in names.strong and not w.endswith("key") for w in credential_words):
        return None  # publishableKey, recaptchaSiteKey, algoliaSearchOnlyKey: public by design
    for word in credential_words:
        if any(w in names.neutral_for.get(_base(word, names), ()) for w in found):
            return None
    return best


def _ends_in_credential(found: tuple[str, ...], best: Strength, credential_words: list[str], names: Names) -> bool:
    """A name that ends in what it is, whatever words stand before it: a strong word (UV_INDEX_PRIVATE_PASSWORD)
    or a qualified one (LABEL_STUDIO_API_KEY: "label" is neutral, but "api key" ends it)."""
    if found[-1] not in credential_words:
        return False
    return best == "strong" or (len(found) >= 2 and found[-2] in names.qualifiers)


def _word_strength(word: str, found: tuple[str, ...], names: Names) -> Strength | None:
    """One word's strength: a listed word, its plural, or a compound ending in one (authtoken, dbpassword)."""
    if word in names.strong or (word.endswith("s") and word[:-1] in names.strong):
        return "strong"  # passwords; "tokens" are counted, not kept secret
    if word in names.medium:
        return "medium"
    if word in names.weak:
        return "medium" if any(q in names.qualifiers for q in found if q != word) else "weak"
    for listed, level in ((names.strong, "strong"), (names.medium, "medium")):
        for c in listed:
            if len(c) >= 4 and len(word) > len(c) and word.endswith(c):
                return level  # type: ignore[return-value]
    for c in names.weak:
        if len(word) > len(c) and word.endswith(c) and word[: -len(c)] in names.qualifiers:
            return "medium"  # apikey, secretkey, storepass
    return None


def _base(word: str, names: Names) -> str:
    """The listed credential word a word stands for (tokens -> token, authtoken -> token)."""
    listed = (*names.strong, *names.medium, *names.weak)
    if word in listed:
        return word
    return next((c for c in listed if word.endswith(c)), word)


def public(found: tuple[str, ...]) -> bool:
    """Whether a name's words hold a word or phrase that makes a key public by design (site key)."""
    for entry in vocabulary().names.public:
        phrase = tuple(entry.split())
        n = len(phrase)
        if any(found[i : i + n] == phrase for i in range(len(found) - n + 1)):
            return True
    return False
