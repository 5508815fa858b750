"""A compact b-bit MinHash sketch stored with every indexed event: the fine check.

SimHash at k = 3 alone finds only about half of real feed duplicates, and loosening k
alone lets in boilerplate look-alikes. So the tables are probed loosely and every
candidate is verified here: two sketches estimate the Jaccard resemblance of the two
feature sets (Broder), and from it, with the stored set sizes, the containment of the
shorter text in the longer — what makes a truncated teaser a duplicate of its story while
"same opening, different rest" is not.

Sketch layout (130 bytes): feature-set size as uint16 big-endian, then ``PERMUTATIONS``
one-byte minima. Each permutation is ``h(x) = a*x + b mod 2**64`` over the 64-bit feature
hashes (a odd); a byte from the middle of the minimum is kept (b-bit MinHash, Li & König),
whose chance collisions (1/256) are corrected in :func:`resemblance`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

PERMUTATIONS = 128
_BITS = 8
_SHIFT = np.uint64(16)
_MASK = np.uint64((1 << _BITS) - 1)
_CHANCE = 1.0 / (1 << _BITS)
SKETCH_BYTES = 2 + PERMUTATIONS

_rng = np.random.Generator(np.random.PCG64(20070508))
_A = _rng.integers(1, 2**63, size=PERMUTATIONS, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
_B = _rng.integers(0, 2**63, size=PERMUTATIONS, dtype=np.uint64)


def sketch(hashes: np.ndarray) -> bytes:
    """Sketch of a set of 64-bit feature hashes (duplicates in ``hashes`` are harmless)."""
    size = min(int(np.unique(hashes).size), 0xFFFF)
    if hashes.size == 0:
        minima = np.zeros(PERMUTATIONS, dtype=np.uint8)
    else:
        with np.errstate(over="ignore"):
            permuted = hashes[:, None] * _A[None, :] + _B[None, :]
        minima = ((permuted.min(axis=0) >> _SHIFT) & _MASK).astype(np.uint8)
    return size.to_bytes(2, "big") + minima.tobytes()


@dataclass(frozen=True, slots=True)
class Similarity:
    """Estimated resemblance (Jaccard) and containment of the smaller set in the larger."""

    resemblance: float
    containment: float


def compare(a: bytes, b: bytes) -> Similarity:
    """Estimate how alike two sketched sets are."""
    size_a = int.from_bytes(a[:2], "big")
    size_b = int.from_bytes(b[:2], "big")
    if size_a == 0 or size_b == 0:
        return Similarity(0.0, 0.0)
    agree = np.count_nonzero(np.frombuffer(a, np.uint8, offset=2) == np.frombuffer(b, np.uint8, offset=2))
    jaccard = resemblance(agree / PERMUTATIONS)
    # |A ∩ B| = J (|A| + |B|) / (1 + J)
    common = jaccard * (size_a + size_b) / (1.0 + jaccard)
    return Similarity(jaccard, min(1.0, common / min(size_a, size_b)))


def resemblance(agreement: float) -> float:
    """Jaccard estimate from the fraction of agreeing b-bit minima, corrected for chance."""
    return max(0.0, (agreement - _CHANCE) / (1.0 - _CHANCE))
