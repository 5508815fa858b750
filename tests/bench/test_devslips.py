"""The dev set's third part: slipped copies of long stories, after the parts before."""

from __future__ import annotations

from collections import Counter
from difflib import SequenceMatcher
from functools import cache
from typing import Any

from bench import devslips
from tests.bench.parts import SEED, assert_comes_last, first_part


@cache
def _built() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    return devslips.extend(*first_part(), SEED, size=40)


def test_the_parts_before_are_unchanged_and_the_copies_come_last() -> None:
    assert_comes_last(_built(), devslips.extend(*first_part(), SEED, size=40), "ls")
    stamps = [e["ts"] for e in _built()[0]]
    assert len(stamps) == 440 and stamps[-1] - stamps[0] < 7 * 86_400_000


def test_every_copy_is_a_slipped_long_story_of_its_cluster() -> None:
    events, truth = _built()
    text = {e["id"]: e["text"] for e in events}
    cluster = {t["id"]: t["cluster"] for t in truth}
    copies = truth[400:]
    assert set(Counter(t["transforms"][0] for t in copies)) == set(devslips.CLASSES)
    for t in copies:
        original = text[t["related"]]
        assert t["role"] == "copy" and cluster[t["related"]] == t["cluster"] and len(original) >= devslips.MIN_CHARS
        # 1-5 % of the letters slip: the copy differs, yet reads as the same story
        assert text[t["id"]] != original
        assert SequenceMatcher(None, original, text[t["id"]], autojunk=False).ratio() > 0.9
