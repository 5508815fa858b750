"""Wrappers real feeds put around a story that neither quality set holds, one at a time.

The development set's copies carry the edits its generator knows; a feed carries more. This
probe takes stories of the development set (``bench/quality.py``'s: its originals of 150
characters and more, Chinese and English) and gives each a copy with one wrapper of a kind
the sets lack, then scans the stories and that wrapper's copies alone (one ``neardup scan``
each, so that a copy can only be found through its own story; ``--short`` takes posts of
10-99 characters instead, where a wrapper weighs most):

* markup: ``html_paragraphs`` (each line a ``<p>``), ``html_breaks`` (``<br />`` ending each
  line), ``html_link`` (an ``<a href>`` line "Read the full story"), ``cms_blocks`` (each line a
  WordPress block: a ``<p>`` between ``<!-- wp:paragraph -->`` comments), ``cdata`` (an RSS
  item's ``<![CDATA[…]]>``), ``page_frame`` (a scraped page: the site's menu in ``<nav>``, the
  story's lines as ``<p>``, share links, the site's ``<footer>``), ``entities`` (quotes and
  apostrophes as ``&#39;`` and ``&quot;``), ``entities_numeric`` (every CJK character and quote as a decimal reference, as
  some pages escape them), ``markdown_link`` (a Telegram or Reddit repost's ``[Read the full
  story](…?utm_source=…)`` line);
* calls to action: ``full_story`` ("Read the full story at The Guardian"), ``continue``
  ("Continue reading...");
* a wrong decoding: ``mojibake`` (the text's UTF-8 read as Windows-1252, "donâ€™t");
* emoji written as codes: ``emoji_codes`` (Weibo's "[哈哈]" after two Chinese clauses and a
  "[doge]" at the end; Slack's ":tada:" after two English sentences and a ":joy:");
* layout: ``smart_quotes``, ``invisible`` (no-break and zero-width spaces), ``reflow`` (the
  text on one line), ``advert`` (an "Advertisement" line mid-story), ``swapped`` (the first
  two paragraphs in turn), ``caps_header`` (the first eight words again in capitals on top);
* another outlet's style of the story's own words (:mod:`bench.restyles`): ``digit_groups``
  ("1,000" as "1000", "25000" as "25,000"),
  ``number_words`` (English numbers two to ten spelt out or in digits, "five" as "5"),
  ``month_style`` (a month before a date shortened as AP does, "Nov. 30", or written out),
  ``wire_units`` (amounts as a wire's briefs write them, "5 mln", "3 pct", or back),
  ``ap_titles`` (a title before a name as AP shortens it, "Gov. Gavin Newsom", or written out),
  ``zh_numerals`` (a Chinese story's counts, dates and shares in numerals, "3名" as "三名",
  "1998年" as "一九九八年", "2.1%" as "百分之二点一"), ``zh_weekdays`` (its weekdays the other
  way, "星期一" as "周一" or back), ``zh_wan`` (its large figures the other way, "1.2万" as
  "12000", "1.2亿" as "12000万"), ``zh_times`` (its times and dates as other outlets write
  them, "15时20分" as "下午3点20分", "1998年1月5日" as "1998-01-05");
* credits: ``wire_trailer`` ("(Reporting by …; Editing by …)"), ``update_prefix`` ("UPDATE
  2-"), ``byline`` ("By Jane Doe, Associated Press"), ``photo_credit`` ("Photo: Getty
  Images"), ``short_links`` (two shortened links after the text);
* for Chinese, Traditional script: ``zh_traditional`` (OpenCC ``s2t``, character by
  character), ``zh_taiwan`` (OpenCC ``s2twp``, as Wikipedia converts for Taiwan: its characters
  and its words, 内存 as 記憶體); and ``zh_source`` (原标题 and 来源 lines, 责任编辑 after),
  ``zh_reporter`` ((记者 …) before, 点击关注 after), ``zh_caption`` (a ▲ photo caption after
  the first line);
* a Chinese slip: ``zh_homophones`` (one in 25 of the characters that have a common
  homophone, at least one, swapped for the most common other character of its syllable, as a
  pinyin input method offers it: the development set's generator makes no such slip).

It prints each wrapper's recall by language, and how many events were called a copy of
another story. A development probe, where the markup rules of ``worker/engine/markup.py``
were found, not a held-out set.

    python -m bench.wrappers
    python -m bench.wrappers --per-language 60 --only html_paragraphs,markdown_link
    python -m bench.wrappers --short --per-language 60
"""

