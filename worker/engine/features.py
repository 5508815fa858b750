"""Weighted features of a token sequence: what SimHash and MinHash fingerprint.

Two kinds of feature:

* Word unigrams, stopwords dropped: what the text talks about.
* Word n-gram shingles (``n`` words in a row, stopwords included): how it says it. Keeping
  stopwords in shingles keeps phrase order, so a rewrite that reuses the words in another
  order gets different shingles.

With ``fold`` (``Settings.fold_words``) a word of Latin letters is named by its
:func:`skeleton` in both kinds, and weighed as the word it is: a copy's letter slips then change
fewer of a story's features. (An English word has four or five letters, a Chinese one one or
two characters: slips at one rate of characters change twice as many English words.)

Weight of a feature = TF x IDF: each occurrence adds the feature's IDF. A shingle's IDF is
the mean of its words' IDFs: a shingle of rare words weighs like a rare word, one made of
stopwords ("of the") weighs little, and its weight stays on the same scale as unigrams
whatever ``n`` is (a sum would grow with ``n``; a max would let one rare word lift every
shingle around it).

Two forms of the same features:

* :func:`features` — a readable ``feature string -> weight`` dict (shingles joined by
  ``SHINGLE_SEP``), for tests and inspection.
* :func:`hashed_features` — what :func:`worker.engine.fingerprint.fingerprint` uses: the same
  features as (64-bit hash, weight) arrays, built without a Python loop over features.
  Each token is hashed once with MurmurHash3; each distinct hash is looked up once in a
  numpy hash table of the IDF vocabulary (IDF and stopword flag in one gather); shingle
  hashes are mixed from word hashes in numpy. A feature that occurs twice is listed twice (its
  weights add up in SimHash, and MinHash ignores repeats), so nothing is merged.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np

from worker.engine.idf import default_idf, idf, unseen_weight, vocabulary
from worker.engine.simhash import feature_hashes, shingle_hashes
from worker.engine.stopwords import stopwords

__all__ = ["SHINGLE_SEP", "HashedFeatures", "features", "hashed_features", "skeleton"]

# Unit separator: a control character, removed by ``normalize`` and never part of a token,
# so a shingle can neither collide with a unigram nor with another shingle.
SHINGLE_SEP = "\x1f"


_VOWELS = re.compile(r"[aeiouy]+")
_REPEATS = re.compile(r"(.)\1+")
_LATIN_WORD = re.compile(r"[a-z]+")


def skeleton(token: str) -> str:
    """A word of Latin letters as its first letter and the consonants after it, each run of
    one letter once ("tomorrow" and "tommorow" are both "tmrw"); any other token as it is.

    What a copy's letter slips do to a word: a dropped, doubled or mistyped vowel, a doubled
    consonant, two letters swapped around a vowel ("teh"). Folded, a story with a slip in one
    word of six keeps most of its features. Distinct words that fold alike ("bat", "bit") are
    few among a long text's features, and two short texts are told apart on their characters.
    """
    if len(token) < 3 or not _LATIN_WORD.fullmatch(token):
        return token
    return _REPEATS.sub(r"\1", token[0] + _VOWELS.sub("", token[1:]))


def features(tokens: Sequence[str], n: int = 2, fold: bool = False) -> dict[str, float]:
    """Feature -> weight for ``tokens`` (from ``tokenize``); ``n = 1`` gives unigrams only;
    ``fold``: words by their :func:`skeleton`, weighed as themselves.

    Deterministic: the same tokens always give the same dict (insertion order included).
    """
    _check(n)
    counts = Counter(tokens)
    weight = {t: idf(t) for t in counts}
    stop = stopwords()
    named = skeleton if fold else str
    out: dict[str, float] = {}
    for t, c in counts.items():
        if t not in stop:
            out[named(t)] = out.get(named(t), 0.0) + c * weight[t]
    if n > 1:
        ws = list(map(weight.__getitem__, tokens))
        shown = list(map(named, tokens))
        grams = map(SHINGLE_SEP.join, zip(*(shown[i:] for i in range(n)), strict=False))
        for gram, window in zip(grams, zip(*(ws[i:] for i in range(n)), strict=False), strict=False):
            out[gram] = out.get(gram, 0.0) + sum(window) / n
    return out


@dataclass(frozen=True, slots=True)
class HashedFeatures:
    """Features as aligned arrays; ``words`` is the number of distinct tokens (by hash)."""

    hashes: np.ndarray
    weights: np.ndarray
    words: int


def hashed_features(
    tokens: Sequence[str], n: int = 2, table: LexiconTable | None = None, fold: bool = False
) -> HashedFeatures:
    """The features of :func:`features` as hashes and weights, one row per occurrence;
    ``table``: the lexicon already built (:func:`lexicon_table`), else it is built here.

    Unigram hashes are ``feature_hash(word)``; shingle hashes are ``shingle_hashes`` of
    their words' hashes. A feature that occurs ``c`` times has ``c`` rows whose weights sum
    to its weight in :func:`features`.
    """
    _check(n)
    if not tokens:
        return HashedFeatures(np.empty(0, dtype=np.uint64), np.empty(0, dtype=np.float64), 0)
    hashes = feature_hashes(tokens)
    # Each distinct word is weighed once: table lookups miss the CPU cache, sorting does not.
    order = np.argsort(hashes)
    ordered = hashes[order]
    new = np.empty(ordered.size, dtype=bool)
    new[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
    distinct = ordered[new]
    lexicon = _built_lexicon() if table is None else _lexicon_of(table)
    idf, is_unigram = _weigh(lexicon, distinct, order[new], tokens)
    back = np.searchsorted(distinct, hashes)
    weights = idf[back]
    unigram = is_unigram[back]
    if fold:  # weighed as the words they are, named by their skeletons
        folded = [skeleton(t) for t in tokens]
        if folded != tokens:
            hashes = feature_hashes(folded)
    windows = len(tokens) - n + 1
    if n == 1 or windows <= 0:
        return HashedFeatures(hashes[unigram], weights[unigram], distinct.size)
    total = weights[:windows].copy()
    for i in range(1, n):
        total += weights[i : i + windows]
    total /= n
    grams = shingle_hashes([hashes[i : i + windows] for i in range(n)])
    return HashedFeatures(
        np.concatenate((hashes[unigram], grams)), np.concatenate((weights[unigram], total)), distinct.size
    )


@dataclass(frozen=True, slots=True)
class _Lexicon:
    """The IDF vocabulary (plus every stopword) as a compact numpy open-addressing table.

    Row ``r`` of ``table`` is (low 32 bits of a word's hash, its IDF as float32 bits,
    negated for a stopword), or zeros. A word's home row is the top bits of its hash
    (``>> shift``) and it sits within ``len(window)`` rows after it (linear probing, filled
    in hash order). An unknown word matches a known word's tag by chance with probability
    about 2**-31 per lookup (there are ~2 words in a window). A lookup gathers every
    token's home rows in one fancy index: about one cache miss per token, and the misses
    overlap. Measured inside the pipeline (where segmentation has evicted the table from
    cache) that is ~1.5x faster than ``searchsorted`` over sorted hashes, whose binary search
    is a chain of dependent misses, and several times faster than a dict lookup per token.
    """

    table: np.ndarray
    shift: np.uint64
    window: np.ndarray
    plain: LexiconTable  # the same rows as bytes, with the weights of words not in them


@cache
def _lexicon_of(table: LexiconTable) -> _Lexicon:
    """The lexicon of a table the native pipeline reads too, from its disk cache: building it
    from the IDF files is slow, and a text the native pipeline declined paid for it mid-run."""
    rows = np.frombuffer(table.rows, dtype="<u4").reshape(-1, 2)
    return _Lexicon(rows, np.uint64(table.shift), np.arange(table.width, dtype=np.uint64), table)


@cache
def _built_lexicon() -> _Lexicon:
    """The lexicon built from the IDF tables and stopword lists."""
    vocab = vocabulary()
    stop = stopwords()
    missing = sorted(w for w in stop if w not in vocab.rows)
    words = vocab.words + missing
    weights = np.concatenate((vocab.weights, np.array([default_idf(w) for w in missing], dtype=np.float64)))
    stop_rows = [vocab.rows[w] for w in stop if w in vocab.rows] + list(range(len(vocab.words), len(words)))
    weights[stop_rows] *= -1.0
    hashes = feature_hashes(words)
    order = np.argsort(hashes)
    hashes, weights = hashes[order], weights[order]
    # A load factor under 1/3 keeps every word within a handful of rows of its home row.
    bits = (hashes.size - 1).bit_length() + 1
    shift = np.uint64(64 - bits)
    home = (hashes >> shift).astype(np.intp)
    rank = np.arange(hashes.size)
    # Linear probing in hash order: row[k] = max(home[k], row[k - 1] + 1), as one running max.
    row = rank + np.maximum.accumulate(home - rank)
    width = int((row - home).max()) + 1
    table = np.zeros((max(1 << bits, int(row[-1]) + 1) + width, 2), dtype=np.uint32)
    table[row, 0] = hashes.astype(np.uint32)
    table[row, 1] = weights.astype(np.float32).view(np.uint32)
    rows = np.ascontiguousarray(table, dtype="<u4").tobytes()
    plain = LexiconTable(rows, int(shift), width, vocab.zh_default, vocab.en_default)
    return _Lexicon(table, shift, np.arange(width, dtype=np.uint64), plain)


@dataclass(frozen=True, slots=True)
class LexiconTable:
    """The lexicon as plain bytes and numbers, for the native pipeline (``worker/native``),
    which then weighs every token exactly as :func:`hashed_features` does."""

    rows: bytes
    shift: int
    width: int
    zh_default: float
    en_default: float


def lexicon_table() -> LexiconTable:
    """The IDF lookup table of :func:`hashed_features` (rows as little-endian uint32 pairs),
    built from its inputs (:mod:`worker.engine.lexicon_cache` keeps it between processes)."""
    return _built_lexicon().plain


def _weigh(
    lexicon: _Lexicon, hashes: np.ndarray, where: np.ndarray, tokens: Sequence[str]
) -> tuple[np.ndarray, np.ndarray]:
    """(IDF, is-a-unigram-feature i.e. not a stopword) of words given by hash.

    ``tokens[where[i]]`` is the word with ``hashes[i]``, needed only for words missing from
    the table.
    """
    rows = lexicon.table[(hashes >> lexicon.shift)[:, None] + lexicon.window]
    match = rows[:, :, 0] == hashes.astype(np.uint32)[:, None]
    # At most one row matches; known weights are never 0, so 0 means "not in the table".
    signed = (rows[:, :, 1].view(np.float32) * match).sum(axis=1, dtype=np.float64)
    unknown = signed == 0.0
    if unknown.any():
        # Never a stopword: every stopword is in the lexicon.
        plain = lexicon.plain
        signed[unknown] = [
            unseen_weight(token, plain.zh_default, plain.en_default)
            for token in map(tokens.__getitem__, where[unknown].tolist())
        ]
    return np.abs(signed), signed > 0


def _check(n: int) -> None:
    if n < 1:
        raise ValueError(f"shingle size n must be >= 1, got {n}")
