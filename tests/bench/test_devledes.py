"""The dev set's seventh part: teasers of long stories and posts that open like one, after the parts before."""

from __future__ import annotations

from functools import cache
from typing import Any

from bench import devledes
from tests.bench.parts import SEED, assert_comes_last, first_part


@cache
def _built() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    return devledes.extend(*first_part(), SEED, pairs=60)


def test_the_parts_before_are_unchanged_and_the_part_comes_last() -> None:
    assert_comes_last(_built(), devledes.extend(*first_part(), SEED, pairs=60), "fe")
    assert len(_built()[0]) >= 400 + 100


def test_each_teaser_opens_its_story_and_is_short() -> None:
    events, truth = _built()
    text = {e["id"]: e["text"] for e in events}
    teasers = [t for t in truth[400:] if t["transforms"] == ["lede_teaser"]]
    assert len(teasers) >= 50 and {t["lang"] for t in teasers} == {"en", "zh"}
    for t in teasers:
        story, teaser = text[t["related"]], text[t["id"]]
        assert len(teaser) <= 330 and len(story) >= 2 * len(teaser)
        assert story.startswith(teaser[:20]), (teaser, story[:80])
    ahead = [t for t in teasers if truth.index(t) < _position(truth, t["related"])]
    assert 0 < len(ahead) < len(teasers), "some teasers run ahead of their story, not all"


def test_a_stranger_opens_like_a_story_and_holds_no_teaser_of_it() -> None:
    events, truth = _built()
    text = {e["id"]: e["text"] for e in events}
    teaser_of = {t["related"]: text[t["id"]] for t in truth[400:] if t["transforms"] == ["lede_teaser"]}
    strangers = [t for t in truth[400:] if t["hard_negative"] == "lede_stranger"]
    assert len(strangers) >= 10
    for t in strangers:
        stranger, teaser = text[t["id"]], teaser_of[t["related"]]
        assert stranger[:6] == teaser[:6] and not stranger.startswith(teaser.rstrip("…."))


def test_no_story_shares_a_sentence_with_an_event_before() -> None:
    events, truth = _built()
    earlier = "\n".join(" ".join(e["text"].split()) for e in events[:400])
    stories = [e for e, t in zip(events[400:], truth[400:], strict=True) if t["role"] == "original"]
    assert all(" ".join(e["text"].split())[:40] not in earlier for e in stories)


def _position(truth: list[dict[str, Any]], event_id: str) -> int:
    return next(i for i, t in enumerate(truth) if t["id"] == event_id)
