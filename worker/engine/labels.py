"""Labels a feed puts on a headline: its kind before it, its media after it, its outlet last.

A story reaches a feed under labels that are the feed's, not the story's: "BREAKING: …" from
one account and "JUST IN: …" from another, "… (Video)" on one site and "… [PHOTOS]" on the
next, "… - Reuters" in one aggregator and "… - Yahoo Finance" in another (Google News ends
every title with its outlet), "标题_新浪新闻" and "标题|澎湃新闻". A copy with a label its
original lacks was found (the original is contained in it), but two copies with different
labels were two messages to the character sketches and the word check, which hold a short
post one word apart to be another one. :func:`strip_labels` drops, before case folding:

* a *kind* before the text (:data:`_KIND`): "Breaking (news)", "Just in", "Update", "Live",
  "Watch", "Exclusive", "Opinion", "Analysis" and the like, capitalised (a changelog's
  "watch: …" names a file), then ":", "|" or a dash; in Chinese 突发, 重磅, 独家, 最新, 视频,
  提醒… in 【】 or before ：, ！ or |, and an outlet's name in 【】 ("【新华社】", "【央视新闻】");
* a *medium* after it in brackets: "(Video)", "[PHOTOS]", "(updated)", "（视频）", "（组图）";
  or a Chinese credit in brackets, "（来源：新华网）";
* an *outlet's name* after it (:func:`strip_publisher`): English " - ", " – ", " — ", " | "
  or " Source: ", then one to five capitalised words (with "of", "the", "and" and the like
  between them) or a domain ("Investing.com"), without a digit, after at least
  ``MIN_HEAD_WORDS`` words (or ``MIN_HEAD_HAN`` Han characters);
  Chinese "_", "|", " - " or "——" and a site's name ending as sites' names do (…网, …新闻,
  …日报, …客户端), after at least ``MIN_HEAD_HAN`` Han characters.

A name with a digit ("- Round 2", "- Einstein's 115th Birthday") or after a short head ("Let It
Be - The Beatles") stays: there the words after the separator may be what tells two texts
apart, and a number is what the numbers check compares. Nothing is dropped that would leave
fewer than ``MIN_REST`` letters and digits.
"""

from __future__ import annotations

import re

__all__ = ["strip_labels", "strip_publisher", "MIN_HEAD_WORDS", "MIN_HEAD_HAN", "MIN_REST"]

