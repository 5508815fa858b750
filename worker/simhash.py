"""Weighted features -> 64-bit SimHash (Charikar), the coarse filter of every decision.

Each feature is hashed to 64 bits with MurmurHash3; every bit position accumulates
``+weight`` where the feature's bit is 1 and ``-weight`` where it is 0; the sign of each
sum is the fingerprint's bit. Near-identical feature sets therefore give fingerprints a
few bits apart, which the permuted-block tables find.

The accumulation is one matrix product (features x 64 bit-signs) in numpy: for a ~1 KB
document with a few hundred features it is several times faster than a Python loop over
bits, and it is exactly the same arithmetic.
"""

from __future__ import annotations

from typing import Iterable, Mapping

import mmh3
import numpy as np

FINGERPRINT_BITS = 64
_SEED = 0x5EED


def feature_hash(feature: str) -> int:
    """Unsigned 64-bit MurmurHash3 of a feature (the first half of the 128-bit x64 hash)."""
    return mmh3.hash64(feature, _SEED, signed=False)[0]


def feature_hashes(features: Iterable[str]) -> np.ndarray:
    """Hashes of many features as a uint64 array."""
    return np.fromiter((feature_hash(f) for f in features), dtype=np.uint64)


def simhash_from_hashes(hashes: np.ndarray, weights: np.ndarray) -> int:
    """SimHash of pre-hashed features; bits are numbered from the least significant (bit 0)."""
    if hashes.size == 0:
        return 0
    # little-endian bytes unpacked little-bit-first give column j == bit j of each hash
    bits = np.unpackbits(hashes.astype("<u8").view(np.uint8).reshape(-1, 8), axis=1, bitorder="little")
    totals = weights.astype(np.float64) @ (bits.astype(np.float64) * 2.0 - 1.0)
    packed = np.packbits(totals > 0, bitorder="little")
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
