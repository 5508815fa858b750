"""The native pipeline's lexicon table, kept on disk between processes (:mod:`worker.engine.disk_cache`).

Building it parses jieba's 270k-word IDF table and hashes every word: about half a second,
paid by every ``neardup scan`` and worker at start. The table is a pure function of its
inputs (jieba's IDF file, our English table and stopword lists, and the code that builds
it), which name its file.
"""

from __future__ import annotations

import struct
import sys
from importlib import resources
from pathlib import Path

from worker.engine import disk_cache, features, idf, simhash, stopwords

_MAGIC = b"neardup-lexicon\n"
_HEADER = struct.Struct("<IIddQ")  # shift, width, zh_default, en_default, bytes of rows


def _inputs() -> list[bytes]:
    """Everything the table is built from: data files and the building code."""
    data = resources.files("worker").joinpath("data")
    inputs = [idf._jieba_idf_path().read_bytes(), data.joinpath(idf._EN_TABLE).read_bytes()]
    inputs += [data.joinpath(name).read_bytes() for name in stopwords._FILES]
    for module in (features, idf, simhash, stopwords, sys.modules[__name__]):
        inputs.append(Path(module.__file__ or "").read_bytes())
    return inputs


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
    # ``_build`` looked up at each call: the tests count the builds.
    return disk_cache.kept(_inputs, "lexicon", lambda: _build(), _encode, _decode)
