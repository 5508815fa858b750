"""Weighted features of a token sequence: what SimHash and MinHash fingerprint.

Two kinds of feature:

* Word unigrams, stopwords dropped: what the text talks about.
* Word n-gram shingles (``n`` words in a row, stopwords included, joined by
  ``SHINGLE_SEP``): how it says it. Keeping stopwords in shingles keeps phrase order, so a
  rewrite that reuses the words in another order gets different shingles.

Weight of a feature = TF x IDF: each occurrence adds the feature's IDF. A shingle's IDF is
the mean of its words' IDFs: a shingle of rare words weighs like a rare word, one made of
stopwords ("of the") weighs little, and its weight stays on the same scale as unigrams
whatever ``n`` is (a sum would grow with ``n``; a max would let one rare word lift every
shingle around it).
"""

from __future__ import annotations

from collections import Counter
from typing import Sequence

from worker.idf import default_idf, idf_table
from worker.stopwords import stopwords

__all__ = ["SHINGLE_SEP", "features"]

# Unit separator: a control character, removed by ``normalize`` and never part of a token,
# so a shingle can neither collide with a unigram nor with another shingle.
SHINGLE_SEP = "\x1f"


def features(tokens: Sequence[str], n: int = 2) -> dict[str, float]:
    """Feature -> weight for ``tokens`` (from ``tokenize``); ``n = 1`` gives unigrams only.

    Deterministic: the same tokens always give the same dict (insertion order included).
    Unigrams are counted first (``Counter`` runs in C), so the IDF table is consulted once
    per distinct word.
    """
    if n < 1:
        raise ValueError(f"shingle size n must be >= 1, got {n}")
    counts = Counter(tokens)
    get = idf_table().get
    weight = {t: get(t) or default_idf(t) for t in counts}
    stop = stopwords()
    out = {t: c * weight[t] for t, c in counts.items() if t not in stop}
    if n > 1:
        # Shingle strings are built by C-level map/zip; only the weight sum runs in Python.
        ws = list(map(weight.__getitem__, tokens))
        grams = map(SHINGLE_SEP.join, zip(*(tokens[i:] for i in range(n))))
        if n == 2:
            for gram, w1, w2 in zip(grams, ws, ws[1:]):
                out[gram] = out.get(gram, 0.0) + (w1 + w2) / 2
        else:
            for gram, window in zip(grams, zip(*(ws[i:] for i in range(n)))):
                out[gram] = out.get(gram, 0.0) + sum(window) / n
    return out
