"""Normalise raw feed text so that copies of one story produce the same words.

Two reposts of a story differ in ways that say nothing about the story: full-width vs
half-width characters, Traditional vs Simplified script, letter case, links, @mentions,
emoji, invisible characters, and the wrapper each outlet adds (a dateline in front, a
footer behind). ``normalize`` removes exactly those differences and keeps punctuation and
word order, so the tokenizer sees the story text only.

Every step works through compiled regular expressions, ``str`` methods, OpenCC's C++ code
or Rust; nothing loops over characters in Python, because normalisation runs on every event.
Character tables derived from ``unicodedata`` are built on first use (``functools.cache``)
so importing this module stays cheap, and kept between processes
(:mod:`worker.engine.disk_cache`).

Two shortcuts keep the exact result at a fraction of the cost (``normalize_reference`` takes
neither, and the tests hold the two equal):

* Steps 1-3 (junk characters, NFKC, typographic marks) run in one native pass
  (``worker._native.Cleaner``) over a per-character table computed here from
  ``unicodedata``, for texts whose characters all have a per-character NFKC (see
  ``_clean_table``).
* OpenCC is skipped when the text contains no character that could start a change: a
  conversion changes a text only where one of its dictionary keys whose value differs
  occurs in it, and every such key contains one of its trigger characters
  (:func:`worker.engine.t2s.may_change`).
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable, Iterable
from functools import cache
from typing import Any

from worker.engine import disk_cache, t2s
from worker.engine.boilerplate import (
    DOMAIN_HINT,
    EMOJI_CODES,
    LINKS,
    SHORTCODES,
    TAGS,
    may_have_repost,
    strip_dateline,
    strip_footers,
    strip_reposts,
    strip_title,
)
from worker.engine.datetimes import dates_as_nian, times_as_clock
from worker.engine.labels import strip_labels
from worker.engine.markup import strip_markup
from worker.engine.measures import measures_one_way
from worker.engine.mojibake import repair
from worker.engine.numerals import numerals_as_digits, wan_as_digits, weekdays_as_zhou

__all__ = ["normalize", "normalize_reference", "nfkc"]

_HAN = re.compile("[\u3400-\u9fff\uf900-\ufaff]")


# --- character tables (built lazily) ------------------------------------------------------


def _char_class(codepoints: Iterable[int]) -> str:
    """A regex character class body covering ``codepoints`` as compact ranges."""
    parts: list[str] = []
    start = prev = -2
    for cp in sorted(codepoints):
        if cp == prev + 1:
            prev = cp
            continue
        if start >= 0:
            parts.append(_range(start, prev))
        start = prev = cp
    if start >= 0:
        parts.append(_range(start, prev))
    return "".join(parts)


def _range(lo: int, hi: int) -> str:
    return re.escape(chr(lo)) if lo == hi else f"{re.escape(chr(lo))}-{re.escape(chr(hi))}"


def _bmp_where(pred: Callable[[str], bool]) -> list[int]:
    return [cp for cp in range(0x10000) if pred(chr(cp))]


def _bmp_class(kind: str, pred: Callable[[str], bool]) -> str:
    """The class body of the BMP characters ``pred`` takes (a predicate of this module), kept
    between processes like the clean table."""
    return disk_cache.kept(_clean_inputs, kind, lambda: _char_class(_bmp_where(pred)), str.encode, disk_cache.text)


_ASTRAL = "\U00010000-\U0010ffff"


# Full-width punctuation that fills Chinese text. NFKC maps each to one ASCII character that
# composes with nothing, so replacing them up front is exact and spares the run regex below
# a callback per comma.
_COMMON_FULLWIDTH = tuple((chr(cp), chr(cp - 0xFEE0)) for cp in map(ord, "，：；！？（）％＋－．／＃＠＂＇［］")) + (
    ("\u3000", " "),
)


@cache
def _nfkc_runs() -> re.Pattern[str]:
    """Runs of characters whose NFKC form may differ, plus the one character before them.

    A run holds BMP characters that NFKC changes, combining marks and conjoining Hangul jamo
    (the only characters that compose with a neighbour), and every astral character (kept as
    one cheap range: Python's ``re`` scans astral ranges linearly, and astral characters are
    rare). The preceding character is included so that a mark composes with its base.
    Normalising such runs equals normalising the whole text, but skips the long stretches
    (plain CJK or ASCII) that NFKC would copy anyway.
    """

    def changes(c: str) -> bool:
        return (
            unicodedata.normalize("NFKC", c) != c
            or unicodedata.category(c) in ("Mn", "Mc", "Me")
            or "\u1100" <= c <= "\u11ff"
        )

    cls = _bmp_class("nfkc-class", changes)
    return re.compile(f".?[{cls}{_ASTRAL}]+", re.S)


def nfkc(text: str) -> str:
    """Exactly ``unicodedata.normalize('NFKC', text)``, several times faster on Chinese text.

    Chinese text is full of full-width punctuation, which makes the stdlib quick check fail
    and renormalise the whole string (~130 µs/KB); this normalises only what can change.
    """
    if text.isascii():
        return text
    for wide, narrow in _COMMON_FULLWIDTH:
        if wide in text:
            text = text.replace(wide, narrow)
    return _nfkc_runs().sub(_nfkc_match, text)


def _nfkc_match(m: re.Match[str]) -> str:
    return unicodedata.normalize("NFKC", m.group())


_JUNK_CATEGORIES = frozenset({"Cf", "Cc", "So", "Sk", "Co", "Cs", "Cn", "Zl", "Zp"})
# Kept until the footers are gone, because "© 2024 Reuters" marks a footer.
_COPYRIGHT = "\u00a9"


def _is_junk(c: str) -> bool:
    if c in "\t\n" + _COPYRIGHT:
        return False
    return unicodedata.category(c) in _JUNK_CATEGORIES or "\ufe00" <= c <= "\ufe0f" or c == "\u20e3"


@cache
def _junk() -> re.Pattern[str]:
    """Runs of characters that are not text, plus every astral character (decided one by one
    in ``_junk_action``, since astral ranges are slow in ``re`` and astral text is rare)."""
    return re.compile(f"[{_bmp_class('junk-class', _is_junk)}{_ASTRAL}]+")


@cache
def _junk_action(ch: str) -> str:
    """What replaces one character matched by ``_junk``.

    * Format characters (zero-width space/joiner, bidi marks and isolates, BOM, soft hyphen,
      tags), variation selectors and the keycap mark are deleted: they sit inside words
      ("hel\\u200blo" is "hello").
    * Line/paragraph separators become a newline.
    * Control characters, symbols (emoji, dingbats, arrows, ™, ®), modifier symbols,
      private-use, surrogate and unassigned code points become a space: visible noise that
      varies between reposts and often separates two words. Math (Sm) and currency (Sc)
      symbols stay; the tokenizer drops them anyway.
    * Any other astral character (CJK extension B+, historic scripts, math letters) stays.
    """
    cat = unicodedata.category(ch)
    if cat == "Cf" or "\ufe00" <= ch <= "\ufe0f" or "\U000e0100" <= ch <= "\U000e01ef" or ch == "\u20e3":
        return ""
    if cat in ("Zl", "Zp"):
        return "\n"
    if cat in _JUNK_CATEGORIES:
        return " "
    return ch


def _junk_sub(m: re.Match[str]) -> str:
    return "".join(map(_junk_action, m.group()))


_DIGIT_GROUP = re.compile(r",(?<=\d,)(?=\d{3}(?!\d))")  # a literal first: the scan skips to commas
# Negations whose stem changes when written out; every other "n't" is its stem and " not".
_IRREGULAR_NEGATIONS = (("won't", "will not"), ("can't", "can not"), ("cannot", "can not"), ("shan't", "shall not"))
_ASCII_JUNK = re.compile("[\x00-\x08\x0b-\x1f\x7f^`]+")
_TYPOGRAPHIC = (
    ("\u2018", "'"),
    ("\u2019", "'"),
    ("\u201b", "'"),
    ("\u201c", '"'),
    ("\u201d", '"'),
    ("\u201e", '"'),
    ("\u201f", '"'),
    ("\u2010", "-"),
    ("\u2212", "-"),
)


# --- steps 1-3 natively -------------------------------------------------------------------


def _composition_seconds() -> frozenset[str]:
    """BMP characters that can compose with a character before them: the second half of
    every canonical pair decomposition, and the Hangul vowel and trailing jamo."""
    seconds = {chr(cp) for cp in (*range(0x1161, 0x1176), *range(0x11A8, 0x11C3))}
    for cp in range(0x10000):
        parts = unicodedata.decomposition(chr(cp)).split()
        if len(parts) == 2 and not parts[0].startswith("<"):
            seconds.add(chr(int(parts[1], 16)))
    return frozenset(seconds)


def _clean_table() -> tuple[bytes, list[tuple[int, str | None]]]:
    """What steps 1-3 make of each BMP character: (unchanged flags, [(code point, its
    replacement, or None = decline texts containing it)]).

    A character is accepted when it is junk (replaced before NFKC, by ``_junk_action``) or when
    its NFKD starts with a starter that composes with nothing before it. For a text of such
    characters no canonical reordering or composition crosses two characters (non-starters
    only ever follow a starter of the same character), so NFKC of the text is the
    concatenation of NFKC of its characters.
    """
    seconds = _composition_seconds()
    typographic = str.maketrans(dict(_TYPOGRAPHIC))
    same = bytearray(0x10000)
    changed: list[tuple[int, str | None]] = []
    for cp in range(0x10000):
        c = chr(cp)
        if _is_junk(c):
            out: str | None = _junk_action(c)
        else:
            head = unicodedata.normalize("NFKD", c)[:1]
            if not head or unicodedata.combining(head) or head in seconds:
                out = None
            else:
                out = unicodedata.normalize("NFKC", c).translate(typographic)
        if out == c:
            same[cp] = 1
        else:
            changed.append((cp, out))
    return bytes(same), changed


@cache
def _cleaner() -> Any | None:
    """The native steps 1-3, or None without ``worker._native``."""
    try:
        from worker import _native
    except ImportError:
        return None
    return _native.Cleaner(*kept_clean_table())


def kept_clean_table() -> tuple[bytes, list[tuple[int, str | None]]]:
    """``_clean_table`` from the cache, else built (and stored for the next process)."""
    return disk_cache.kept(_clean_inputs, "clean", lambda: _clean_table(), _encode_clean, _decode_clean)


# The cached table: this magic, the 65,536 unchanged flags, then JSON of the changed characters.
_CLEAN_MAGIC = b"neardup-clean\n"


def _clean_inputs() -> list[bytes]:
    """What the table is a function of: Python's Unicode database and this module."""
    return disk_cache.unicode_inputs(__file__)


