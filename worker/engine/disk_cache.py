"""Tables derived from data files and code, kept on disk between processes.

Every ``neardup`` process, worker or scan, needs tables that are slow to build next to a short
scan (the lexicon, normalisation's character tables, OpenCC's trigger characters, the sound
table) and that are pure functions of their inputs. Each is stored once under a name that
hashes all of its inputs, so a changed input or changed code finds no file and builds anew. A
cache that cannot be read or written is never a reason to fail: the table is built as if there
were none.

The directory is ``NEARDUP_CACHE_DIR``, else ``$XDG_CACHE_HOME/neardup``, else
``~/.cache/neardup``.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import unicodedata
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")


def cache_dir() -> Path:
    """Where derived tables are kept between runs."""
    chosen = os.environ.get("NEARDUP_CACHE_DIR")
    if chosen:
        return Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "neardup"


def path_for(kind: str, inputs: Iterable[bytes]) -> Path:
    """The file of a ``kind`` of table built from ``inputs`` (each one's length is hashed too,
    so two inputs cannot run into each other)."""
    digest = hashlib.blake2b(digest_size=16)
    for part in inputs:
        digest.update(len(part).to_bytes(8, "little") + part)
    return cache_dir() / f"{kind}-{digest.hexdigest()}.bin"


def kept(
    inputs: Callable[[], Iterable[bytes]],
    kind: str,
    build: Callable[[], T],
    encode: Callable[[T], bytes],
    decode: Callable[[bytes], T | None],
) -> T:
    """The table ``build`` makes, read from the cache where a process stored it before (``decode``
    gives None for a file it does not accept), else built and stored for the next process."""
    try:
        path = path_for(kind, inputs())
        found = decode(path.read_bytes()) if path.is_file() else None
    except OSError:
        return build()
    if found is not None:
        return found
    table = build()
    store_atomically(path, encode(table))
    return table


def unicode_inputs(module_file: str) -> list[bytes]:
    """The inputs of a table a module derives from ``unicodedata``: Python's Unicode version,
    and the module's code."""
    return [unicodedata.unidata_version.encode(), Path(module_file).read_bytes()]


def store_atomically(path: Path, raw: bytes) -> None:
    """Write ``raw`` to ``path`` atomically (a process reading meanwhile sees all or nothing);
    a directory that cannot be written is skipped: the caller rebuilds next time."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}-")
    except OSError:
        return
    try:
        with os.fdopen(fd, "wb") as tmp:
            tmp.write(raw)
        os.replace(name, path)
    except OSError:
        Path(name).unlink(missing_ok=True)


def text(raw: bytes) -> str | None:
    """A table stored as UTF-8 text (None for an empty or damaged file)."""
    try:
        return raw.decode("utf-8") or None
    except UnicodeDecodeError:
        return None
