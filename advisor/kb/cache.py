"""The load cache: the validated knowledge and rule records of one pair of folders, kept between runs.

The key hashes the names and contents of every knowledge/**/*.yaml and rules/*.yaml file, the
folders' paths, the advisor's version and the source of the loaders (this wing and the YAML
reader), so any edit to the data or to the code that reads it makes a fresh load. The records are
pickled (texts and parsed conditions reduced to plain data) into a per-user folder:
ADVISOR_CACHE_DIR, else $XDG_CACHE_HOME/gpu-split-advisor, else ~/.cache/gpu-split-advisor.
A missing, stale, corrupt or foreign cache file is ignored and rewritten (temporary file and
os.replace); a folder that cannot be written only costs the time of a fresh load. Only files the
current user owns and nobody else can write are read back.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path
from typing import Any

from advisor import __version__, diskcache
from advisor.i18n import Text
from advisor.kb import knowledge as knowledge_mod
from advisor.kb import rules as rules_mod
from advisor.kb.expr import Expression
from advisor.kb.paths import knowledge_dir, rules_dir

FORMAT = 2  # bump when the records' layout changes
_LOADER_MODULES = (
    "advisor.kb.knowledge",
    "advisor.kb.schema",
    "advisor.structs",
    "advisor.kb.rules",
    "advisor.kb.expr",
    "advisor.kb.cache",
    "advisor.i18n",
    "advisor.yamlio",
    "advisor.diskcache",
)


def data_key(knowledge_root: Path, rules_root: Path) -> str:
    """The hash of the loaders' code and version, the folders, and every data file's name and contents."""
    digest = hashlib.sha256(f"{FORMAT} {__version__} {knowledge_root} {rules_root}".encode())
    for name in _LOADER_MODULES:
        module = sys.modules.get(name)
        source = getattr(module, "__file__", None)
        digest.update(name.encode())
        if source:
            digest.update(Path(source).read_bytes())
    for root, pattern in ((knowledge_root, "**/*.yaml"), (rules_root, "*.yaml")):
        for path in sorted(root.glob(pattern)):
            data = path.read_bytes()
            digest.update(f"\0{root.name}\0{path.relative_to(root)}\0{len(data)}\0".encode())
            digest.update(data)
    return digest.hexdigest()


def load(
    knowledge_root: Path | None = None, rules_root: Path | None = None, *, cached: bool = True
) -> tuple[knowledge_mod.Knowledge, rules_mod.RuleBase, bool]:
    """The knowledge and rule bases of the two folders, and whether they came from the cache.

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
            place = hashlib.sha256(f"{knowledge_root.resolve()}\0{rules_root.resolve()}".encode()).hexdigest()[:16]
            path = folder / f"records-{place}.pickle"
            hit = _read(path, key)
            if hit is not None:
                return hit[0], hit[1], True
    kb = knowledge_mod.load(knowledge_root)
    base = rules_mod.load(kb, rules_root)
    if path is not None and key is not None:
        _write(path, key, kb, base)
    return kb, base, False


def _read(path: Path, key: str) -> tuple[knowledge_mod.Knowledge, rules_mod.RuleBase] | None:
    stored = diskcache.read(path, key)
    if not (isinstance(stored, tuple) and len(stored) == 2):
        return None
    kb, base = stored
    if not isinstance(kb, knowledge_mod.Knowledge) or not isinstance(base, rules_mod.RuleBase):
        return None
    return kb, base


def _write(path: Path, key: str, kb: knowledge_mod.Knowledge, base: rules_mod.RuleBase) -> None:
    diskcache.write(path, key, (kb, base), _reducers())


def _text(texts: dict[str, str]) -> Text:
    """A Text from its plain form (for unpickling)."""
    return Text(texts)


def _expression(text: str, names: tuple[str, ...]) -> Expression:
    """An Expression from its text and names (for unpickling): its evaluator is code, not data, so it is
    parsed again on first use; the text was checked when the cache was written."""
    return Expression.deferred(text, names)


def _reduce_located(mapping: dict[str, Any]) -> tuple[Any, ...]:
    return dict, (dict(mapping),)


def _reducers() -> dict[type, Any]:
    from advisor.yamlio import Located  # imported here: a cache hit never needs the YAML reader

    return {
        Text: lambda t: (_text, (dict(t.texts),)),
        Expression: lambda e: (_expression, (e.text, tuple(sorted(e.names)))),
        Located: _reduce_located,
    }
