"""The b-bit MinHash sketch estimates resemblance and containment well enough to verify."""

from __future__ import annotations

import numpy as np
import pytest

from topology import codec
from worker.engine.fingerprint import Fingerprint
from worker.engine.match import Candidate, Entry, accepts
from worker.engine.sketch import SHORT_SKETCH_BYTES, SKETCH_BYTES, compare, sketch
from worker.settings import Settings


def hashes(values: range | list[int]) -> np.ndarray:
    rng = np.random.Generator(np.random.PCG64(1))
    table = rng.integers(0, 2**63, size=20_000, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    return table[np.asarray(list(values))]


@pytest.mark.parametrize("overlap", [0, 100, 200, 300, 400])
def test_resemblance_estimate(overlap: int) -> None:
    a = hashes(range(0, 400))
    b = hashes(range(400 - overlap, 800 - overlap))
    true = overlap / (800 - overlap)
    estimate = compare(sketch(a), sketch(b)).resemblance
    assert abs(estimate - true) < 0.2


def test_teaser_is_contained_but_not_resembling() -> None:
    story = hashes(range(0, 600))
    teaser = hashes(range(0, 150))
    similarity = compare(sketch(teaser), sketch(story))
    assert similarity.resemblance < 0.45
    assert similarity.containment > 0.7


def test_same_opening_different_rest_is_neither() -> None:
    a = hashes(range(0, 400))
    b = hashes(list(range(0, 60)) + list(range(1000, 1340)))
    similarity = compare(sketch(a), sketch(b))
    assert similarity.resemblance < 0.3
    assert similarity.containment < 0.5


@pytest.mark.parametrize("seed", range(5))
def test_agreement_is_the_share_of_equal_minima(seed: int) -> None:
    # Every byte position where the minima agree counts once, wherever it is in the sketch.
    rng = np.random.Generator(np.random.PCG64(seed))
    a = sketch(hashes(range(0, 300)))
    minima = bytearray(a)
    changed = rng.choice(np.arange(2, SKETCH_BYTES), size=int(rng.integers(0, 128)), replace=False)
    for at in changed.tolist():
        minima[at] ^= int(rng.integers(1, 256))
    b = bytes(minima)
    agree = sum(x == y for x, y in zip(a[2:], b[2:], strict=True))
    expected = max(0.0, (agree / 128 - 1 / 256) / (1 - 1 / 256))
    assert compare(a, b).resemblance == pytest.approx(expected)


def test_estimates_are_plain_floats_that_records_can_carry() -> None:
    # A similarity travels in answers, verdicts and changelogs; the codec takes no numpy scalars.
    similarity = compare(sketch(hashes(range(0, 300))), sketch(hashes(range(100, 400))))
    assert type(similarity.resemblance) is float and type(similarity.containment) is float
    assert codec.loads(codec.dumps({"similarity": similarity.resemblance})) == {"similarity": similarity.resemblance}


def test_identical_sets_and_layout() -> None:
    a = sketch(hashes(range(50)))
    assert len(a) == SKETCH_BYTES
    assert compare(a, a).resemblance == 1.0
    assert compare(a, a).containment == 1.0


def test_empty_sets_are_identical_and_unlike_any_other() -> None:
    empty = sketch(np.array([], dtype=np.uint64))
    assert compare(empty, empty).resemblance == 1.0
    assert compare(empty, sketch(hashes(range(10)))).resemblance == 0.0
    assert compare(sketch(hashes(range(10))), empty).containment == 0.0


def test_repeats_do_not_change_the_sketch_and_size_counts_distinct_hashes() -> None:
    a = hashes(range(300))
    doubled = np.concatenate([a, a[::-1], a[:10]])
    assert sketch(doubled) == sketch(a)
    assert int.from_bytes(sketch(a)[:2], "big") == 300


def test_small_sets_estimate_without_bias() -> None:
    """Small sets leave most of the 128 bins empty; densification must keep the estimate centred."""
    errors = []
    for start in range(0, 12_000, 200):
        a = hashes(range(start, start + 20))
        b = hashes(range(start + 10, start + 30))
        errors.append(compare(sketch(a), sketch(b)).resemblance - 10 / 30)
    assert abs(float(np.mean(errors))) < 0.03
    assert float(np.std(errors)) < 0.1


def test_disjoint_sets_rarely_agree() -> None:
    for size in (5, 50, 500):
        similarity = compare(sketch(hashes(range(size))), sketch(hashes(range(10_000, 10_000 + size))))
        assert similarity.resemblance < 0.1


def test_two_long_texts_need_less_resemblance_than_a_pair_with_a_short_one() -> None:
    """Slips through a story leave its word sketch about half alike: enough between two long
    texts (many features, a tight estimate), not when one of them is short."""
    story, slipped = hashes(range(0, 400)), hashes(range(116, 516))  # J = 284 / 516 = 0.55
    settings = Settings()
    assert settings.min_long_resemblance < 0.55 < settings.min_resemblance
    long_pair = compare(sketch(story), sketch(slipped))
    assert long_pair.long and abs(long_pair.resemblance - 0.55) < 0.1
    short_part = bytes(SHORT_SKETCH_BYTES - SKETCH_BYTES)  # a short text's character part follows its word sketch
    assert not compare(sketch(story) + short_part, sketch(slipped)).long

    def verified(probe_sketch: bytes, stored_sketch: bytes) -> bool:
        probe = Fingerprint(0, probe_sketch, None, 40)
        return accepts(probe, Candidate(Entry("stored", 0, 0, 0, stored_sketch), 0), settings) is not None

    assert verified(sketch(slipped), sketch(story))
    assert not verified(sketch(slipped) + short_part, sketch(story))
