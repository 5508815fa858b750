"""``neardup ask check`` as a person reads it: the verdict, then why each candidate counts or not."""

from __future__ import annotations

from worker.cli.ask import check_lines
from worker.engine.sketch import NUMBERS_DIFFER


def test_a_unique_text_lists_its_refused_candidates_with_the_reason() -> None:
    answer = {
        "id": "bus-25",
        "verdict": "unique",
        "fingerprint": "0f",
        "candidates": [
            {"id": "bus-15", "distance": 3, "verified": False, "in_window": True, "refused": NUMBERS_DIFFER},
            {"id": "old", "distance": 9, "verified": False, "in_window": False},
        ],
    }
    assert list(check_lines(answer)) == [
        "bus-25  unique",
        "  candidate bus-15  distance 3  (their numbers differ)",
        "  candidate old  distance 9  (not similar enough, older than the retention window)",
    ]


def test_a_duplicate_names_its_original_and_its_verified_candidate() -> None:
    answer = {
        "verdict": "duplicate",
        "duplicate_of": "story",
        "distance": 2,
        "similarity": 0.91234,
        "candidates": [{"id": "story", "distance": 2, "verified": True, "in_window": True}],
    }
    assert list(check_lines(answer)) == [
        "duplicate of story  (distance 2, similarity 0.912)",
        "  candidate story  distance 2  (verified)",
    ]