MIN_HEAD_WORDS = 4
MIN_HEAD_HAN = 6
MIN_REST = 8
_KIND_EN = (
    r"breaking(?: news)?|just in|(?:news |breaking )?alert|urgent|flash|developing(?: story)?|update[ds]?"
    r"|live(?: updates?)?|watch|video|photos?|pictures|in pictures|gallery|listen|audio|podcast"
    r"|exclusive|opinion|analysis|explainer|factbox|fact ?check|editorial|commentary|interview|correction"
)
_KIND_ZH = r"突发|重磅|独家|最新|快讯|速报|紧急|视频|直播|图集|组图|热点|关注|提醒|更新|观点|评论|解读|专访|现场"
_ZH_SITE = r"(?:网|新闻|日报|晚报|时报|早报|报|社|台|频道|客户端|财经|资讯|头条|号|知乎|百科|订阅|周刊|杂志)"
_KIND = re.compile(
    rf"\s*(?:(?-i:(?=[A-Z]))(?:{_KIND_EN})\s*(?::|\||\s[-\u2013\u2014]\s)|[\[【(（]\s*(?:{_KIND_ZH})\s*[\]】)）]"
    rf"|(?:{_KIND_ZH})\s*[:!|：！｜]|[\[【]\s*[\u4e00-\u9fff]{{1,10}}{_ZH_SITE}\s*[\]】])\s*",
    re.I,
)
_MEDIUM = re.compile(
    r"\s*[(\[【（](?:video|videos|photos?|pics?|pictures|gallery|watch|live|updated?|audio|podcast|graphic"
    r"|interactive|视频|组图|多图|图集|图|附视频|直播|更新|动图|音频"
    r"|(?:来源|稿源|文章来源|转自)\s*[:：][^()\[\]【】（）\n]{1,20})[)\]】）]\s*\Z",
    re.I,
)
_LETTERS = re.compile(r"[^\W_]")
# A kind ends within this many characters, at one of these marks.
_KIND_SPAN = 40
_KIND_MARKS = (":", "|", " - ", " – ", " — ", "]", "】", ")", "）", "!", "！", "：", "｜")
_CLOSING = (")", "]", "】", "）")
# A name is short; only the tail is searched, so a long text costs a few string searches.
_WINDOW = 64
# Before a name: a dash or bar between spaces, Chinese sites' "_", "|" and "——", a credit's
# "Source:". Not "By" nor a bracket: "… Killed By Police In Chicago" and "… (Linux)" are news.
_SEPARATOR = re.compile(r" [-–—|] |——|[_|]| Sources?: ")
_MARKS = (" - ", "|", "_", "—", "–", " Source")
_LOWER = r"(?:of|the|and|for|on|at|in|de|la|le|du|des|del|da|di|y|&)"
_WORD = r"[A-Z][^\W\d_]*(?:[.&'+-][^\W\d_]+)*\.?"  # capitalised, letters only: "Al-Monitor", "Barron's"
_DOMAIN = r"[A-Za-z][A-Za-z-]*(?:\.[A-Za-z]{2,}){1,3}"
_EN_NAME = re.compile(rf"(?:{_WORD}(?: (?:{_LOWER} )?{_WORD}){{0,4}}|{_DOMAIN})[ \t]*")
_ZH_NAME = re.compile(rf"[\u4e00-\u9fffA-Za-z]{{1,12}}{_ZH_SITE}[ \t]*")
_HAN = re.compile("[\u4e00-\u9fff]")


def strip_labels(text: str) -> str:
    """``text`` without the labels (see the module) at its ends, a few at most."""
    for _ in range(2):
        head = text[:_KIND_SPAN]
        if not any(mark in head for mark in _KIND_MARKS):  # most texts: substring tests cost less than the pattern
            break
        kind = _KIND.match(text)
        if kind is None or not _enough(text, kind.end(), len(text)):
            break
        text = text[kind.end() :]
    for _ in range(3):
        closed = text[-_WINDOW:].rstrip()[-1:] in _CLOSING
        medium = _MEDIUM.search(text, max(0, len(text) - _WINDOW)) if closed else None
        if medium is not None and _enough(text, 0, medium.start()):
            text = text[: medium.start()]
            continue
        cut = _publisher_at(text)
        if cut is None:
            break
        text = text[:cut].rstrip()
    return text


def _enough(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` keeps ``MIN_REST`` letters and digits (counted no further)."""
    found = 0
    for _ in _LETTERS.finditer(text, start, end):
        found += 1
        if found == MIN_REST:
            return True
    return False


def strip_publisher(text: str) -> str:
    """``text`` without a publisher's name at its end (see the module), stripped twice at most
    ("标题_新浪新闻_新浪网" has two)."""
    for _ in range(2):
        cut = _publisher_at(text)
        if cut is None:
            break
        text = text[:cut].rstrip()
    return text


def _publisher_at(text: str) -> int | None:
    """Where the separator before a publisher's name at the end of ``text`` starts, if any."""
    start = max(0, len(text) - _WINDOW)
    tail = text[start:]
    if not any(mark in tail for mark in _MARKS):  # most texts: substring tests cost less than the pattern
        return None
    last = None
    for match in _SEPARATOR.finditer(text, start):
        last = match
    if last is None or last.start() == 0:
        return None
    name, head = text[last.end() :], text[: last.start()]
    line = head[head.rfind("\n") + 1 :]
    if _HAN.search(name) or last.group() in ("_", "|", "——"):
        if _ZH_NAME.fullmatch(name) and len(_HAN.findall(line)) >= MIN_HEAD_HAN:
            return last.start()
        return None
    if _EN_NAME.fullmatch(name) and (len(line.split()) >= MIN_HEAD_WORDS or len(_HAN.findall(line)) >= MIN_HEAD_HAN):
        return last.start()
    return None
