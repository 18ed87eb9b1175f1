"""What the redactor knows, as data: the words that make a name a credential (knowledge/secrets.yaml), the
commands whose options take a password, the vendors' token prefixes, and the names that are never secret
(the catalogue's models, GPUs, engines, flags and precisions).

Guarantees: the vocabulary is read and shape-checked once per process (KnowledgeError names file, line and
key); the known-safe names are built once per knowledge base; neither needs the engine.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from pathlib import Path

from advisor.errors import KnowledgeError
from advisor.kb.knowledge import Citation, Knowledge
from advisor.kb.paths import knowledge_dir
from advisor.kb.schema import Entry, Record, key, read
from advisor.yamlio import load_file_cached

FILE = "secrets.yaml"


class Command(Record):
    """A command whose options take a secret as their value."""

    command: str = key(doc="the program's name as typed")
    options: tuple[str, ...] = key(default=(), doc="options whose next argument (or =value) is a secret")
    attached: tuple[str, ...] = key(default=(), doc="options that take the secret without a space (-pSECRET)")
    after: tuple[str, ...] = key(default=(), doc="the options count only after one of these words (docker login)")
    login: tuple[str, ...] = key(default=(), doc="words after which the first argument is a secret (wandb login)")
    assign: bool = key(default=False, doc="the command sets a variable: NAME VALUE, judged by the name")
    argument: int = key(default=0, doc="the nth argument after the `after` word is the secret (0: none)")
    part: int = key(default=0, doc="of that argument, only the nth piece between slashes is (0: all of it)")


class StdinReader(Record):
    """A command that reads a secret from its standard input: what is piped into it is the secret."""

    command: str = key(doc="the program's name as typed")
    when: tuple[str, ...] = key(default=(), doc="only with one of these options (docker login --password-stdin)")
    form: str = key(default="secret", choices=("secret", "user"), doc="the input: the secret, or user:secret lines")


class Call(Record):
    """A function or constructor that takes a password by its place among the arguments."""

    call: str = key(doc="the name as written before its '(' (PDO, mysqli_connect, DriverManager.getConnection)")
    argument: int = key(default=0, doc="the password's place, from 1")
    last: bool = key(default=False, doc="the last argument is it (login(user, password), login(token))")


class Prefix(Record):
    """A vendor's token prefix: a token that starts with it and has `min` more characters is a secret."""

    prefix: str = key(doc="the literal prefix, case as the vendor prints it")
    min: int = key(doc="the fewest token characters after the prefix")
    vendor: str = key(doc="whose tokens start with it")
    alphabet: str = key(default="any", choices=("any", "upper", "hex"), doc="what may follow the prefix")
    exact: int = key(default=0, doc="the token's whole length where the vendor fixes it (0: any)")
    shape: str = key(default="", doc="the whole token's form where the prefix alone could start a word (fullmatch)")
    public: bool = key(default=False, doc="a public-by-design key the vendor says may be published (never hidden)")


