"""A teaser cut from a long story before its twelfth word, through the whole scan: nominated by
the story's opening key (``worker.engine.leads.opening_key``), verified by its lead windows."""

from __future__ import annotations

from pathlib import Path

from tests.cli.test_scan import duplicate_of, event
from tests.engine.test_leads import STORY, STORY_ZH

OTHER = (
    "The harbour authority reopened the southern quay after storm repairs that took most of "
    "the summer, and said the new breakwater should spare the fishing fleet from the swell that "
    "flooded the market hall twice last winter. Traders returned to their stalls on Monday. "
    "The council paid for half of the work, the port for the rest, and a second stage, a "
    "sea wall along the promenade, is due to begin in the spring if the government approves it."
)


def test_a_teaser_shorter_than_the_opening_anchor_is_found_after_its_story(tmp_path: Path) -> None:
    """Cuts of 5 to 11 words, which share none of the story's other keys."""
    teasers = {f"t{i}": " ".join(STORY.split()[:words]) for i, words in enumerate(range(5, 12))}
    teasers |= {f"z{i}": STORY_ZH[:chars] for i, chars in enumerate(range(28, 58, 6))}
    lines = [event("story", STORY), event("story_zh", STORY_ZH)]
    lines += [event(tid, text) for tid, text in teasers.items()]
    verdicts = duplicate_of(tmp_path, lines)
    assert {tid: verdicts[tid] for tid in teasers} == {
        tid: "story_zh" if tid.startswith("z") else "story" for tid in teasers
    }


def test_a_post_that_only_opens_as_a_story_does_stays_unique(tmp_path: Path) -> None:
    """The key only nominates: a post that goes on with other words is judged on the rest."""
    stranger = " ".join(STORY.split()[:5]) + " was closed again today, and nobody at the port would say for how long."
    verdicts = duplicate_of(tmp_path, [event("story", STORY), event("stranger", stranger)])
    assert verdicts["stranger"] is None


def test_a_story_after_its_headline_is_news(tmp_path: Path) -> None:
    """A short text that came first is not looked up by the story's opening key: the story
    carries what the headline did not. Another story of the same opening is no copy either."""
    headline = " ".join(STORY.split()[:9])
    verdicts = duplicate_of(tmp_path, [event("headline", headline), event("story", STORY), event("other", OTHER)])
    assert verdicts == {"headline": None, "story": None, "other": None}