from __future__ import annotations

import argparse
import json
import random
import re
import tempfile
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import cast

from bench import devset, restyles
from bench.quality import build_set, run_neardup

_HAN = re.compile("[\u4e00-\u9fff]")
_QUOTED = re.compile(r'"([^"\n]*)"')
_UNDEFINED_1252 = (0x81, 0x8D, 0x8F, 0x90, 0x9D)
_CLAUSE_END = re.compile("[，。！]")
_SENTENCE_END = re.compile(r"(?<=[a-z])[.!?,](?=\s)")
LINK = "https://example.com/news/12345?utm_source=twitter&utm_medium=social"


def _lines(text: str) -> list[str]:
    return [line for line in text.split("\n") if line.strip()]


def _middle(text: str, inserted: str) -> str:
    lines = _lines(text)
    half = max(1, len(lines) // 2)
    return "\n".join([*lines[:half], inserted, *lines[half:]])


def _swapped(text: str) -> str:
    lines = _lines(text)
    return "\n".join([*lines[1:2], *lines[:1], *lines[2:]]) if len(lines) > 2 else text


@cache
def _same_sound() -> dict[str, str]:
    """Each common character (jieba's dictionary counts it 1,000 times or more) and the most
    common other one of its toneless syllable: what a pinyin input method offers in its place."""
    from worker.engine.sounds import sound_table

    table = sound_table()
    counts = {c: n for c, n in devset.char_counts().items() if _HAN.match(c) and n >= 1000}
    syllables: dict[int, list[str]] = {}
    for char in sorted(counts, key=counts.__getitem__, reverse=True):
        syllables.setdefault(table.get(ord(char), ord(char)), []).append(char)
    return {c: next(o for o in group if o != c) for group in syllables.values() if len(group) > 1 for c in group}


def _homophones(text: str) -> str:
    """One slip of a pinyin input method in 25 characters that have a common homophone, at least
    one: a character swapped for the most common other one of its syllable, at places drawn
    from the text's own CRC (so each run makes the same copies)."""
    places = [i for i, c in enumerate(text) if c in _same_sound()]
    if not places:
        return text
    chosen = random.Random(zlib.crc32(text.encode())).sample(places, max(1, len(places) // 25))
    chars = list(text)
    for i in chosen:
        chars[i] = _same_sound()[chars[i]]
    return "".join(chars)


def _emoji_codes(text: str) -> str:
    """Emoji as a client writes them as text: Weibo's "[哈哈]" after a Chinese clause, Slack's
    ":tada:" after an English sentence, and one more at the end."""
    if _HAN.search(text):
        return _CLAUSE_END.sub(lambda m: m.group() + "[哈哈]", text, count=2) + "[doge]"
    return _SENTENCE_END.sub(lambda m: " :tada:" + m.group(), text, count=2) + " :joy:"


def misread(text: str) -> str:
    """The text's UTF-8 bytes as a browser reads Windows-1252 (its five undefined bytes passed
    through): mojibake, as the probe and the tests make it."""
    return "".join(chr(b) if b in _UNDEFINED_1252 else bytes((b,)).decode("cp1252") for b in text.encode())


def _page(text: str) -> str:
    """The story as a scraped page: its site's menu, its lines as paragraphs, share links, the site's footer."""
    if _HAN.search(text):
        menu, share, foot = "首页 | 新闻 | 国际 | 体育 | 财经", "分享到：微信 微博 QQ空间", "© 2024 示例新闻网 版权所有"
    else:
        menu, share, foot = (
            "Home | News | World | Sport | Business",
            "Share on Facebook · Share on Twitter",
            "© 2024 Example News. All rights reserved.",
        )
    body = "".join(f"<p>{line}</p>" for line in _lines(text))
    return f"<nav>{menu}</nav>{body}<div class='share'>{share}</div><footer>{foot}</footer>"


@cache
def _opencc(config: str) -> Callable[[str], str]:
    """A Chinese text as OpenCC converts it (``s2t``: Traditional characters; ``s2twp``: Taiwan's, and its words)."""
    import opencc

    return cast(Callable[[str], str], opencc.OpenCC(config).convert)


def _numeric(text: str) -> str:
    return "".join(f"&#{ord(c)};" if _HAN.match(c) or c in "\"'" else c for c in text)


WRAPPERS: dict[str, Callable[[str], str]] = {
    "html_paragraphs": lambda t: "<p>" + "</p>\n<p>".join(_lines(t)) + "</p>",
    "html_breaks": lambda t: t.replace("\n", "<br />\n"),
    "html_link": lambda t: t + f'\n<a href="{LINK}">Read the full story</a>',
    "cms_blocks": lambda t: "".join(
        f"<!-- wp:paragraph -->\n<p>{line}</p>\n<!-- /wp:paragraph -->\n" for line in _lines(t)
    ),
    "cdata": lambda t: f"<![CDATA[{t}]]>",
    "page_frame": _page,
    "entities": lambda t: t.replace("&", "&amp;").replace("'", "&#39;").replace('"', "&quot;"),
    "entities_numeric": _numeric,
    "markdown_link": lambda t: t + f"\n\n[Read the full story]({LINK})",
    "full_story": lambda t: t + "\n\nRead the full story at The Guardian",
    "continue": lambda t: t + "\nContinue reading...",
    "mojibake": misread,
    "smart_quotes": lambda t: _QUOTED.sub("\u201c\\1\u201d", t).replace("'", "\u2019"),
    "invisible": lambda t: t.replace(" ", "\u00a0", 20).replace("。", "。\u200b").replace(". ", ".\u200b "),
    "reflow": lambda t: " ".join(t.split()),
    "advert": lambda t: _middle(t, "Advertisement"),
    "swapped": _swapped,
    "caps_header": lambda t: " ".join(t.split()[:8]).upper() + "\n\n" + t,
    "wire_trailer": lambda t: t + "\n\n(Reporting by Jane Doe in London; Editing by Mark Potter)",
    "update_prefix": lambda t: "UPDATE 2-" + t,
    "byline": lambda t: "By Jane Doe, Associated Press\n\n" + t,
    "photo_credit": lambda t: t + "\n\nPhoto: Getty Images",
    "short_links": lambda t: t + " https://t.co/AbCdEf123 https://bit.ly/3xYz",
    "digit_groups": restyles.digit_groups,
    "number_words": restyles.number_words,
    "month_style": restyles.month_style,
    "wire_units": restyles.wire_units,
    "ap_titles": restyles.ap_titles,
    "zh_numerals": restyles.zh_numerals,
    "zh_weekdays": restyles.zh_weekdays,
    "zh_wan": restyles.zh_wan,
    "zh_times": restyles.zh_times,
    "zh_traditional": lambda t: _opencc("s2t")(t),
    "zh_taiwan": lambda t: _opencc("s2twp")(t),
    "zh_homophones": _homophones,
    "zh_source": lambda t: "原标题：" + t[:18] + "\n来源：新华社\n" + t + "\n责任编辑：张三",
    "zh_reporter": lambda t: "（记者 王小明 通讯员 李华）" + t + "\n\n点击关注，获取更多资讯",
    "emoji_codes": _emoji_codes,
    "zh_caption": lambda t: "\n".join([*_lines(t)[:1], "▲图为现场画面（资料图）", *_lines(t)[1:]]),
}
# Wrappers of one language's feeds only.
ONLY_ZH = (
    "zh_traditional",
    "zh_taiwan",
    "zh_homophones",
    "zh_source",
    "zh_reporter",
    "zh_caption",
    "zh_numerals",
    "zh_weekdays",
    "zh_wan",
    "zh_times",
)
ONLY_EN = (
    "markdown_link",
    "full_story",
    "continue",
    "entities",
    "number_words",
    "month_style",
    "wire_units",
    "ap_titles",
)


@dataclass(frozen=True)
class Event:
    id: str
    text: str
    lang: str
    original: str | None = None  # a copy's story id


def stories(per_language: int, short: bool = False, seed: int = devset.DEFAULT_SEED) -> dict[str, list[str]]:
    """Up to ``per_language`` originals of the development set per language: stories of 150
    characters and more, or with ``short`` posts of 10-99."""
    events, truth = build_set("dev", devset.DEFAULT_SIZE, seed)
    found: dict[str, list[str]] = {"en": [], "zh": []}
    for event, row in zip(events, truth, strict=True):
        chosen, size = found[row["lang"]], len(event["text"])
        fits = 10 <= size < 100 if short else size >= 150
        if row["role"] == "original" and fits and len(chosen) < per_language:
            chosen.append(event["text"])
    return found


def build(wrapper: str, texts: dict[str, list[str]]) -> list[Event]:
    """The stories, then each one's copy under ``wrapper`` (none where it changes nothing or is
    another language's)."""
    wrap = WRAPPERS[wrapper]
    originals = [Event(f"{lang}{i}", text, lang) for lang, pool in texts.items() for i, text in enumerate(pool)]
    copies = []
    for story in originals:
        other = ONLY_EN if story.lang == "zh" else ONLY_ZH
        copy = wrap(story.text)
        if wrapper not in other and copy != story.text:
            copies.append(Event(f"{wrapper}:{story.id}", copy, story.lang, story.id))
    return originals + copies


def score(events: Sequence[Event], duplicate_of: dict[str, str | None]) -> tuple[dict[str, float], int]:
    """Recall of the copies by language, and how many events were called a copy of another story."""
    found: dict[str, list[bool]] = {}
    joined = 0
    for event in events:
        said = duplicate_of.get(event.id)
        if event.original is not None:
            found.setdefault(event.lang, []).append(said == event.original)
        joined += said is not None and said != event.original
    return {lang: sum(hits) / len(hits) for lang, hits in found.items()}, joined


def measure(wrapper: str, texts: dict[str, list[str]]) -> tuple[dict[str, float], int, int]:
    """Recall by language, events called a copy of another story, and the copies made."""
    return scan_scored(build(wrapper, texts))


def scan_scored(events: Sequence[Event]) -> tuple[dict[str, float], int, int]:
    """:func:`score` of one ``neardup scan`` of ``events``, and how many of them are copies."""
    with tempfile.TemporaryDirectory(prefix="neardup-wrappers-") as tmp:
        path = Path(tmp) / "events.jsonl"
        path.write_text("".join(json.dumps({"id": e.id, "text": e.text}, ensure_ascii=False) + "\n" for e in events))
        verdicts = {v.id: v.duplicate_of for v in run_neardup(path)}
    recall, joined = score(events, verdicts)
    return recall, joined, sum(e.original is not None for e in events)


def table_header(first: str, width: int, joined: str) -> str:
    """The header of a probe's table (this one's, ``bench/labels.py``'s, ``bench/teasers.py``'s)."""
    return f"{first:<{width}}{'copies':>7}{'en':>7}{'zh':>7}   called a copy of another {joined}"


def table_row(name: str, width: int, scored: tuple[dict[str, float], int, int]) -> str:
    """One line of a probe's table: the name, the copies made, recall by language ("-" where a
    language made none) and the events called a copy of another text (:func:`scan_scored`)."""
    recall, joined, copies = scored
    cells = "".join(f"{recall[lang]:>7.2f}" if lang in recall else f"{'-':>7}" for lang in ("en", "zh"))
    return f"{name:<{width}}{copies:>7}{cells}   {joined}"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--per-language", type=int, default=40, help="stories a language")
    parser.add_argument("--only", default="", help="comma-separated wrappers (default: all)")
    parser.add_argument("--short", action="store_true", help="short posts (10-99 characters), not stories")
    args = parser.parse_args(argv)
    chosen = [w for w in args.only.split(",") if w] or list(WRAPPERS)
    unknown = [w for w in chosen if w not in WRAPPERS]
    if unknown:
        parser.error(f"unknown wrappers {unknown}; choose from {', '.join(WRAPPERS)}")
    texts = stories(args.per_language, args.short)
    kind = "posts of 10-99 characters" if args.short else "stories of 150 characters and more"
    print(f"{len(texts['en'])} English and {len(texts['zh'])} Chinese {kind} of the development set")
    print(table_header("wrapper", 18, "story"))
    for wrapper in chosen:
        print(table_row(wrapper, 18, measure(wrapper, texts)))


if __name__ == "__main__":
    main()