class Names(Record):
    """The words of names that mean a credential, and those that make a name something else."""

    strong: tuple[str, ...] = key(doc="a credential whatever its value (a number too)")
    medium: tuple[str, ...] = key(doc="a credential unless the value is a number")
    weak: tuple[str, ...] = key(doc="a credential with a qualifier; alone only for secret-looking values")
    qualifiers: tuple[str, ...] = key(doc="words that make a weak word a credential (api key)")
    neutral: tuple[str, ...] = key(doc="words that make a name a quantity, a reference or metadata")
    neutral_for: Mapping[str, list[str]] = key(default={}, doc="neutral words for one credential word only")
    not_values: tuple[str, ...] = key(doc="values that are switches or placeholders, never secrets")
    prose_not_secrets: tuple[str, ...] = key(default=(), doc="words after 'the password is' that are not it")
    prose_names: tuple[str, ...] = key(
        default=(), doc="words for a password in prose, in every language ('mot de passe')"
    )
    prose_links: tuple[str, ...] = key(default=(), doc="words between such a name and its value, after a space ('est')")
    prose_attached: tuple[str, ...] = key(
        default=(), doc="particles written onto the name without a space ('は', '是')"
    )
    prose_final_links: tuple[str, ...] = key(
        default=(), doc="copulas that follow the value in verb-final languages ('رمز عبور من X است', 'पासवर्ड X है')"
    )
    schemes: tuple[str, ...] = key(doc="authentication schemes a header value starts with")
    auth_params_public: tuple[str, ...] = key(
        default=(), doc="a scheme's parameters sent in the clear by its specification (Digest's nonce)"
    )
    pair_names: tuple[str, ...] = key(doc="fields whose value names the next value field (name: HF_TOKEN)")
    pair_values: tuple[str, ...] = key(doc="the value fields of such pairs")
    public: tuple[str, ...] = key(
        default=(), doc="words that make a key public by design (publishable, site key); a phrase as its words"
    )
    public_members: tuple[str, ...] = key(default=(), doc="whole names that hold a public value (a JWK's x, y, n, e)")
    quantities: tuple[str, ...] = key(
        default=(), doc="words before a name that make it a quantity in prose (time per token: 35 ms)"
    )
    plain_data: tuple[str, ...] = key(
        default=(), doc="last words of a Kubernetes Secret's key that hold who or where, not a secret (DB_HOST)"
    )
    url_object_words: tuple[str, ...] = key(
        default=(), doc="URL path segments after which a hex or random segment is an object's id (commit)"
    )
    url_key_words: tuple[str, ...] = key(
        default=(), doc="URL path segments after which the next segment is a key whatever it looks like (push)"
    )
    login_pairs: tuple[str, ...] = key(
        default=(), doc="last words of a setting whose value is user:secret (squid's login=)"
    )
    inherit: tuple[str, ...] = key(
        default=(), doc="keys that hold the value of the key above them (CloudFormation's Default, HCL's default)"
    )


class Vocabulary(Record):
    """knowledge/secrets.yaml as one record."""

    names: Names = key(doc="the credential-name model")
    commands: tuple[Command, ...] = key(doc="commands whose options take a secret")
    calls: tuple[Call, ...] = key(default=(), doc="calls that take a password by its place")
    stdin_readers: tuple[StdinReader, ...] = key(default=(), doc="commands that read a secret from stdin")
    version_words: tuple[str, ...] = key(doc="words before a dotted number that make it a version")
    public_domains: tuple[str, ...] = key(default=(), doc="domains of public services: their hosts are no secret")
    service_labels: tuple[str, ...] = key(
        default=(), doc="first labels of a public service's endpoint (api.postmarkapp.com) under a public suffix"
    )
    prefixes: tuple[Prefix, ...] = key(doc="vendors' token prefixes")
    cite: tuple[Citation, ...] = key(doc="where the prefixes come from")
    where: str = key(default="", source="where", doc="file:line")


@cache
def vocabulary(root: Path | None = None) -> Vocabulary:
    """The redactor's vocabulary from knowledge/secrets.yaml (read once per process)."""
    path = (root or knowledge_dir()) / FILE
    data = load_file_cached(path, KnowledgeError)
    if not isinstance(data, dict):
        raise KnowledgeError("expected a mapping", where=str(path))
    vocab: Vocabulary = read(Vocabulary, data, str(path))
    for name, words in vocab.names.neutral_for.items():
        if not isinstance(words, (list, tuple)) or not all(isinstance(w, str) for w in words):
            raise KnowledgeError(f"names.neutral_for.{name}: expected a list", where=Entry(data, str(path)).where)
    return vocab


# a parameter count (70B, 8x7B, A22B, 1.5b, 405b), the mark of a model name that is not in the catalogue
_PARAMETERS = re.compile(r"(?:\d{1,4}x)?\d{1,4}(?:\.\d{1,2})?[bBmMtT]|[aAeE]\d{1,3}[bB]")


@cache
def public_domains() -> frozenset[str]:
    """The public services' domains (lower case)."""
    return frozenset(d.lower() for d in vocabulary().public_domains)


def public_host(host: str) -> bool:
    """Whether a host name is a public service's: one of the public domains or a name under one."""
    low = host.lower().rstrip(".")
    domains = public_domains()
    parts = low.split(".")
    if any(".".join(parts[i:]) in domains for i in range(len(parts) - 1)):
        return True
    # api.<vendor>.com: a service's endpoint under a public top-level domain, three labels, none internal
    return (
        len(parts) == 3
        and parts[0] in vocabulary().service_labels
        and parts[2] in _PUBLIC_TLDS
        and not any(c.isdigit() for c in parts[1])
    )


_PUBLIC_TLDS = frozenset("com net org io ai co dev app cloud us eu de uk fr jp".split())


