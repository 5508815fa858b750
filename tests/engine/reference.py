"""Slow, obviously-right reference implementations the fast code is tested against."""

from __future__ import annotations


def textbook_simhash(weighted: list[tuple[int, float]]) -> int:
    """Charikar's SimHash, one bit at a time, over (64-bit hash, weight) pairs."""
    totals = [0.0] * 64
    for h, weight in weighted:
        for bit in range(64):
            totals[bit] += weight if (h >> bit) & 1 else -weight
    return sum(1 << bit for bit in range(64) if totals[bit] > 0)
