"""Inverse document frequency: how much a word says about which story a text tells.

Two tables, chosen by script:

* Chinese (any token with a Chinese character): jieba's own IDF table,
  ``jieba/analyse/idf.txt`` inside the installed jieba package (270k words; read from there,
  not copied). Unknown words get the table's median, as ``jieba.analyse`` does.
* Everything else (English, numbers, other scripts): ``worker/data/idf_en.txt.gz``, document
  frequencies built by ``scripts/build_en_idf.py`` from the English Wikipedia sample that
  gensim ships for its tests (106 articles; see that script for source and method). Weight:
  ``idf = ln((N + 1) / (df + 1)) + 1`` with ``N`` documents (smoothed, so a word present in
  every document still weighs 1 > 0). Tokens missing from the table occurred in at most one
  article, so they get the formula at ``df = 1``: the highest English weight.

Both tables are loaded once, on first use, into one :class:`Vocabulary`: a dict from token to
row number plus an aligned weight array, so a whole text's tokens are weighed in one numpy
gather.

Every weight (the defaults too) is rounded to the nearest float32 value. All of them are
>= 0.5, so each is a multiple of 2**-24 and a shingle's mean of two a multiple of 2**-25: sums
of a document's weights are then exact in float64 in any order, and SimHash comes out the
same from numpy's BLAS as from the native loop (``worker/native``).
"""

from __future__ import annotations

import gzip
import importlib.util
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

import numpy as np

__all__ = ["Vocabulary", "default_idf", "idf", "vocabulary"]

_HAN = re.compile("[\u3400-\u9fff]")
_EN_TABLE = "idf_en.txt.gz"


def _jieba_idf_path() -> Path:
    spec = importlib.util.find_spec("jieba")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("jieba is required for Chinese IDF weights")
    return Path(spec.submodule_search_locations[0]) / "analyse" / "idf.txt"


def _chinese() -> dict[str, float]:
    table: dict[str, float] = {}
    with open(_jieba_idf_path(), encoding="utf-8") as lines:
        for line in lines:
            word, _, value = line.rstrip("\n").rpartition(" ")
            if word and _HAN.search(word):
                table[word] = float(value)
    return table


def _english() -> tuple[dict[str, float], float]:
    """(idf per token, idf of an unseen token)."""
    raw = resources.files("worker").joinpath("data", _EN_TABLE).read_bytes()
    n_docs = 0
    counts: dict[str, int] = {}
    for line in gzip.decompress(raw).decode("utf-8").splitlines():
        if line.startswith("# documents:"):
            n_docs = int(line.split(":", 1)[1])
        elif line and not line.startswith("#"):
            token, _, df = line.partition("\t")
            counts[token] = int(df)
    if n_docs <= 0:
        raise ValueError(f"{_EN_TABLE} has no '# documents:' header")

    def weight(df: int) -> float:
        return math.log((n_docs + 1) / (df + 1)) + 1.0

    return {tok: weight(df) for tok, df in counts.items()}, weight(1)


def _median(values: Iterable[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


@dataclass(frozen=True, slots=True)
class Vocabulary:
    """Every token with a known IDF, numbered: ``rows[token]`` indexes ``words`` and ``weights``.

    Row numbers let a caller look up all distinct tokens of a text at once and gather their
    weights (and anything else it keeps aligned with ``words``) with numpy instead of one
    Python-level lookup per token.
    """

    rows: dict[str, int]
    words: list[str]
    weights: np.ndarray
    zh_default: float
    en_default: float


@cache
def vocabulary() -> Vocabulary:
    """Both tables merged (Chinese wins a clash), loaded once."""
    chinese = _chinese()
    english, en_default = _english()
    zh_default = _median(chinese.values())
    merged = {tok: w for tok, w in english.items() if not _HAN.search(tok)}
    merged.update(chinese)
    words = list(merged)
    weights = np.fromiter(merged.values(), dtype=np.float64, count=len(merged))
    return Vocabulary(
        dict(zip(words, range(len(words)), strict=False)),
        words,
        _float32(weights),
        float(_float32(zh_default)),
        float(_float32(en_default)),
    )


def _float32(values: np.ndarray | float) -> np.ndarray:
    """Weights rounded to float32 values (kept as float64) so that their sums are exact."""
    return np.asarray(values, dtype=np.float32).astype(np.float64)


def is_chinese(token: str) -> bool:
    """Whether a token is Chinese for weighing: it has a CJK ideograph."""
    return _HAN.search(token) is not None


def default_idf(token: str) -> float:
    """Weight of a token missing from the tables: Chinese median, or English unseen weight."""
    vocab = vocabulary()
    return unseen_weight(token, vocab.zh_default, vocab.en_default)


def unseen_weight(token: str, zh_default: float, en_default: float) -> float:
    """The rule of :func:`default_idf`, for callers that hold the two defaults already."""
    return zh_default if is_chinese(token) else en_default


def idf(token: str) -> float:
    """IDF weight of one normalised token; always > 0."""
    vocab = vocabulary()
    row = vocab.rows.get(token)
    return default_idf(token) if row is None else float(vocab.weights[row])