def _encode_clean(table: tuple[bytes, list[tuple[int, str | None]]]) -> bytes:
    same, changed = table
    return _CLEAN_MAGIC + same + json.dumps(changed, ensure_ascii=False).encode()


def _decode_clean(raw: bytes) -> tuple[bytes, list[tuple[int, str | None]]] | None:
    start = len(_CLEAN_MAGIC) + 0x10000
    if not raw.startswith(_CLEAN_MAGIC) or len(raw) <= start:
        return None
    try:
        changed = [(int(cp), out) for cp, out in json.loads(raw[start:])]
    except (ValueError, TypeError):  # a damaged file
        return None
    return raw[len(_CLEAN_MAGIC) : start], changed


def _clean(text: str) -> str:
    """Steps 1-3 in Python: junk characters, NFKC, typographic marks."""
    text = _junk().sub(_junk_sub, text)
    text = nfkc(text)
    for fancy, plain in _TYPOGRAPHIC:
        if fancy in text:
            text = text.replace(fancy, plain)
    return text


def normalize(text: str, *, strip_links: bool = True, strip_tags: bool = True) -> str:
    """Return ``text`` reduced to what identifies the story, on one line.

    Steps, in order:

    0. UTF-8 that was read as Windows-1252 or Latin-1 ("donâ€™t") read again as UTF-8
       (:func:`worker.engine.mojibake.repair`); markup read as a browser shows it: HTML tags
       out, HTML character references decoded, Markdown links become their text
       (:func:`worker.engine.markup.strip_markup`).
    1. Line breaks unified; format characters (zero-width, bidi, BOM, soft hyphen) and
       variation selectors deleted; control characters, emoji and other symbols become
       spaces (``_junk_action``).
    2. NFKC (full-width letters, digits and punctuation become ASCII, ligatures split).
    3. Typographic apostrophes, quotes and hyphens become ASCII so "don’t" equals "don't".
    4. Traditional -> Simplified Chinese (OpenCC t2s, Taiwan's words first put as the
       mainland's: ``t2s.TW_PHRASES``), only if the text has CJK characters; then its counts,
       dates and shares in Chinese numerals put in digits ("三名" as "3名":
       :func:`worker.engine.numerals.numerals_as_digits`), figures in 万 and 亿 in full ("1.2万"
       as "12000"), weekdays written one way ("星期一" as "周一"), times of day and dates too
       ("下午3点20分" and "15时20分" as "15:20", "2025-11-30" as "2025年11月30日":
       :mod:`worker.engine.datetimes`), and scores, temperatures and shares in tenths ("2比1"
       as "2:1", "零下5度" as "-5", "3成" as "30%": :mod:`worker.engine.measures`).
    5. Leading datelines/credits stripped (``boilerplate.strip_dateline``), then a feed's labels
       around a headline ("BREAKING: …", "… (Video)", "… - Reuters", "…_新浪新闻":
       ``labels.strip_labels``); before case folding, because an English dateline, label or
       name is recognised by its capitals.
    6. Case folding.
    7. If ``strip_links``: URLs (http/https/www. and bare domains with a path) and e-mail
       addresses removed. If ``strip_tags``: repost wrappers ("RT @a:", "via @a", "转发微博//@a:",
       "分享自@a", "【转】": ``boilerplate.strip_reposts``), then @mentions, #hashtags, #话题#
       and emoji written as codes ("[哈哈]"; ":tada:" went before case folding, since such a
       code is lower case and ":Source:" is a label) removed. Then a title or header line that
       repeats the opening of the text after it ("【分享】速度很好 速度很好，…":
       ``boilerplate.strip_title``).
    8. Trailing footers stripped (``boilerplate.strip_footers``; after 7, so a hashtag or link in front of a
       footer does not hide it). Datelines and footers are anchored to the ends of the text
       so body text is never eaten. Then a number's digit groups joined ("1,000" as "1000"):
       outlets write one number both ways. And contracted negations written out ("doesn't" as
       "does not"), which outlets' styles also differ on.
    9. Whitespace collapsed to single spaces.
    """
    return _normalize(text, strip_links, strip_tags, fast=True)


