"""The dev set's fifth part: short posts that differ from another in one word.

Why: alerts, questions and status lines come in families that share all but one word
("Database db1 is down" / "… is up", "What is your favorite book?" / "… hobby?",
"启动偏移量" / "结束偏移量"). Their character 3-grams agree but for the few around the word, as a
copy's with a slip or two do, and a filter that calls them copies suppresses a different
message. The parts before hold no such pair, so nothing tuned on them saw one. This part is
very short real posts of the dev corpora that no part before contains (``bench/devtiny.py``'s
sources), each followed by a hard negative, ``short_word_swap``: the same post with one word
(a Chinese word of two or more characters, an English word of three or more letters that is
not a function word) replaced by a word of another post. Half of the posts also get a copy
with slips (``slip_typos`` or ``ocr_typos``, the feed part's), so the same texts show what
telling a word from a slip costs in recall.

English very short text of the dev corpora is used up by the parts before, so English posts
here are also change-log entries of the installed Debian packages
(``/usr/share/doc/*/changelog.Debian.gz``: "Fix crash when the config file is empty",
"d/watch: Look for development versions"), short lines of a feed's own kind, alerts and
status lines, that no set reads elsewhere. Only releases signed before June 2023 count, each
source package's log once, so that the set does not change when the machine's packages are
upgraded (chromium's log gains a release a week). It never reads the held-out set's sources
(``bench/heldout.py``). The part comes last in arrival order (ids ``fw…``, clusters ``w…``), so
the parts before keep their verdicts and figures.
"""

from __future__ import annotations

import gzip
import random
import re
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from functools import cache
from pathlib import Path
from typing import Any

from bench import devfeed, devtiny, feededits

HARD_NEGATIVE_KINDS = ("short_word_swap",)
SIZE = 600
_SEED_SALT = 0x5A4B
# English words a swap leaves alone: changing one of these is rarely another message.
_FUNCTION_WORDS = frozenset(
    "the and for are but not you all any can had her was one our out has his how its may new now old see two way "
    "who did get him let say she too use that with have this will your from they been than them then were what "
    "when which would there their about into more some could other".split()
)
_EN_WORD = re.compile(r"[A-Za-z]{3,}")
CHANGELOGS = Path("/usr/share/doc")
_ENTRY = re.compile(r"^ {2,4}[*-] (.+)$")
_SOURCE = re.compile(r"^([a-z0-9][a-z0-9+.-]+) \(")
_TRAILER = re.compile(r"^ -- .*>  (.+)$")
# Entries of releases signed before this date only: an installed package's log grows at the top
# with every upload (Debian's chromium takes one a week), and the pool must not move with it.
RELEASED_BEFORE = datetime(2023, 6, 1, tzinfo=UTC)


def changelog_posts() -> list[devfeed.Post]:
    """One-line entries of 15-80 characters of the installed Debian change logs, released
    before :data:`RELEASED_BEFORE`, each source package's log once (its binary packages ship
    copies of it), in the order of the sources' names: the same pool whichever of a source's
    packages, and whichever later versions, a machine has installed."""
    return list(_pool(CHANGELOGS))


@cache
def _pool(directory: Path) -> tuple[devfeed.Post, ...]:
    """:func:`changelog_posts` of ``directory``, read once a process: three parts of a dev set
    draw on it, and reading some 700 logs takes about a second."""
    logs: dict[str, list[str]] = {}
    for path in sorted(directory.glob("*/changelog.Debian.gz")):
        with gzip.open(path, "rt", encoding="utf-8", errors="replace") as text:
            lines = text.read().splitlines()
        source = _SOURCE.match(lines[0]) if lines else None
        if source is not None:
            logs.setdefault(source.group(1), lines)
    return tuple(post for source in sorted(logs) for post in _released_entries(source, logs[source]))


