"""Split normalised text into words: jieba segmentation for Chinese, a regex for the rest.

Chinese is segmented with jieba's dictionary and HMM turned off. rjieba (jieba's algorithm
in Rust) gives exactly the same words with ``hmm=False`` and is an order of magnitude
faster, so it is used when importable; jieba itself is the fallback. Note that
``rjieba.cut(text)`` defaults to ``hmm=True``: the flag must be passed. With HMM on the two
differ (their HMMs guess unknown words differently), so HMM stays off everywhere.

The text is cut into alternating stretches in one regex pass: Chinese stretches (Chinese
characters in jieba's range, plus the punctuation and spaces between them, so a sentence is
one call to the segmenter) and everything else (Latin/Cyrillic/... words and numbers, found
by ``_WORD``). Latin is never glued to Chinese, so "iphone15发布会" gives "iphone15",
"发布会" whichever segmenter runs.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from typing import Literal

from worker.engine import disk_cache

__all__ = ["Backend", "char_classes", "cutter", "backend", "kept_char_classes", "tokenize", "tokenize_with"]

Backend = Literal["rjieba", "jieba"]
Cut = Callable[[str], list[str]]

# jieba's own range of Chinese characters (``jieba.re_han_default`` minus its Latin part).
_HAN = "\u4e00-\u9fd5"
# A Chinese stretch starts with a Chinese character and continues over Chinese characters
# and non-word characters (punctuation, spaces, symbols); digits and letters end it.
_SPLIT = re.compile(f"([{_HAN}][{_HAN}\\W]*)")
_WORD = re.compile(
    # initialisms, final dot dropped so "u.s." and "u.s" agree: u.s, e.g, a.m (bounded and
    # possessive: a long "a.a.a.a…" run must not be rescanned from each of its letters)
    r"[^\W\d_](?:\.[^\W\d_]){1,9}+(?![^\W_])"
    # words and numbers; inside a word a hyphen or apostrophe (covid-19, don't), inside a
    # number also . , : / (3.14, 1,000, 12:30, 24/7). Possessive: what follows a run of word
    # characters is never a word character, so backtracking could not change a match, and
    # skipping it makes English tokenizing ~30% faster.
    r"|[^\W_]++(?:(?:['\-]|(?<=\d)[.,:/](?=\d))[^\W_]++)*+"
)


@cache
def cutter(name: Backend | None = None) -> Cut:
    """A function cutting Chinese text into jieba words (HMM off), by backend name.

    ``None`` picks rjieba when it is importable, else jieba.
    """
    if name is None:
        try:
            return cutter("rjieba")
        except ImportError:
            return cutter("jieba")
    if name == "rjieba":
        import rjieba

        def cut_rjieba(text: str) -> list[str]:
            return rjieba.cut(text, False)

        return cut_rjieba
    if name == "jieba":
        import jieba

        jieba.setLogLevel(60)

        def cut_jieba(text: str) -> list[str]:
            return list(jieba.cut(text, HMM=False))

        return cut_jieba
    raise ValueError(f"unknown segmenter backend {name!r}")


def backend() -> Backend:
    """Name of the backend ``tokenize`` uses."""
    return "rjieba" if cutter() is cutter("rjieba") else "jieba"


ALNUM, DECIMAL = 1, 2


def char_classes() -> bytes:
    """Byte ``c`` = ``ALNUM`` if ``chr(c).isalnum()`` plus ``DECIMAL`` if ``chr(c).isdecimal()``,
    for every BMP code point: the two classes ``re`` tests for ``\\w`` (with "_") and ``\\d``,
    handed to the native tokenizer (``worker/native``) so it classifies as Python does."""
    return bytes((ALNUM if c.isalnum() else 0) | (DECIMAL if c.isdecimal() else 0) for c in map(chr, range(0x10000)))


def kept_char_classes() -> bytes:
    """:func:`char_classes` from the cache, else computed (and stored for the next process)."""
    return disk_cache.kept(
        lambda: disk_cache.unicode_inputs(__file__),
        "classes",
        char_classes,
        bytes,
        lambda raw: raw if len(raw) == 0x10000 else None,
    )


def tokenize_with(text: str, cut: Cut) -> list[str]:
    """Words of normalised ``text`` in order, Chinese stretches cut by ``cut``.

    Whitespace, punctuation and symbol tokens are dropped; numbers are words.
    """
    tokens: list[str] = []
    for i, part in enumerate(_SPLIT.split(text)):
        if i % 2:
            tokens.extend(filter(str.isalnum, cut(part)))
        elif part:
            tokens.extend(_WORD.findall(part))
    return tokens


def tokenize(text: str) -> list[str]:
    """Words of ``text`` (already passed through ``normalize``), in order."""
    return tokenize_with(text, cutter())
