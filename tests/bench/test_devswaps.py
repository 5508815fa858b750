"""The dev set's fifth part: short posts, each with a hard negative one word apart."""

from __future__ import annotations

import random
from functools import cache
from typing import Any

from bench import devswaps
from tests.bench.parts import SEED, assert_comes_last, first_part


@cache
def _built() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    return devswaps.extend(*first_part(), SEED, size=200)


def test_the_parts_before_are_unchanged_and_the_part_comes_last() -> None:
    assert_comes_last(_built(), devswaps.extend(*first_part(), SEED, size=200), "fw")
    assert len(_built()[0]) > 550


def test_each_swap_is_its_post_with_one_word_replaced() -> None:
    events, truth = _built()
    text = {e["id"]: e["text"] for e in events}
    clusters = {t["id"]: t["cluster"] for t in truth}
    swaps = [t for t in truth if t["hard_negative"] == "short_word_swap"]
    assert len(swaps) >= 60 and {t["lang"] for t in swaps} == {"zh", "en"}
    for swap in swaps:
        before, after = text[swap["related"]], text[swap["id"]]
        assert before != after and clusters[swap["id"]] != clusters[swap["related"]]
        head = len(_common_prefix(before, after))
        tail = len(_common_prefix(before[::-1], after[::-1]))
        assert head + tail >= min(len(before), len(after)) - 12, "all but one word is the post's"


def test_a_swap_replaces_a_content_word_with_another() -> None:
    rng = random.Random(3)
    swapped = devswaps.word_swap("Database server is down", "en", rng, ["Check the backup volume"])
    assert swapped is not None and swapped != "Database server is down"
    assert swapped.endswith(" is down") or swapped.startswith("Database ")
    assert devswaps.word_swap("is it on", "en", rng, ["Check the backup volume"]) is None, "function words stay"
    zh = devswaps.word_swap("明天上午全市中小学停课", "zh", rng, ["今晚有大雨"])
    assert zh is not None and zh != "明天上午全市中小学停课"


def _common_prefix(a: str, b: str) -> str:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return a[:n]
