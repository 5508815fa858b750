"""The dev set's sixth part: English one-line posts under the feed's edits, after the parts before."""

from __future__ import annotations

from collections import Counter
from functools import cache
from typing import Any

from bench import devfeed, devlines, feededits
from tests.bench.parts import SEED, assert_comes_last, first_part


@cache
def _built() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    return devlines.extend(*first_part(), SEED, size=300)


def test_the_parts_before_are_unchanged_and_the_part_comes_last() -> None:
    assert_comes_last(_built(), devlines.extend(*first_part(), SEED, size=300), "fl")
    assert len(_built()[0]) > 550


def test_its_posts_are_english_lines_under_the_feed_classes() -> None:
    events, truth = _built()
    text = {e["id"]: e["text"] for e in events}
    part = truth[400:]
    imitated = {t["related"] for t in part if t["hard_negative"]}
    posts = [t for t in part if t["role"] == "original" and t["id"] not in imitated]
    assert all(t["lang"] == "en" and len(text[t["id"]]) <= devlines.MAX_CHARS for t in posts)
    applied = Counter(name for t in part for name in t["transforms"])
    assert set(applied) == set(feededits.TRANSFORMS) and min(applied.values()) >= 5
    assert {t["hard_negative"] for t in part if t["hard_negative"]} == set(devfeed.HARD_NEGATIVE_KINDS)
