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
    Counting first (``Counter`` runs in C) makes the per-feature Python work proportional to
    distinct features, not to text length.
    """
    if n < 1:
        raise ValueError(f"shingle size n must be >= 1, got {n}")
    counts = Counter(tokens)
    get = idf_table().get
    weight = {t: get(t) or default_idf(t) for t in counts}
    stop = stopwords()
    out = {t: c * weight[t] for t, c in counts.items() if t not in stop}
    if n == 2:
        pairs = Counter(zip(tokens, tokens[1:]))
        out.update(
            {a + SHINGLE_SEP + b: c * (weight[a] + weight[b]) / 2 for (a, b), c in pairs.items()}
        )
    elif n > 2:
        grams = Counter(zip(*(tokens[i:] for i in range(n))))
        out.update(
            {
                SHINGLE_SEP.join(g): c * sum(map(weight.__getitem__, g)) / n
                for g, c in grams.items()
            }
        )
    return out
