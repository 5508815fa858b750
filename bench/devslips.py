"""The dev set's third part: stories retyped or scanned with slips all through them.

Why: the first part misspells two to four words of a story of a thousand characters (about
0.3 % of its letters), the feed part slips 1-5 % of the letters of short posts only. A story
retyped in haste or read back by OCR slips as often as a post does, and then no twelve words in
a row, opening or closing, survive, and its SimHash moves past the tables' reach. This part is
copies of the first part's stories of 300 characters and more with the feed part's slips at
1-5 % (``slip_typos``: keyboard neighbours, dropped, doubled or swapped letters, Chinese
characters of the same sound) or its OCR look-alikes (``ocr_typos``), under the class names
``long_slips`` and ``long_ocr``.

The copies come after the feed part in arrival order (ids ``ls…``) and name the first part's
clusters, so the parts before keep their verdicts and figures; the whole dev set spans under
three days, well within retention.
"""

from __future__ import annotations

import random
from typing import Any

from bench import devset, feededits

CLASSES = {"long_slips": feededits.slip_typos, "long_ocr": feededits.ocr_typos}
MIN_CHARS = 300
SHARE = 0.05  # copies per event of the parts before
_SEED_SALT = 0x511B5


def extend(
    events: list[dict[str, Any]], truth: list[dict[str, Any]], seed: int, size: int | None = None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The events and truth before, followed by ``size`` slipped copies (by default ``SHARE`` of
    the events before), deterministic in (the events before, seed, size)."""
    rng = random.Random(seed ^ _SEED_SALT)
    text = {e["id"]: e["text"] for e in events}
    stories = [t for t in truth if t["role"] == "original" and t["kind"] != "post" and len(text[t["id"]]) >= MIN_CHARS]
    rng.shuffle(stories)
    count = round(SHARE * len(events)) if size is None else size
    ts = (events[-1]["ts"] if events else devset.EPOCH_MS) + devset.GAP_MS
    new_events: list[dict[str, Any]] = []
    new_truth: list[dict[str, Any]] = []
    names = sorted(CLASSES)
    for story in stories:
        if len(new_events) >= count:
            break
        name = names[len(new_events) % len(names)]
        slipped = CLASSES[name](text[story["id"]], story["lang"], rng)
        if slipped is None:
            continue
        own = f"ls{len(new_events):06d}"
        new_events.append({"id": own, "text": slipped, "ts": ts})
        new_truth.append(
            {
                "id": own, "cluster": story["cluster"], "lang": story["lang"], "kind": story["kind"], "role": "copy",
                "transforms": [name], "hard_negative": None, "related": story["id"], "source": story["source"],
            }
        )  # fmt: skip
        ts += int(rng.expovariate(1 / devset.GAP_MS))
    return events + new_events, truth + new_truth
