"""SimHash: the vectorised accumulation equals the textbook per-bit loop."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from worker.simhash import feature_hash, simhash, to_hex

weights = st.floats(min_value=0.01, max_value=100.0, allow_nan=False, allow_infinity=False)
feature_maps = st.dictionaries(st.text(min_size=1, max_size=12), weights, max_size=60)


def textbook(features: dict[str, float]) -> int:
    totals = [0.0] * 64
    for feature, weight in features.items():
        h = feature_hash(feature)
        for bit in range(64):
            totals[bit] += weight if (h >> bit) & 1 else -weight
    return sum(1 << bit for bit in range(64) if totals[bit] > 0)


@given(feature_maps)
@settings(max_examples=300)
def test_matches_per_bit_loop(features: dict[str, float]) -> None:
    assert simhash(features) == textbook(features)


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
