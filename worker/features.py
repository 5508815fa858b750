"""Weighted features of a token sequence: what SimHash and MinHash fingerprint.

Two kinds of feature:

* Word unigrams, stopwords dropped: what the text talks about.
* Word n-gram shingles (``n`` words in a row, stopwords included): how it says it. Keeping
  stopwords in shingles keeps phrase order, so a rewrite that reuses the words in another
  order gets different shingles.

Weight of a feature = TF x IDF: each occurrence adds the feature's IDF. A shingle's IDF is
the mean of its words' IDFs: a shingle of rare words weighs like a rare word, one made of
stopwords ("of the") weighs little, and its weight stays on the same scale as unigrams
whatever ``n`` is (a sum would grow with ``n``; a max would let one rare word lift every
shingle around it).

Two forms of the same features:

* :func:`features` — a readable ``feature string -> weight`` dict (shingles joined by
  ``SHINGLE_SEP``), for tests and inspection.
* :func:`hashed_features` — what :func:`worker.fingerprint.fingerprint` uses: the same
  features as (64-bit hash, weight) arrays, built without a Python loop over features.
  Each token is hashed once with MurmurHash3; its IDF and stopword flag are found by that
  hash in the vocabulary's sorted hash array (one ``searchsorted``); shingle hashes are
  mixed from word hashes in numpy. A feature that occurs twice is listed twice (its
  weights add up in SimHash, and MinHash ignores repeats), so nothing is merged.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import cache
from typing import Sequence

import numpy as np

from worker.idf import default_idf, idf, vocabulary
from worker.simhash import feature_hashes, shingle_hashes
from worker.stopwords import stopwords

__all__ = ["SHINGLE_SEP", "HashedFeatures", "features", "hashed_features"]

# Unit separator: a control character, removed by ``normalize`` and never part of a token,
# so a shingle can neither collide with a unigram nor with another shingle.
SHINGLE_SEP = "\x1f"


def features(tokens: Sequence[str], n: int = 2) -> dict[str, float]:
    """Feature -> weight for ``tokens`` (from ``tokenize``); ``n = 1`` gives unigrams only.

    Deterministic: the same tokens always give the same dict (insertion order included).
    """
    _check(n)
    counts = Counter(tokens)
    weight = {t: idf(t) for t in counts}
    stop = stopwords()
    out = {t: c * weight[t] for t, c in counts.items() if t not in stop}
    if n > 1:
        ws = list(map(weight.__getitem__, tokens))
        grams = map(SHINGLE_SEP.join, zip(*(tokens[i:] for i in range(n))))
        for gram, window in zip(grams, zip(*(ws[i:] for i in range(n)))):
            out[gram] = out.get(gram, 0.0) + sum(window) / n
    return out


@dataclass(frozen=True, slots=True)
class HashedFeatures:
    """Features as aligned arrays; ``words`` is the number of distinct tokens."""

    hashes: np.ndarray
    weights: np.ndarray
    words: int


def hashed_features(tokens: Sequence[str], n: int = 2) -> HashedFeatures:
    """The features of :func:`features` as hashes and weights, one row per occurrence.

    Unigram hashes are ``feature_hash(word)``; shingle hashes are ``shingle_hashes`` of
    their words' hashes. A feature that occurs ``c`` times has ``c`` rows whose weights sum
    to its weight in :func:`features`.
    """
    _check(n)
    if not tokens:
        return HashedFeatures(np.empty(0, dtype=np.uint64), np.empty(0, dtype=np.float64), 0)
    hashes = feature_hashes(tokens)
    weights, stop = _weigh(tokens, hashes)
    keep = ~stop
    all_hashes = [hashes[keep]]
    all_weights = [weights[keep]]
    windows = len(tokens) - n + 1
    if n > 1 and windows > 0:
        all_hashes.append(shingle_hashes([hashes[i : i + windows] for i in range(n)]))
        total = weights[:windows].copy()
        for i in range(1, n):
            total += weights[i : i + windows]
        all_weights.append(total / n)
    return HashedFeatures(np.concatenate(all_hashes), np.concatenate(all_weights), len(set(tokens)))


@dataclass(frozen=True, slots=True)
class _Lexicon:
    """The IDF vocabulary as a numpy hash table keyed by word hash.

    ``hashes`` is sorted, so the words of bucket ``b`` (the top ``bits`` bits of a hash) are
    ``hashes[starts[b]:starts[b + 1]]``, at most ``width`` of them. A lookup gathers each
    token's whole bucket at once: about one cache miss per token, where a dict lookup in
    the ~280k-entry table, or a binary search, costs several. ``weights`` holds the IDF,
    negated for stopwords, so one gather yields both.
    """

    hashes: np.ndarray
    weights: np.ndarray
    starts: np.ndarray
    bits: np.uint64
    width: np.ndarray


@cache
def _lexicon() -> _Lexicon:
    """Built once per process (~0.1 s for ~280k words)."""
    vocab = vocabulary()
    hashes = feature_hashes(vocab.words)
    signed = vocab.weights.copy()
    signed[[vocab.rows[w] for w in stopwords() if w in vocab.rows]] *= -1.0
    order = np.argsort(hashes)
    hashes = hashes[order]
    bits = max(1, (hashes.size - 1).bit_length())
    shift = np.uint64(64 - bits)
    starts = np.searchsorted(hashes >> shift, np.arange((1 << bits) + 1, dtype=np.uint64)).astype(np.int32)
    width = int(np.diff(starts).max())
    # One padding slot per possible overrun, so a bucket window never leaves the array.
    padded = np.concatenate([hashes, np.zeros(width, dtype=np.uint64)])
    return _Lexicon(padded, signed[order], starts, shift, np.arange(width))


def _weigh(tokens: Sequence[str], hashes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(IDF, is-stopword) of each token, found by its hash."""
    lexicon = _lexicon()
    first = lexicon.starts[hashes >> lexicon.bits]
    window = first[:, None] + lexicon.width
    match = lexicon.hashes[window] == hashes[:, None]
    found = match.any(axis=1)
    at = first + match.argmax(axis=1)
    signed = lexicon.weights[np.minimum(at, lexicon.weights.size - 1)]
    unknown = np.flatnonzero(~found)
    if unknown.size:
        words = stopwords()
        for i in unknown.tolist():
            token = tokens[i]
            signed[i] = -default_idf(token) if token in words else default_idf(token)
    return np.abs(signed), signed < 0


def _check(n: int) -> None:
    if n < 1:
        raise ValueError(f"shingle size n must be >= 1, got {n}")
