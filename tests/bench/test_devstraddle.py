"""The dev set's ninth part: posts and their copies on either side of the short-text length."""

from __future__ import annotations

from functools import cache
from typing import Any

from bench import devstraddle
from tests.bench.parts import FIRST_SIZE, SEED, assert_comes_last, first_part
from worker.settings import Settings


@cache
def _built() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    return devstraddle.extend(*first_part(), SEED, pairs=30)


def test_the_parts_before_are_unchanged_and_the_part_comes_last() -> None:
    assert_comes_last(_built(), devstraddle.extend(*first_part(), SEED, pairs=30), "fx")
    assert len(_built()[0]) == FIRST_SIZE + 2 * 30


def test_each_copy_is_on_the_other_side_of_the_short_length_from_its_post() -> None:
    events, truth = _built()
    text = {e["id"]: e["text"] for e in events}
    short_chars = Settings().short_chars
    copies = [t for t in truth[FIRST_SIZE:] if t["role"] == "copy"]
    assert {t["transforms"][0] for t in copies} == {"crossing_up", "crossing_down"}
    for t in copies:
        post, copy = text[t["related"]], text[t["id"]]
        short, long = (post, copy) if t["transforms"] == ["crossing_up"] else (copy, post)
        # Raw lengths: the part keeps 20-30 characters clear of each line, more than normalising
        # takes off a review (spaces, a header's brackets).
        assert len(short) < short_chars < len(long), (post, copy)
        assert short_chars // 2 <= len(short), "a post the word bands are kept for"
        assert truth.index(t) > next(i for i, row in enumerate(truth) if row["id"] == t["related"])
