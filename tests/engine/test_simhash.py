"""SimHash: the vectorised accumulation equals the textbook per-bit loop."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.engine.reference import textbook_simhash
from worker.engine.simhash import (
    feature_hash,
    feature_hashes,
    mix64,
    shingle_hashes,
    simhash,
    simhash_from_hashes,
    to_hex,
)

# Multiples of 1/8: every partial sum is exact in float64, so a tie is a tie in any summation
# order and the comparison with the per-bit loop is exact, never a rounding coin-flip.
weights = st.integers(min_value=1, max_value=800).map(lambda n: n / 8)
feature_maps = st.dictionaries(st.text(min_size=1, max_size=12), weights, max_size=60)
hashes_64 = st.integers(min_value=0, max_value=2**64 - 1)


@given(feature_maps)
@settings(max_examples=300)
def test_matches_per_bit_loop(features: dict[str, float]) -> None:
    assert simhash(features) == textbook_simhash([(feature_hash(f), w) for f, w in features.items()])


@given(
    st.lists(st.tuples(st.sampled_from(range(12)), weights), max_size=80), st.lists(hashes_64, min_size=12, max_size=12)
)
@settings(max_examples=300)
def test_pre_hashed_rows_with_repeats_match_per_bit_loop_of_merged_features(
    rows: list[tuple[int, float]], pool: list[int]
) -> None:
    """fingerprint() lists a repeated feature once per occurrence: the sums must merge them."""
    merged: dict[int, float] = {}
    for i, w in rows:
        merged[pool[i]] = merged.get(pool[i], 0.0) + w
    hashes = np.array([pool[i] for i, _ in rows], dtype=np.uint64)
    values = np.array([w for _, w in rows], dtype=np.float64)
    expected = textbook_simhash(list(merged.items()))
    # Summation order differs between the two; only an exact tie could flip a bit.
    assert (simhash_from_hashes(hashes, values) ^ expected).bit_count() <= 1
    assert simhash_from_hashes(hashes, values) == textbook_simhash([(pool[i], w) for i, w in rows])


def test_feature_hashes_are_feature_hash() -> None:
    words = ["经济", "the", "", "don't", "😀"]
    assert feature_hashes(words).tolist() == [feature_hash(w) for w in words]


def test_shingle_hashes_depend_on_order_and_every_word() -> None:
    a, b, c = (np.array([feature_hash(w)], dtype=np.uint64) for w in ("a", "b", "c"))
    ab, ba, ac = (int(shingle_hashes(pair)[0]) for pair in ([a, b], [b, a], [a, c]))
    assert len({ab, ba, ac, int(a[0]), int(b[0])}) == 5
    assert int(shingle_hashes([a, b, c])[0]) not in {ab, ba, ac}
    # mixed: flipping one input bit flips about half of the output bits
    flipped = int(shingle_hashes([a ^ np.uint64(1), b])[0])
    assert 16 <= (flipped ^ ab).bit_count() <= 48


def test_mix64_is_a_bijection_on_a_sample() -> None:
    values = np.arange(100_000, dtype=np.uint64)
    assert np.unique(mix64(values.copy())).size == values.size


def test_small_edit_moves_few_bits_unrelated_moves_many() -> None:
    base = {f"word{i}": 1.0 for i in range(200)}
    edited = dict(base)
    del edited["word7"]
    edited["typo7"] = 1.0
    other = {f"other{i}": 1.0 for i in range(200)}
    assert (simhash(base) ^ simhash(edited)).bit_count() <= 6
    assert (simhash(base) ^ simhash(other)).bit_count() >= 16


def test_hex_is_sixteen_digits() -> None:
    assert to_hex(5) == "0000000000000005"
    assert to_hex(2**64 - 1) == "f" * 16


def test_empty_is_zero() -> None:
    assert simhash({}) == 0
    assert simhash_from_hashes(np.empty(0, dtype=np.uint64), np.empty(0)) == 0
