"""The load cache: the validated knowledge and rule records of one pair of folders, kept between runs.

The key lists the names, lengths and checksums (CRC-32 and Adler-32) of every knowledge/**/*.yaml and
rules/*.yaml file and of the loaders' source (this wing and the YAML reader), with the folders' paths
and the advisor's version, so any edit to the data or to the code that reads it makes a fresh load.
Beside the records the entry keeps the SHA-256 hashes the answers name (`Hashes`: the rule base and
the knowledge base as transcripts and JSON record them, formulas.yaml as the generated code checks it),
worked out once when the entry is written: an answer from the cache reads each file once for its
checksums and never loads a hash library. The records are pickled (texts and parsed conditions
reduced to plain data) into a per-user folder:
ADVISOR_CACHE_DIR, else $XDG_CACHE_HOME/gpu-split-advisor, else ~/.cache/gpu-split-advisor.
A missing, stale, corrupt or foreign cache file is ignored and rewritten (temporary file and
os.replace); a folder that cannot be written only costs the time of a fresh load. Only files the
current user owns and nobody else can write are read back.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any, NamedTuple

from advisor import __version__, diskcache
from advisor.i18n import Text
from advisor.kb import knowledge as knowledge_mod
from advisor.kb import rules as rules_mod
from advisor.kb.expr import Expression, Form
from advisor.kb.paths import knowledge_dir, rules_dir

FORMAT = 5  # bump when the records' layout changes
_LOADER_MODULES = (
    "advisor.kb.knowledge",
    "advisor.kb.schema",
    "advisor.structs",
    "advisor.kb.rules",
    "advisor.kb.expr",
    "advisor.kb.pyexpr",  # writes the rule conditions' compiled code the entries keep
    "advisor.kb.cache",
    "advisor.i18n",
    "advisor.yamlio",
    "advisor.diskcache",
)


class Hashes(NamedTuple):
    """The SHA-256 hashes (16 hex digits) the answers name: the rule files, the knowledge files, and
    knowledge/formulas.yaml (which the generated formula code must match; "" where there is none)."""

    rules: str
    knowledge: str
    formulas: str


def files_hash(paths: Iterable[Path]) -> str:
    """The short SHA-256 of the files' names and contents, in name order."""
    import hashlib  # only a fresh load pays for the hash library

    digest = hashlib.sha256()
    for path in sorted(paths):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def file_hash(path: Path) -> str:
    """The short SHA-256 of one file's contents."""
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def hashes_of(kb: knowledge_mod.Knowledge, base: rules_mod.RuleBase) -> Hashes:
    """The hashes of the files `kb` and `base` were loaded from."""
    formulas = kb.root / "formulas.yaml"
    return Hashes(
        files_hash(base.files), files_hash(kb.root.rglob("*.yaml")), file_hash(formulas) if formulas.is_file() else ""
    )


def data_key(knowledge_root: Path, rules_root: Path) -> str:
    """The loaders' code and version, the folders, and every data file's name, length and checksums."""
    parts = [f"{FORMAT} {__version__} {sys.version} {knowledge_root} {rules_root}"]  # marshalled code: per Python
    package = Path(__file__).resolve().parents[1]  # the advisor package: its loaders, imported or not
    for name in _LOADER_MODULES:
        source = package.joinpath(*name.split(".")[1:]).with_suffix(".py")
        parts.append(f"{name} {diskcache.checksum(source.read_bytes())}")
    for root, pattern in ((knowledge_root, "**/*.yaml"), (rules_root, "*.yaml")):
        for path in sorted(root.glob(pattern)):
            parts.append(f"{root.name}/{path.relative_to(root)} {diskcache.checksum(path.read_bytes())}")
    return "\n".join(parts)


def load(
    knowledge_root: Path | None = None, rules_root: Path | None = None, *, cached: bool = True
) -> tuple[knowledge_mod.Knowledge, rules_mod.RuleBase, Hashes | None, bool]:
    """The knowledge and rule bases of the two folders, their files' hashes (None: not worked out, the
    cache was not used), and whether they came from the cache.

    `cached=False` (the rule-base check) always reads and checks the files."""
    knowledge_root = knowledge_root or knowledge_dir()
    rules_root = rules_root or rules_dir()
    folder = diskcache.cache_dir() if cached else None
    key = path = None
    if folder is not None and knowledge_root.is_dir() and rules_root.is_dir():
        try:
            key = data_key(knowledge_root, rules_root)
        except OSError:
            key = None
        if key is not None:
            path = diskcache.entry(folder, "records", f"{knowledge_root.resolve()}\0{rules_root.resolve()}")
            hit = _read(path, key)
            if hit is not None:
                return hit[0], hit[1], hit[2], True
    kb = knowledge_mod.load(knowledge_root)
    base = rules_mod.load(kb, rules_root)
    if path is None or key is None:
        return kb, base, None, False
    hashes = hashes_of(kb, base)
    _write(path, key, (kb, base, hashes))
    return kb, base, hashes, False


def _read(path: Path, key: str) -> tuple[knowledge_mod.Knowledge, rules_mod.RuleBase, Hashes] | None:
    stored = diskcache.read(path, key)
    if not (isinstance(stored, tuple) and len(stored) == 3):
        return None
    kb, base, hashes = stored
    if not isinstance(kb, knowledge_mod.Knowledge) or not isinstance(base, rules_mod.RuleBase):
        return None
    if not (isinstance(hashes, tuple) and len(hashes) == 3 and all(isinstance(h, str) for h in hashes)):
        return None
    return kb, base, Hashes(*hashes)


def _write(path: Path, key: str, entry: tuple[knowledge_mod.Knowledge, rules_mod.RuleBase, Hashes]) -> None:
    kb, base, hashes = entry
    diskcache.write(path, key, (kb, base, tuple(hashes)), _reducers())


def _text(texts: dict[str, str]) -> Text:
    """A Text from its plain form (for unpickling: about 1,500 of them, so without Text's own checks)."""
    return Text.restored(texts)


def _expression(text: str, names: tuple[str, ...], code: bytes | None = None, form: Form | None = None) -> Expression:
    """An Expression from its text, names, compiled Python and checked form (for unpickling): checked
    when the cache was written; it runs as that Python where every fact it reads is known, and is
    interpreted from its form where one is not, without parsing."""
    return Expression.deferred(text, names, code, form)


def _reduce_expression(e: Expression) -> tuple[Any, ...]:
    from advisor.kb.pyexpr import compiled

    return _expression, (e.text, tuple(sorted(e.names)), compiled(e.tree), e.form)


def _reduce_located(mapping: dict[str, Any]) -> tuple[Any, ...]:
    return dict, (dict(mapping),)


def _reducers() -> dict[type, Any]:
    from advisor.yamlio import Located  # imported here: a cache hit never needs the YAML reader

    return {
        Text: lambda t: (_text, (dict(t.texts),)),
        Expression: _reduce_expression,
        Located: _reduce_located,
    }
