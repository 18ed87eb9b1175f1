"""A per-user folder of pickled results that are expensive to rebuild (validated records, parsed YAML).

Guarantees: an entry is only read back when the current user owns it and nobody else can write
it, and only when it was stored under the same key; a missing, stale, corrupt or foreign entry is
None, never an error. Entries are written to a temporary file and renamed into place. A folder
that cannot be written only costs the next run the rebuild. At most KEEP entries of
one kind are kept: a write removes the oldest beyond that. The folder is ADVISOR_CACHE_DIR, else
$XDG_CACHE_HOME/gpu-split-advisor, else ~/.cache/gpu-split-advisor.

Unpickling runs without the cyclic garbage collector (tens of thousands of new objects and no
garbage). A program that keeps what it loads for its whole life (the command line: `keep_loaded`)
also takes everything alive after a read out of the collector's later scans (`gc.freeze`): about a
tenth of a cold answer's instructions. A library caller (the tests, a program embedding the advisor)
leaves that off, since it would keep any cyclic garbage alive at that moment for good.
"""

from __future__ import annotations

import copyreg
import gc
import io
import os
import pickle
import zlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

FORMAT = 1  # bump when the entry layout changes
_KEEP_LOADED = False  # see `keep_loaded`
KEEP = 8  # entries of one kind kept (one per checkout or copy of the data); older ones are removed on a write


def checksum(data: bytes) -> str:
    """The length, CRC-32 and Adler-32 of `data`: enough to notice any edit to a file, without loading a
    hash library (the entries' keys are made of these; an entry is no security boundary, see `read`)."""
    return f"{len(data)}:{zlib.crc32(data):08x}{zlib.adler32(data):08x}"


def entry(folder: Path, kind: str, name: str) -> Path:
    """The entry of `kind` for `name` (a file's path, a pair of folders) in `folder`."""
    return folder / f"{kind}-{zlib.crc32(name.encode()):08x}.pickle"


def keep_loaded() -> None:
    """Declare this process one that keeps what it loads until it exits (the command line): from now on
    each read freezes what is alive out of the garbage collector's scans."""
    global _KEEP_LOADED
    _KEEP_LOADED = True


def cache_dir() -> Path | None:
    """The per-user cache folder, or None where no home or cache folder is known."""
    override = os.environ.get("ADVISOR_CACHE_DIR")
    if override:
        return Path(override)
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg and os.path.isabs(xdg):
        return Path(xdg) / "gpu-split-advisor"
    home = os.environ.get("HOME") or os.path.expanduser("~")
    if not home or home == "~" or not os.path.isabs(home):
        return None
    return Path(home) / ".cache" / "gpu-split-advisor"


def read(path: Path, key: str) -> Any | None:
    """The value stored at `path` under `key`, or None."""
    try:
        with open(path, "rb") as f:
            st = os.fstat(f.fileno())
            if st.st_uid != os.getuid() or st.st_mode & 0o022:
                return None
            data = f.read()
        collecting = gc.isenabled()
        gc.disable()  # tens of thousands of new objects, no garbage: collections would only scan them
        try:
            stored = pickle.loads(data)
        finally:
            if collecting:
                if _KEEP_LOADED:
                    gc.freeze()  # and they stay: later collections need not scan them either
                gc.enable()
        if not (isinstance(stored, tuple) and len(stored) == 3 and stored[0] == FORMAT and stored[1] == key):
            return None
        return stored[2]
    except Exception:  # noqa: BLE001 - an entry that cannot be read is no entry; the caller rebuilds
        return None


def write(path: Path, key: str, value: Any, reducers: Mapping[type, Any] | None = None) -> None:
    """Store `value` under `key` at `path` (pickled with extra `reducers`); failures are silent."""
    import tempfile  # only a miss writes; a hit should not pay for this import

    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)  # first: an unmakeable folder costs no pickling
        buffer = io.BytesIO()
        pickler = pickle.Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL)
        if reducers:
            pickler.dispatch_table = {**copyreg.dispatch_table, **reducers}
        pickler.dump((FORMAT, key, value))
        fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}-", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(buffer.getvalue())
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
        _prune(path)
    except Exception:  # noqa: BLE001 - a read-only or full cache folder only costs the next run a rebuild
        return


def _prune(path: Path) -> None:
    """Remove all but the KEEP newest entries of `path`'s kind (the name before its first '-'), so a
    folder that sees many copies of the data (upgrades, clones, temporary test copies) stays small."""
    kind = path.name.split("-", 1)[0]
    entries = []
    for other in path.parent.glob(f"{kind}-*.pickle"):
        try:
            entries.append((other.stat().st_mtime, other))
        except OSError:
            continue
    entries.sort(reverse=True)
    for _, old in entries[KEEP:]:
        try:
            old.unlink()
        except OSError:
            continue
