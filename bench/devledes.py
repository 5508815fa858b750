"""The dev set's seventh part: teasers of long stories, the lede a feed shows before its story.

Why: the parts before cut a text to 35-95 % of itself, where a feed's teaser (an RSS summary,
a link preview, a push notice) is the first 60-320 characters of a story of a thousand: a
twentieth of its words, whose containment in the story the sketches estimate from a
resemblance of a few hundredths. Half of the teasers arrive before their story, as a
summary runs ahead of the full text. Its hard negative, ``lede_stranger``, opens with 30-50 %
of a story's teaser and goes on with another post: the same opening, another substance.

Stories are the dev corpora's news (People's Daily, the gensim English news) that share no
sentence with an event before; it never reads the held-out set's sources
(``bench/heldout.py``). The part comes last in arrival order (ids ``fe…``, clusters ``e…``),
so the parts before keep their verdicts.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from typing import Any

from bench import devfeed, devset
from bench.devfeed import _Event

HARD_NEGATIVE_KINDS = ("lede_stranger",)
PAIRS = 160  # stories with a teaser, alternately Chinese and English while English ones last
STRANGERS = 60
MIN_STORY_CHARS = {"en": 500, "zh": 700}
# Teaser lengths in characters: a Chinese character carries about what two Latin letters do.
SPANS = {"en": ((60, 120), (120, 200), (200, 320)), "zh": ((30, 60), (60, 100), (100, 160))}
MARKS = {"en": ("…", "...", " Read more", " (more)", ""), "zh": ("…", "……", "…全文", "（全文）", "")}
_SEED_SALT = 0x1EDE


def extend(
    events: list[dict[str, Any]], truth: list[dict[str, Any]], seed: int, pairs: int = PAIRS
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The events and truth before, followed by ``pairs`` stories each with its teaser and
    ``STRANGERS`` * pairs / PAIRS hard negatives, deterministic in (the events before, seed, pairs)."""
    rng = random.Random(seed ^ _SEED_SALT)
    sources = devset.load_sources()
    fresh = _unseen(events)
    stories = {
        lang: [s for s in sources[(lang, "news")] if len(s.text) >= MIN_STORY_CHARS[lang]] for lang in ("en", "zh")
    }
    for lang, pool in stories.items():
        rng.shuffle(pool)
        stories[lang] = [s for s in pool if fresh(s.text, lang)]
    strangers = round(STRANGERS * pairs / PAIRS)
    # Each stranger goes on with a text kept out of the stream: a post of the short corpora.
    donors = {lang: [] for lang in ("en", "zh")}
    for lang, pool in donors.items():
        texts = [src.text for src in sources[(lang, "short")] if len(src.text) >= 40]
        rng.shuffle(texts)
        pool.extend(t for t in texts[: 10 * strangers] if fresh(t, lang))
    out: list[_Event] = []
    for i in range(pairs):
        lang = ("zh", "en")[i % 2] if stories[("zh", "en")[i % 2]] else "zh"
        if not stories[lang]:
            break
        story = stories[lang].pop()
        t = rng.uniform(0, pairs)
        out.append(_Event(story.text, lang, t, len(out), "original", story.sid, []))
        # Half the teasers run ahead of their story.
        lead = t + rng.expovariate(1 / 5) * (1 if rng.random() < 0.5 else -1)
        teaser = lede(story.text, lang, rng)
        out.append(_Event(teaser, lang, lead, len(out) - 1, "copy", story.sid, ["lede_teaser"], None, len(out) - 1))
    _add_strangers(out, donors, strangers, rng)
    return devfeed.append_part(events, truth, out, "fe", "e")


_OPENING = 24  # characters of a sentence that name it


def _openings(text: str, lang: str) -> set[str]:
    """The first characters of each sentence of ``text``, spaces squeezed."""
    flat = (re.sub(r"\s+", " ", s).strip() for s in devset.split_sentences(text, lang))
    return {s[:_OPENING] for s in flat if len(s) >= _OPENING}


def _unseen(before: list[dict[str, Any]]) -> Callable[[str, str], bool]:
    """Whether a text shares no sentence with the events before or the texts accepted so far
    (sentences named by their openings): the parts before append sentences of stories to
    other posts, and the corpora repeat themselves (one Lee article is in two files)."""
    seen = {o for e in before for lang in ("en", "zh") for o in _openings(e["text"], lang)}

    def fresh(text: str, lang: str) -> bool:
        mine = _openings(text, lang)
        if mine & seen:
            return False
        seen.update(mine)
        return True

    return fresh


def lede(text: str, lang: str, rng: random.Random) -> str:
    """The first characters of ``text`` as a teaser shows them: a length of one of ``SPANS``,
    English cut at a word's end, then one of ``MARKS``."""
    low, high = rng.choice(SPANS[lang])
    return _at_word_end(text[: rng.randint(low, high)], lang).rstrip(" ,;:") + rng.choice(MARKS[lang])


def _at_word_end(cut: str, lang: str) -> str:
    """An English cut taken back to its last space (kept), so that it splits no word."""
    return cut[: cut.rindex(" ") + 1] if lang == "en" and " " in cut else cut


def _add_strangers(out: list[_Event], donors: dict[str, list[str]], n: int, rng: random.Random) -> None:
    """``n`` hard negatives, each after the story it opens like: 30-50 % of the story's teaser
    (so that neither holds the other), then the opening of a post kept out of the stream, as
    long together as another teaser of the story would be."""
    teasers = {e.related: e.text for e in out if e.role == "copy"}
    stories = [j for j, e in enumerate(out) if e.role == "original"]
    rng.shuffle(stories)
    for a in stories[:n]:
        lang = out[a].lang
        if not donors[lang]:
            continue
        size = len(lede(out[a].text, lang, rng))
        head = _at_word_end(teasers[a][: round(len(teasers[a]) * rng.uniform(0.3, 0.5))], lang)
        rest = lede(donors[lang].pop(), lang, rng)
        text = head + rest[: max(size - len(head), 20)]
        t = out[a].time + rng.expovariate(1 / 5)
        out.append(_Event(text, lang, t, len(out), "hard_negative", f"stranger:{out[a].source}", []))
        out[-1].hard_negative, out[-1].related = "lede_stranger", a