class SafeNames:
    """Names that are never masked: the catalogue's models (ids, names, aliases, repositories), GPUs,
    engines, flags and precisions, lower-cased; and the model families, so that an uncatalogued model's
    name ("Mistral-Nemo-12B-Instruct-2407") is recognised by its family word or its parameter count."""

    def __init__(self, names: frozenset[str], families: frozenset[str]) -> None:
        self.names, self.families = names, families
        self._words: dict[str, bool] = {}

    @classmethod
    def of(cls, kb: Knowledge | None) -> SafeNames:
        """The safe names of a knowledge base (None: none but the built-in families)."""
        if kb is None:
            return cls(frozenset(), frozenset(_FAMILIES))
        return _safe_of(kb)

    def word(self, word: str) -> bool:
        """Whether a word of text (a run without spaces) is a catalogue name, a model's name or repository,
        or a part of one: never a host, a user or a secret."""
        known = self._words.get(word)
        if known is None:
            known = self._word(word)
            if len(self._words) < 100_000:
                self._words[word] = known
        return known

    def _word(self, word: str) -> bool:
        low = word.lower().strip("\"'`.,;:()[]{}<>")
        if not low:
            return False
        if low in self.names or low.rsplit("/", 1)[-1] in self.names:
            return True
        return self.model_like(low)

    def model_like(self, low: str) -> bool:
        """A model's name or repository by its shape: a family word, or a parameter count with letters."""
        if _NOT_MODEL.search(low):
            return False  # Mistral-311fern%pN, Llama#7b: symbols and digits run into words make a password
        parts = [p for p in re.split(r"[-_./: ]", low.rsplit("/", 1)[-1]) if p]
        if not parts:
            return False
        if any(_family(p) in self.families for p in parts[:2]):
            return True
        return any(_PARAMETERS.fullmatch(p) for p in parts) and any(p.isalpha() and len(p) > 2 for p in parts)


# what no model name holds: a symbol outside its separators, or a number of two digits and more run into a
# word that is no unit (661pine; 70b, 8x22b, 4bit and 2407 are a model's)
_NOT_MODEL = re.compile(r"[^a-z0-9._/:@ +-]|(?<![a-z0-9])\d{2,12}(?!bit)[a-z]{3}")


def _family(part: str) -> str:
    """The family word of a name's part: its letters before the first digit (qwen3 -> qwen, llama3 -> llama)."""
    m = re.match(r"[a-z]+", part)
    return m.group(0) if m else ""


# families of open models that customers name, beside the catalogue's own (taken from its names)
_FAMILIES = (
    "llama qwen qwq mistral mixtral ministral codestral magistral gemma phi deepseek falcon yi glm chatglm kimi "
    "granite olmo nemotron minimax baichuan internlm starcoder codellama vicuna zephyr dbrx jamba command "
    "gpt opt bloom pythia mpt solar aya exaone hunyuan ernie smollm tinyllama openchat hermes dolphin"
).split()


_SAFE: dict[tuple[str, int], SafeNames] = {}


def _safe_of(kb: Knowledge) -> SafeNames:
    """Built once per knowledge base (by its folder and its number of entries)."""
    ident = (str(kb.root), len(kb.models) + len(kb.gpus) + len(kb.engine_flags))
    if ident not in _SAFE:
        _SAFE[ident] = _build(kb)
    return _SAFE[ident]


def _build(kb: Knowledge) -> SafeNames:
    names: set[str] = set()

    def add(value: str | None) -> None:
        if value:
            low = value.lower()
            names.update({low, low.replace(" ", "-"), low.replace(" ", "_"), low.rsplit("/", 1)[-1]})

    families = set(_FAMILIES)
    for model in kb.models.values():
        for value in (model.id, model.name, model.hf_repo, *model.aliases, *(c.repo for c in model.checkpoints)):
            add(value)
        family = _family(model.name.lower())
        if len(family) > 2:
            families.add(family)
    for gpu in kb.gpus.values():
        for value in (gpu.id, gpu.name, *gpu.aliases):
            add(value)
    for engine in kb.engine_flags.values():
        add(engine.id)
        for flag in engine.flags:
            add(flag.flag)
            add(flag.flag.lstrip("-"))
    for name in (*kb.precisions, *kb.facts, *kb.formulas):
        add(name)
    return SafeNames(frozenset(names), frozenset(families))
