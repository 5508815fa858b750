"""The dev set's feed part: deterministic, after the first part, labelled like it."""

from __future__ import annotations

import random
from collections import Counter
from difflib import SequenceMatcher
from functools import cache
from typing import Any

from bench import devfeed, feededits
from tests.bench.parts import SEED, assert_comes_last, first_part


@cache
def _built() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    return devfeed.extend(*first_part(), SEED, size=400)


def test_the_first_part_is_unchanged_and_comes_first() -> None:
    assert_comes_last(_built(), devfeed.extend(*first_part(), SEED, size=400), "fd")


def test_every_class_and_the_hard_negative_kind_are_there() -> None:
    events, truth = _built()
    feed = truth[400:]
    applied = Counter(name for t in feed for name in t["transforms"])
    assert set(Counter(t["hard_negative"] for t in feed if t["hard_negative"])) == set(devfeed.HARD_NEGATIVE_KINDS)
    assert set(applied) == set(feededits.CLASSES) and min(applied.values()) >= 5
    text = {e["id"]: e["text"] for e in events}
    cluster = {t["id"]: t["cluster"] for t in truth}
    for t in feed:
        if t["role"] == "copy":
            assert cluster[t["related"]] == t["cluster"] and text[t["related"]] != text[t["id"]]
        elif t["role"] == "hard_negative":
            assert t["hard_negative"] in devfeed.HARD_NEGATIVE_KINDS
            assert cluster[t["related"]] != t["cluster"]
            mine, theirs = text[t["id"]], text[t["related"]]
            if t["hard_negative"] == "short_wrapper":
                assert mine[:4] == theirs[:4] and mine[-20:] != theirs[-20:] or mine != theirs
            elif t["hard_negative"] == "short_numbers":
                assert mine != theirs and SequenceMatcher(None, mine, theirs).ratio() > 0.6
            else:
                assert mine != theirs and mine[:3] == theirs[:3]


def test_slips_change_one_to_five_percent_of_the_letters() -> None:
    rng = random.Random(3)
    text = "The council approved the new bridge over the river after a long debate on its cost and safety."
    for _ in range(20):
        typed = feededits.slip_typos(text, "en", rng)
        assert typed is not None and typed != text
        assert abs(len(typed) - len(text)) <= 5
    assert feededits.ocr_typos("他在这里做作业以后再说的话", "zh", rng) is None  # no look-alike to confuse
    assert feededits.slip_typos("他在这里做作业以后再说的话", "zh", rng) is not None
