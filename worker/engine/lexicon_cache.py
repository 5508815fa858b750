"""The native pipeline's lexicon table, kept on disk between processes.

Building it parses jieba's 270k-word IDF table and hashes every word: about half a second,
paid by every ``neardup scan`` and worker at start. The table is a pure function of its
inputs (jieba's IDF file, our English table and stopword lists, and the code that builds
it), so it is stored once under a name that hashes all of them, and a changed input or
changed code simply finds no file and builds anew. A cache that cannot be read or written
is skipped: the table is then built as before.

The directory is ``NEARDUP_CACHE_DIR``, else ``$XDG_CACHE_HOME/neardup``, else
``~/.cache/neardup``.
"""

from __future__ import annotations

import hashlib
import os
import struct
import sys
import tempfile
from importlib import resources
from pathlib import Path

from worker.engine import features, idf, simhash, stopwords

_MAGIC = b"neardup-lexicon\n"
_HEADER = struct.Struct("<IIddQ")  # shift, width, zh_default, en_default, bytes of rows


def cache_dir() -> Path:
    """Where derived tables are kept between runs."""
    chosen = os.environ.get("NEARDUP_CACHE_DIR")
    if chosen:
        return Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "neardup"


def _key() -> str:
    """A digest of everything the table is built from: data files and the building code."""
    digest = hashlib.blake2b(digest_size=16)
    data = resources.files("worker").joinpath("data")
    inputs = [idf._jieba_idf_path().read_bytes(), data.joinpath(idf._EN_TABLE).read_bytes()]
    inputs += [data.joinpath(name).read_bytes() for name in stopwords._FILES]
    for module in (features, idf, simhash, stopwords, sys.modules[__name__]):
        inputs.append(Path(module.__file__ or "").read_bytes())
    for part in inputs:
        digest.update(len(part).to_bytes(8, "little") + part)
    return digest.hexdigest()


def _decode(raw: bytes) -> features.LexiconTable | None:
    if not raw.startswith(_MAGIC) or len(raw) < len(_MAGIC) + _HEADER.size:
        return None
    shift, width, zh_default, en_default, size = _HEADER.unpack_from(raw, len(_MAGIC))
    rows = raw[len(_MAGIC) + _HEADER.size :]
    return features.LexiconTable(rows, shift, width, zh_default, en_default) if len(rows) == size else None


def _encode(table: features.LexiconTable) -> bytes:
    header = _HEADER.pack(table.shift, table.width, table.zh_default, table.en_default, len(table.rows))
    return _MAGIC + header + table.rows


def _build() -> features.LexiconTable:
    return features.lexicon_table()


def cached_lexicon_table() -> features.LexiconTable:
    """The lexicon table from the cache, else built (and stored for the next process)."""
    try:
        path = cache_dir() / f"lexicon-{_key()}.bin"
        found = _decode(path.read_bytes()) if path.is_file() else None
    except OSError:
        return _build()
    if found is not None:
        return found
    table = _build()
    store_atomically(path, _encode(table))
    return table


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
