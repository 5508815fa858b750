"""Chinese characters folded to their sound, so that an input method's slip is no change.

Chinese is typed through pinyin: a slip picks the wrong character of the *same syllable*
(在/再, 的/得, 文件/问件), and in a post of fifteen characters that one wrong character breaks
three of its thirteen character 3-grams, and a six-character notice matches nothing at all
(it must equal the stored one). Folded to sound, every character of one toneless syllable
becomes the same character (the first of them in code-point order), and such a slip changes
nothing the short-text part sees (:mod:`worker.engine.shorttext`). What folding merges
otherwise, two *different* posts whose every three consecutive syllables agree, real text
hardly has.

Readings are pypinyin's (a character's most common reading first; tones dropped). Only the
CJK Unified Ideographs block is folded: the normaliser has already turned Traditional into
Simplified, and rarer blocks hold names and archaic forms, not slips. Building the table
means loading pypinyin's 40k-entry dictionary, so it is kept on disk between processes (in
native byte order, in :mod:`worker.engine.disk_cache`'s directory) under a name that
hashes its inputs.
"""

from __future__ import annotations

import importlib.util
import unicodedata
from array import array
from functools import cache
from pathlib import Path
from typing import Any, cast

from worker.engine import disk_cache

__all__ = ["fold_sounds", "native_folder", "sound_table", "translate"]

_FIRST, _LAST = 0x4E00, 0x9FFF
_SIZE = _LAST - _FIRST + 1


def fold_sounds(text: str) -> str:
    """``text`` with every CJK ideograph replaced by the first ideograph of its syllable."""
    return translate(text, sound_table(), _sound_folder())


def translate(text: str, table: dict[int, int], folder: Any | None) -> str:
    """``text.translate(table)``, by ``folder`` (:func:`native_folder` of that table) where there
    is one: ``str.translate`` pays a dictionary lookup a character, and a short text is folded
    twice."""
    folded = None if folder is None else folder.fold(text)
    return text.translate(table) if folded is None else cast(str, folded)


def native_folder(table: dict[int, int]) -> Any | None:
    """``worker._native.Folder`` of ``table``, or None without ``worker._native``."""
    try:
        from worker import _native
    except ImportError:
        return None
    return _native.Folder(list(table.items()))


@cache
def _sound_folder() -> Any | None:
    return native_folder(sound_table())


@cache
def sound_table() -> dict[int, int]:
    """``str.translate`` table: ideograph -> representative of its toneless syllable (only
    the ideographs that change)."""
    codes = kept_codes()
    return {_FIRST + i: code for i, code in enumerate(codes) if code != _FIRST + i}


def kept_codes() -> list[int]:
    """Each ideograph's representative, in code-point order: from the cache, else built (and
    stored for the next process)."""
    return disk_cache.kept(_inputs, "sounds", lambda: _build(), _encode, _decode)


def _build() -> list[int]:
    from pypinyin.pinyin_dict import pinyin_dict

    first: dict[str, int] = {}
    codes = list(range(_FIRST, _LAST + 1))
    for i, code in enumerate(codes):
        readings = pinyin_dict.get(code)
        if readings:
            codes[i] = first.setdefault(_toneless(readings.split(",")[0]), code)
    return codes


def _toneless(reading: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFD", reading) if not unicodedata.combining(c))


def _encode(codes: list[int]) -> bytes:
    return array("H", codes).tobytes()


def _decode(raw: bytes) -> list[int] | None:
    if len(raw) != 2 * _SIZE:
        return None
    codes = array("H")
    codes.frombytes(raw)
    return codes.tolist()


def _inputs() -> list[bytes]:
    """What the table is built from: pypinyin's readings and this module."""
    spec = importlib.util.find_spec("pypinyin")  # located, not imported: that loads its dictionary
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("pypinyin is required to fold Chinese characters to their sound")
    return [(Path(spec.submodule_search_locations[0]) / "pinyin_dict.json").read_bytes(), Path(__file__).read_bytes()]
