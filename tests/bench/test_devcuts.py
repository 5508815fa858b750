"""The dev set's eighth part: short posts cut to their first tenth to half, after the parts before."""

from __future__ import annotations

from functools import cache
from typing import Any

from bench import devcuts
from tests.bench.parts import FIRST_SIZE, SEED, assert_comes_last, first_part


@cache
def _built() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    return devcuts.extend(*first_part(), SEED, pairs=60)


def test_the_parts_before_are_unchanged_and_the_part_comes_last() -> None:
    assert_comes_last(_built(), devcuts.extend(*first_part(), SEED, pairs=60), "fc")
    assert len(_built()[0]) == FIRST_SIZE + 2 * 60


def test_each_cut_opens_its_post_and_keeps_a_tenth_to_under_half() -> None:
    events, truth = _built()
    text = {e["id"]: e["text"] for e in events}
    cuts = [t for t in truth[FIRST_SIZE:] if t["transforms"] == ["short_cut"]]
    assert len(cuts) == 60 and {t["lang"] for t in cuts} == {"en", "zh"}
    for t in cuts:
        post, cut = text[t["related"]], text[t["id"]].removesuffix("...").removesuffix("…")
        assert post.startswith(cut) and 0.1 * len(post) <= len(cut) <= 0.5 * len(post), (cut, post)
        assert sum(c.isalnum() for c in cut) >= devcuts.MIN_CUT[t["lang"]]
    ahead = [t for t in cuts if truth.index(t) < _position(truth, t["related"])]
    assert 0 < len(ahead) < len(cuts) / 2, "some cuts run ahead of their post, most follow it"


def test_no_cut_is_the_opening_of_another_text() -> None:
    events, truth = _built()
    cuts = {t["id"] for t in truth if t["transforms"] == ["short_cut"]}
    for cut in (e["text"].removesuffix("...").removesuffix("…") for e in events if e["id"] in cuts):
        assert sum(e["text"].startswith(cut) for e in events) == 2, cut  # itself and its post


def _position(truth: list[dict[str, Any]], event_id: str) -> int:
    return next(i for i, t in enumerate(truth) if t["id"] == event_id)