def _negations_written_out(text: str) -> str:
    """Contracted negations written out ("doesn't" as "does not", "can't" and "cannot" as "can
    not"): an outlet's style contracts them or not, and in a short post the word check would
    read "doesn't" for "does not" as one word standing for another."""
    for short, full in _IRREGULAR_NEGATIONS:
        if short in text:
            text = text.replace(short, full)
    return text.replace("n't", " not")


def normalize_reference(text: str, *, strip_links: bool = True, strip_tags: bool = True) -> str:
    """``normalize`` without its shortcuts (native steps 1-3, skipping OpenCC): its definition."""
    return _normalize(text, strip_links, strip_tags, fast=False)


def _normalize(text: str, strip_links: bool, strip_tags: bool, fast: bool) -> str:
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = strip_markup(repair(text))
    if text.isascii():
        text = _ASCII_JUNK.sub(" ", text)
    else:
        cleaner = _cleaner() if fast else None
        cleaned = cleaner.clean(text) if cleaner is not None else None
        text = _clean(text) if cleaned is None else cleaned
        if _HAN.search(text):
            if not fast or t2s.may_change(text):
                text = t2s.converter()(text)
            text = weekdays_as_zhou(wan_as_digits(numerals_as_digits(text)))
            text = measures_one_way(dates_as_nian(times_as_clock(text)))
    text = strip_labels(strip_dateline(text))
    if strip_tags and ":" in text:  # before case folding: a code is lower case, ":Source:" is a label
        text = SHORTCODES.sub(" ", text)
    text = text.casefold()
    if strip_links and ("://" in text or "www." in text or "@" in text or DOMAIN_HINT.search(text)):
        text = LINKS.sub(" ", text)
    if strip_tags and may_have_repost(text):
        text = strip_reposts(text)
    if strip_tags and ("#" in text or "@" in text):
        text = TAGS.sub(" ", text)
    if strip_tags and "[" in text:
        text = EMOJI_CODES.sub(" ", text)
    text = strip_title(text)
    text = strip_footers(text)
    if "," in text:  # "1,000" as "1000": outlets' styles differ, and one number is one number
        text = _DIGIT_GROUP.sub("", text)
    if "n't" in text or "cannot" in text:  # "doesn't" as "does not": one word or two, by style
        text = _negations_written_out(text)
    if _COPYRIGHT in text:
        text = text.replace(_COPYRIGHT, " ")
    return " ".join(text.split())
