"""The dev set's sixth part: English one-line posts under the feed's edits.

Why: the parts before hold a handful of English texts under 30 characters (the dev corpora's
English of that length is used up), while alerts, titles and status lines are mostly that
short, and the held-out set has forty. This part runs the feed part's classes and hard
negatives (``bench/devfeed.py``) over one-line entries of 12-30 characters of the installed
Debian change logs (``bench/devswaps.py:changelog_posts``): "Fix build with gcc-13",
"Upload to unstable". Entries restate each other ("New upstream release" in every package),
so the very short part's filter (``bench/devtiny.py``) keeps out near restatements and cuts.

It never reads the held-out set's sources (``bench/heldout.py``). The part comes last in
arrival order (ids ``fl…``, clusters ``l…``), so the parts before keep their verdicts and figures.
"""

from __future__ import annotations

import random
from typing import Any

from bench import devfeed, devswaps, devtiny

SIZE = 800
MIN_CHARS, MAX_CHARS = 12, 30
_SEED_SALT = 0x11E5


def extend(
    events: list[dict[str, Any]], truth: list[dict[str, Any]], seed: int, size: int = SIZE
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The events and truth before, followed by about ``size`` events of one-line English posts,
    deterministic in (the events before, seed, size)."""
    rng = random.Random(seed ^ _SEED_SALT)
    posts = [p for p in devswaps.changelog_posts() if MIN_CHARS <= len(p.text) <= MAX_CHARS]
    rng.shuffle(posts)
    made = devfeed._stream(posts, size, rng, devtiny.new_posts(events))
    return devfeed.append_part(events, truth, made, "fl", "l")
