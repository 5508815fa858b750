"""Chinese and English stopwords: words too common to say what a text is about.

The lists live in ``worker/data/stopwords_{zh,en}.txt`` (one word per line, ``#`` starts a
comment) and are read once, on first use. Words are stored as ``normalize`` + ``tokenize``
produce them: lower case, Simplified Chinese, ASCII apostrophes.
"""

from __future__ import annotations

from functools import cache
from importlib import resources

__all__ = ["stopwords", "is_stopword"]

_FILES = ("stopwords_zh.txt", "stopwords_en.txt")


def _read(name: str) -> set[str]:
    text = resources.files("worker").joinpath("data", name).read_text(encoding="utf-8")
    words = (line.strip() for line in text.splitlines())
    return {w for w in words if w and not w.startswith("#")}


@cache
def stopwords() -> frozenset[str]:
    """All stopwords, both languages (their scripts do not overlap)."""
    return frozenset().union(*map(_read, _FILES))


def is_stopword(token: str) -> bool:
    """Whether ``token`` carries too little meaning to be a feature on its own."""
    return token in stopwords()