def _released_entries(source: str, lines: list[str]) -> list[devfeed.Post]:
    """A log's entries of 15-80 ASCII characters whose release was signed before the cutoff;
    a release whose date cannot be read is left out."""
    posts: list[devfeed.Post] = []
    pending: list[str] = []
    for line in lines:
        entry = _ENTRY.match(line.rstrip())
        if entry and 15 <= len(entry.group(1)) <= 80 and entry.group(1).isascii():
            pending.append(entry.group(1))
        trailer = _TRAILER.match(line)
        if trailer is None:
            continue
        if _signed(trailer.group(1)) < RELEASED_BEFORE:
            posts.extend(devfeed.Post(f"changelog:{source}:{len(posts) + i}", "en", t) for i, t in enumerate(pending))
        pending = []
    return posts


def _signed(date: str) -> datetime:
    """A release's signature date; one that cannot be read counts as not before the cutoff."""
    try:
        signed = parsedate_to_datetime(date.strip())
    except (TypeError, ValueError):
        return RELEASED_BEFORE
    return signed if signed.tzinfo is not None else signed.replace(tzinfo=UTC)


def _words(text: str, lang: str) -> list[tuple[int, int]]:
    """Spans of the words a swap may replace."""
    if lang == "zh":
        import jieba

        spans, at = [], 0
        for word in jieba.lcut(text):
            if len(word) >= 2 and all("\u4e00" <= c <= "\u9fff" for c in word):
                spans.append((at, at + len(word)))
            at += len(word)
        return spans
    return [m.span() for m in _EN_WORD.finditer(text) if m.group().lower() not in _FUNCTION_WORDS]


def word_swap(text: str, lang: str, rng: random.Random, donors: list[str]) -> str | None:
    """``text`` with one of its words replaced by a different word of a donor post."""
    spans = _words(text, lang)
    if not spans:
        return None
    start, end = rng.choice(spans)
    old = text[start:end].lower()
    for donor in rng.sample(donors, min(len(donors), 20)):
        choices = [donor[a:b] for a, b in _words(donor, lang) if donor[a:b].lower() != old]
        if choices:
            return text[:start] + rng.choice(choices) + text[end:]
    return None


def extend(
    events: list[dict[str, Any]], truth: list[dict[str, Any]], seed: int, size: int = SIZE
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The events and truth before, followed by about ``size`` events: posts, their one-word
    swaps, and slipped copies of half of them; deterministic in (the events before, seed, size)."""
    rng = random.Random(seed ^ _SEED_SALT)
    posts = devtiny.load_posts(events)
    rng.shuffle(posts)
    logs = changelog_posts()
    rng.shuffle(logs)
    # Alternate the languages: the Chinese posts far outnumber the English ones.
    zh = [p for p in posts if p.lang == "zh"]
    en = [p for p in posts if p.lang == "en"] + logs
    posts = [p for pair in zip(zh, en, strict=False) for p in pair]
    accept = devtiny.new_posts(events)
    donors = {lang: [p.text for p in posts if p.lang == lang][:200] for lang in ("zh", "en")}
    made: list[devfeed._Event] = []
    slips = (("slip_typos", feededits.slip_typos), ("ocr_typos", feededits.ocr_typos))
    for post in posts[400:]:  # the first 400 give the donors' words
        if len(made) >= size:
            break
        swapped = word_swap(post.text, post.lang, rng, donors[post.lang])
        if swapped is None or not accept(post.text):
            continue
        t = rng.uniform(0, size)
        made.append(devfeed._Event(post.text, post.lang, t, len(made), "original", post.sid, []))
        a = len(made) - 1
        made.append(
            devfeed._Event(swapped, post.lang, t + rng.expovariate(1 / 20), len(made), "hard_negative", post.sid, [])
        )
        made[-1].hard_negative, made[-1].related = "short_word_swap", a
        name, slip = slips[a % 2]
        copy = slip(post.text, post.lang, rng) if rng.random() < 0.5 else None
        if copy is not None:
            made.append(
                devfeed._Event(copy, post.lang, t + rng.expovariate(1 / 20), a, "copy", post.sid, [name], None, a)
            )
    return devfeed.append_part(events, truth, made, "fw", "w")
