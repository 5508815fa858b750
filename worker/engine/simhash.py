"""Weighted features -> 64-bit SimHash (Charikar), the coarse filter of every decision.

Each feature has a 64-bit hash: a word is hashed with MurmurHash3 (:func:`feature_hash`); a
shingle of several words gets :func:`shingle_hashes`, a 64-bit mix of its words' hashes
computed in numpy, so no shingle string is ever built. Every bit position accumulates
``+weight`` where the feature's bit is 1 and ``-weight`` where it is 0; the sign of each
sum is the fingerprint's bit. Near-identical feature sets therefore give fingerprints a
few bits apart, which the permuted-block tables find.

The accumulation is one matrix-vector product (features x 64 bits) in numpy: for a ~1 KB
document with a few hundred features it is many times faster than a Python loop over bits,
and it is the same arithmetic. Since the sum is linear, a feature listed twice with
weights ``w1`` and ``w2`` counts like once with ``w1 + w2`` (up to float rounding): callers
need not merge repeated features.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from itertools import repeat

import mmh3
import numpy as np

FINGERPRINT_BITS = 64
_SEED = 0x5EED
# XORed in before a shingle's final mix, so its hash is unrelated to any word's hash; the
# rotation between words makes (a, b) differ from (b, a).
_SHINGLE_SEED = np.uint64(0x9E3779B97F4A7C15)
_ROTATE = np.uint64(23)
_UNROTATE = np.uint64(64 - 23)
_M1 = np.uint64(0xFF51AFD7ED558CCD)
_M2 = np.uint64(0xC4CEB9FE1A85EC53)
_S33 = np.uint64(33)


def feature_hash(feature: str) -> int:
    """Unsigned 64-bit MurmurHash3 of a feature (the first half of the 128-bit x64 hash)."""
    return mmh3.hash64(feature, _SEED, signed=False)[0]


def feature_hashes(features: Iterable[str]) -> np.ndarray:
    """``feature_hash`` of many features as a uint64 array (a read-only strided view).

    The 16-byte digests are joined and reinterpreted, so no Python int is created per feature;
    the first little-endian half of each digest is ``feature_hash``.
    """
    digests = b"".join(map(mmh3.hash_bytes, features, repeat(_SEED)))
    return np.frombuffer(digests, dtype="<u8")[::2]


def mix64(x: np.ndarray) -> np.ndarray:
    """MurmurHash3's 64-bit finaliser, element-wise, in place: a bijection in which every
    input bit flips about half of the output bits."""
    with np.errstate(over="ignore"):
        x ^= x >> _S33
        x *= _M1
        x ^= x >> _S33
        x *= _M2
        x ^= x >> _S33
    return x


def shingle_hashes(word_hashes: Sequence[np.ndarray]) -> np.ndarray:
    """Hashes of word shingles from the aligned hash arrays of their 1st, 2nd, ... words.

    ``h1, h2, ..., hn`` are folded as ``rotl(acc, 23) ^ h`` (so word order matters), then
    mixed once with a seed. Word hashes are independent random 64-bit values, so two
    different shingles collide only by 64-bit chance, and the mix makes each shingle hash
    look unrelated to its words' hashes.
    """
    acc = word_hashes[0]
    for part in word_hashes[1:]:
        acc = ((acc << _ROTATE) | (acc >> _UNROTATE)) ^ part
    return mix64(acc ^ _SHINGLE_SEED)


def simhash_from_hashes(hashes: np.ndarray, weights: np.ndarray) -> int:
    """SimHash of pre-hashed features; bits are numbered from the least significant (bit 0).

    Repeated hashes are allowed (their weights add up).
    """
    if hashes.size == 0:
        return 0
    # little-endian bytes unpacked little-bit-first: bit j of feature i lands at [i, j]
    raw = np.ascontiguousarray(hashes, dtype="<u8").view(np.uint8)
    bits = np.unpackbits(raw, bitorder="little").reshape(-1, FINGERPRINT_BITS)
    weights = np.asarray(weights, dtype=np.float64)
    ones = weights @ bits.astype(np.float64)
    # sum(+w where 1, -w where 0) > 0  <=>  sum(w where 1) > sum(w) / 2
    packed = np.packbits(ones > float(weights.sum()) / 2.0, bitorder="little")
    return int.from_bytes(packed.tobytes(), "little")


def simhash(features: Mapping[str, float]) -> int:
    """SimHash of a feature -> weight mapping (weights must be positive)."""
    if not features:
        return 0
    hashes = feature_hashes(features.keys())
    weights = np.fromiter(features.values(), dtype=np.float64, count=len(features))
    return simhash_from_hashes(hashes, weights)


def to_hex(fingerprint: int) -> str:
    """The 16-hex-digit form used in every output record."""
    return f"{fingerprint:016x}"
