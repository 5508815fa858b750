"""The dev set's fourth part: very short posts, after the parts before, without restatements."""

from __future__ import annotations

import statistics
from collections import Counter
from functools import cache
from typing import Any

from bench import devfeed, devtiny, feededits
from tests.bench.parts import SEED, assert_comes_last, first_part


@cache
def _built() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    return devtiny.extend(*first_part(), SEED, size=400)


def test_the_parts_before_are_unchanged_and_the_part_comes_last() -> None:
    assert_comes_last(_built(), devtiny.extend(*first_part(), SEED, size=400), "ft")
    assert len(_built()[0]) > 750


def test_its_posts_are_very_short_and_carry_the_feed_classes() -> None:
    events, truth = _built()
    text = {e["id"]: e["text"] for e in events}
    part = truth[400:]
    # Leave out the originals a hard negative imitates (wrapped, behind an opener, reports).
    imitated = {t["related"] for t in part if t["hard_negative"]}
    posts = [t for t in part if t["role"] == "original" and t["id"] not in imitated]
    lengths = {t["lang"]: [len(text[u["id"]]) for u in posts if u["lang"] == t["lang"]] for t in posts}
    assert statistics.median(lengths["zh"]) <= 20 and max(lengths["zh"]) <= 30
    assert max(lengths.get("en", [0])) <= 60
    applied = Counter(name for t in part for name in t["transforms"])
    assert set(applied) == set(feededits.CLASSES), "every class, removed_sentence too"
    assert min(applied[name] for name in feededits.TRANSFORMS) >= 5, "few posts this short hold two sentences"
    assert {t["hard_negative"] for t in part if t["hard_negative"]} == set(devfeed.HARD_NEGATIVE_KINDS)


def test_restatements_and_texts_before_are_kept_out() -> None:
    restated = devtiny._Restatements(["新华社北京１月２０日电 香港国际七人制橄榄球赛将如期举行。"])
    assert not restated.accept("香港国际七人制橄榄球赛将如期举行")  # held whole by a text before
    assert restated.accept("房间很干净，服务也很热情，下次还来")
    assert not restated.accept("房间很干净，服务也很热情，下次还会来")  # a near restatement
    assert not restated.accept("房间很干净，服务也很热情")  # a cut of it
    assert restated.accept("房间很干净，就是隔音太差了")  # the same opening, another post
