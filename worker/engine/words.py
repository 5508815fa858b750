"""Short posts that differ in a word are two messages, not a copy and its original.

"Database db1 is down" and "… db2 is down", "What is your favorite book?" and "… hobby?",
"框架的启动偏移量" and "…结束偏移量": one word apart, their character 3-grams agree but for
the few around it, as a copy's with a slip or two do, and the sets alone cannot tell which.
The words can: a slip leaves a word close to itself (one or two letters changed, dropped,
doubled or swapped; a Chinese character misread or mistyped, which the sound and shape folds
mostly undo), another word is far from it. So a listed short text keeps its words
(:func:`canonical`, in its sketch: :mod:`worker.engine.shorttext`), and
:func:`worker.engine.match.accepts` refuses two that :func:`differ`: their aligned words hold
a run of one replaced by another word in the other. Words added or removed (a header, a
wrapper, a cut, an appended sentence) are not a change: only a run replaced on both sides is.
A negation put in or left out between words the two share (:func:`negated`) is one, in any
listed text: "will not raise rates" says the opposite of "will raise rates", and "did not
raise rates" of "raised rates".

The other way round, a post of a dozen characters with one slip shares too few of its 3-grams
with its original for any threshold that keeps unrelated posts apart: :mod:`worker.engine.slips`
reads two short texts' words as one another with a slip or two, on this module's edit table.
"""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Iterator
from difflib import SequenceMatcher

# The Han characters (CJK unified ideographs, extension A, compatibility ideographs).
HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
HAN_CHAR = re.compile(f"[{HAN}]")
# Hiragana are syllables too: a Japanese post's inflections and particles ("した" to "しました")
# add or drop a few of them beside Han characters, which a run of them as one word read as
# another word in its place. Katakana stay words: a loanword ("テーブル", "ビュー") is one.
_HIRAGANA = "\u3040-\u309f"
_SYLLABLE = re.compile(f"[{HAN}{_HIRAGANA}]")
# A token: one Han character or hiragana (a syllable, often a word), or a run of other letters
# and digits (an identifier's parts apart: "mlx5e_ptp_open" is three words). A figure is apart
# from a unit written against it as British and financial outlets write them ("£1.2bn", "$5m",
# "3mn", "10pc"), so that the unit is a word of its own, as in "1.2 billion".
_UNIT_AGAINST = r"\d+(?=(?:bn|mn|m|tn|trn|pc)(?![^\W_]))"
_TOKEN = re.compile(rf"[{HAN}{_HIRAGANA}]|{_UNIT_AGAINST}|[^\W_{HAN}{_HIRAGANA}]+")
_WORDS = re.compile(r"\w+")
_ORDINAL = re.compile(r"(\d+)(?:st|nd|rd|th)")
_DIGITS = re.compile(r"\d+")
# Letter pairs OCR reads as one letter (and back).
_OCR_PAIRS = (("rn", "m"), ("cl", "d"), ("vv", "w"))
FAR = 1 << 16  # an edit the slips of :mod:`worker.engine.slips` do not allow; a cell outside the band
SPLIT_MOST = 3  # the most words of a post that :func:`split_apart` reads apart in another
# One word in two outlets' styles: numbers AP spells out ("Five killed in …") where another
# writes "5 killed", and months AP shortens before a date ("Nov. 30") where another writes
# "November 30"; the units a wire's briefs shorten ("$5 mln", "3 pct") and British outlets
# write against the figure ("£1.2bn", "$5m", "10pc"); "govt" and "pts" of headlines; "vs" and
# Britain's "v" for "versus"; the titles AP shortens before a name ("Gov. Gavin Newsom", "Lt.
# Gov."); and ordinals in figures ("2nd round"; and "30th" is "30": :func:`_forms`). "One" is
# not among them: "no one" and "one of them" are rarely a count; nor "st", which is a saint
# and a street.
_ORDINALS = "first second third fourth fifth sixth seventh eighth ninth tenth".split()
_MONTHS = "january february march april may june july august september october november december".split()
SAME_WORD = (
    dict(zip("two three four five six seven eight nine ten".split(), map(str, range(2, 11)), strict=True))
    | {month[:3]: month for month in _MONTHS}
    | {"sept": "september"}
    | {"pct": "percent", "mln": "million", "bln": "billion", "trln": "trillion", "vs": "versus", "v": "versus"}
    | {"pc": "percent", "m": "million", "mn": "million", "bn": "billion", "tn": "trillion", "trn": "trillion"}
    | {"govt": "government", "pts": "points", "usa": "us"}
    | dict(zip("1st 2nd 3rd 4th 5th 6th 7th 8th 9th 10th".split(), _ORDINALS, strict=True))
    | {
        "gov": "governor",
        "sen": "senator",
        "rep": "representative",
        "gen": "general",
        "lt": "lieutenant",
        "dr": "doctor",
        "prof": "professor",
        "mt": "mount",
        "sgt": "sergeant",
        "capt": "captain",
        "col": "colonel",
        "adm": "admiral",
        "supt": "superintendent",
        "atty": "attorney",
    }
)
# Names and periods one outlet writes in full where another abbreviates them ("the United
# States" and "the U.S.", "third-quarter profit" and "Q3 profit"): where one text has the one
# and the other the other, the check reads them as one word (:func:`_named_alike`). Periods
# between single letters leave them apart ("u", "s"), so those are read together too. Only
# names a wire abbreviates as a rule; not "WHO", since "who" is mostly the common word.
_QUARTERS = {(ordinal, "quarter"): f"q{i}" for i, ordinal in enumerate(_ORDINALS[:4], start=1)}
PHRASES: dict[tuple[str, ...], str] = (
    {("united", "states"): "us", ("united", "kingdom"): "uk", ("united", "nations"): "un"}
    | {("european", "union"): "eu", ("new", "york", "city"): "nyc", ("los", "angeles"): "la"}
    | {("u", "s"): "us", ("u", "k"): "uk", ("u", "n"): "un", ("e", "u"): "eu", ("n", "y", "c"): "nyc"}
    | {("u", "s", "a"): "us", ("united", "states", "of", "america"): "us"}
    | _QUARTERS
    | {("first", "half"): "h1", ("second", "half"): "h2"}
)
# An abbreviation is a name: one in place of another ("us" and "uk") is never a slip.
ABBREVIATIONS = frozenset(PHRASES.values())
_LONGEST_PHRASE = max(map(len, PHRASES))
_PHRASE_HEADS = frozenset(phrase[0] for phrase in PHRASES)
# Words that say the opposite when put in or left out inside a post: "will not raise rates"
# and "will raise rates" are two messages (the normaliser writes "won't" and "can't" out).
# "non" is the one prefix written apart ("non-binding", "non-fatal"): its word is a negation too.
NEGATIONS = frozenset({"not", "no", "never", "non"})
# Words that may stand before a negated verb: "did not raise" says the opposite of "raised".
AUXILIARIES = frozenset(
    "do does did will would can could shall should may might must is are was were has have had".split()
)


def canonical(folded: str) -> str:
    """The words of a normalised, folded text, one space apart: what the check compares."""
    return " ".join(_WORDS.findall(folded))


def differ(a: str, b: str) -> bool:
    """Whether the aligned tokens of two canonical texts hold a run replaced by another word."""
    if a == b:
        return False
    old, new, head, tail = _aligned(a, b)
    if not old or not new:
        return False
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        ends = (not tail and (i2 == len(old) or j2 == len(new)), not head and (i1 == 0 or j1 == 0))
        if tag == "replace" and replaced(old[i1:i2], new[j1:j2], *ends):
            return True
    return False


def split_apart(a: str, b: str) -> bool:
    """Whether the other text holds every word of a text of two or three words, but not as one
    run in order: apart ("invalid packet" in "invalid password packet size", "v850
    architecture" in "v850 E3 architecture") or in another order ("Invalid file name" and "File
    name transformations: invalid width"). A header, a wrapper, a cut or an appended sentence
    leaves a post's words together; a word put between two or three is a third of the post,
    and makes another message of it more often than it edits one."""
    if min(a.count(" "), b.count(" ")) >= SPLIT_MOST:  # both of four words or more: most pairs
        return False
    x, y = _TOKEN.findall(a), _TOKEN.findall(b)
    short, long = (x, y) if len(x) <= len(y) else (y, x)
    if not 2 <= len(short) <= SPLIT_MOST or len(short) == len(long):
        return False
    # A slip leaves a word itself: "invaalid password packet" holds "invalid packet" apart too.
    long = [next((word for word in short if word == token or _slipped_word(word, token)), token) for token in long]
    if not set(short) <= set(long):
        return False
    blocks = SequenceMatcher(None, long, short, autojunk=False).get_matching_blocks()[:-1]
    return not (len(blocks) == 1 and blocks[0].size == len(short))


def _slipped_word(x: str, y: str) -> bool:
    """Whether two words of four letters and more are one edit apart."""
    return min(len(x), len(y)) >= 4 and abs(len(x) - len(y)) <= 1 and edit_distance(x, y) <= 1


def swapped_far(a: str, b: str) -> bool:
    """Whether two canonical texts too long for :func:`differ` hold, in place of one another,
    two words no slip makes one of the other: Latin words of four letters and more, one of them
    in one text only, at an edit distance of at least three and of more than half the longer,
    between the same neighbours in both (two on one side, one on the other: "tuesday to close
    the", "tuesday to keep the"). Their other words may carry slips as a copy's do ("he" misread
    "bc", "the" typed "yeh"); one neighbour a side is too little ("the borders of" and a slipped
    "the pprovince of"). Read by neighbours, not by an alignment: it runs on every verified pair
    of such texts, and aligning them cost a repost-heavy feed dearly."""
    if a == b:
        return False
    old, new = a.split(), b.split()  # the words (a Han run is one, and no Latin word)
    places = _places(new)
    if not places:
        return False
    in_old, in_new = set(old), set(new)
    for context, words_old in _places(old).items():
        # A word both texts hold in this context is no swap: "and Pennsylvania to the" stands
        # in a story and in its cut, whose "and Vermont to the" was cut off.
        others = places.get(context, set()) - words_old
        for word in words_old - places.get(context, set()):
            # Two words both texts hold elsewhere too ("Pennsylvania and ... Vermont") are no swap.
            if any((word not in in_new or y not in in_old) and _far_apart(word, y) for y in others):
                return True
    return False


def _places(words: list[str]) -> dict[tuple[str, ...], set[str]]:
    """The words of four letters and more of a text under each of their contexts."""
    places: dict[tuple[str, ...], set[str]] = {}
    for context, word in _contexts(words):
        places.setdefault(context, set()).add(word)
    return places


def _contexts(words: list[str]) -> Iterator[tuple[tuple[str, ...], str]]:
    """Each word of four letters and more, under both its contexts: two words before it and
    one after ("<" marks the side of two), one before and two after."""
    for i in range(1, len(words) - 1):
        if len(words[i]) >= 4:
            if i >= 2:
                yield ("<", words[i - 2], words[i - 1], words[i + 1]), words[i]
            if i + 2 < len(words):
                yield (">", words[i - 1], words[i + 1], words[i + 2]), words[i]


def _far_apart(x: str, y: str) -> bool:
    if x == y or not (x.isalpha() and y.isalpha() and x.isascii() and y.isascii()) or min(len(x), len(y)) < 4:
        return False
    longer = max(len(x), len(y))
    same = len(os.path.commonprefix([x, y]))
    same += len(os.path.commonprefix([x[same:][::-1], y[same:][::-1]]))
    if longer - same < 3 or 2 * (longer - same) <= longer:  # the edits are within what is left
        return False
    if _forms(x) & _forms(y):
        return False
    distance = edit_distance(ocr_folded(x), ocr_folded(y))
    return distance >= 3 and 2 * distance > longer


def negated(a: str, b: str) -> bool:
    """Whether one of two canonical texts holds a negation ("not", "no", "never", "non"), and
    nothing else, between words that the other holds side by side: "will not raise" and "will
    raise". A header, a wrapper or a sentence added holds other words too, and a cut ends the
    post."""
    if a == b or _negations(a) == _negations(b):  # most pairs: no negation, or as many in each
        return False
    old, new, head, tail = _aligned(a, b)
    if not old or not new:
        return bool(head and tail) and _only_negation(old or new)
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        inside = (head or i1 and j1) and (tail or i2 < len(old) and j2 < len(new))
        if tag in ("insert", "delete") and inside and _only_negation(old[i1:i2] or new[j1:j2]):
            return True
        if tag == "replace" and inside and _negated_verb(old[i1:i2], new[j1:j2]):
            return True
    return False


def _negated_verb(x: list[str], y: list[str]) -> bool:
    """Whether one run is a verb negated, with at most one auxiliary before it, and the other
    that verb alone in another tense or with a slip: "did not raise", "will never raise", "has
    not raised" against "raised"; "non transitional" against "transitinoal"."""
    run, verb = (x, y) if len(y) == 1 else (y, x)
    if len(verb) != 1 or not 2 <= len(run) <= 3 or run[-2] not in NEGATIONS:
        return False
    if len(run) == 3 and run[0] not in AUXILIARIES:
        return False
    a, b = run[-1], verb[0]
    return a == b or b in _tensed(a) or a in _tensed(b) or edit_distance(a, b) <= 1


def _tensed(verb: str) -> set[str]:
    """A verb's regular other tenses: "raise" -> "raised", "raises"; "defend" -> "defended"."""
    forms = {verb + "s", verb + "es", verb + "d", verb + "ed"}
    if verb.endswith("y"):
        forms |= {verb[:-1] + "ied", verb[:-1] + "ies"}
    return forms


def _negations(text: str) -> int:
    return sum(word in NEGATIONS for word in text.split())


def _only_negation(run: list[str]) -> bool:
    """A negation and nothing else, or after an auxiliary ("have not" charged against charged)."""
    if len(run) == 2 and run[0] in AUXILIARIES and run[1] in NEGATIONS:
        return True
    return 0 < len(run) <= 2 and all(word in NEGATIONS for word in run)


def _aligned(a: str, b: str) -> tuple[list[str], list[str], int, int]:
    """The tokens of two canonical texts between the ones they share at their start and end,
    and how many they share there. Most pairs verified are a copy and its original, equal or
    one holding the other, and the matcher on whole texts cost a repost-heavy scan a
    twentieth of its time."""
    old, new = _TOKEN.findall(a), _TOKEN.findall(b)
    shorter = min(len(old), len(new))
    head = 0
    while head < shorter and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < shorter - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    return old[head : len(old) - tail], new[head : len(new) - tail], head, tail


def _abbreviated(tokens: list[str]) -> list[str]:
    """``tokens`` with each name or period of :data:`PHRASES` as its abbreviation, the longest
    first; ordinals in figures read as words ("3rd quarter" is "q3")."""
    if _PHRASE_HEADS.isdisjoint(map(_head_form, tokens)):
        return tokens  # most texts: nothing to fold, and no new list
    out: list[str] = []
    at = 0
    while at < len(tokens):
        for size in range(min(_LONGEST_PHRASE, len(tokens) - at), 1, -1):
            short = PHRASES.get(tuple(map(_head_form, tokens[at : at + size])))
            if short is not None:
                out.append(short)
                at += size
                break
        else:
            out.append(tokens[at])
            at += 1
    return out


def _named_alike(old: list[str], new: list[str]) -> bool:
    """Whether two runs of tokens are one name or period, one of them abbreviated ("united
    states" and "u s"). Read only in a run the alignment left apart, so that a slip in a
    name ("New Y0rk City") stays a slip of its word."""
    short_old, short_new = _abbreviated(old), _abbreviated(new)
    if len(short_old) != len(short_new) or (short_old, short_new) == (old, new):
        return False
    return all(_forms(a) & _forms(b) for a, b in zip(short_old, short_new, strict=True))


def _head_form(token: str) -> str:
    return SAME_WORD.get(token, token) if token[:1].isdigit() else token


def replaced(old: list[str], new: list[str], cut: bool = False, cut_front: bool = False) -> bool:
    """Whether ``new`` in place of ``old`` is another word, not a slip beside words added or
    removed: other figures (the digits of each side, spaces dropped, differ), or, unless the
    two read whole are one slip apart (a space put for a letter, or dropped), no run of the
    longer side as many tokens long as the shorter is a slip of it (:func:`changed`).
    ``cut``: the run ends one of the texts, which may stop mid-word: one side a beginning of
    the other is a cut, not a change; ``cut_front``: the run begins one, and one side an
    ending of the other is a cut."""
    if _named_alike(old, new):
        return False
    x, y = "".join(old), "".join(new)
    if cut and (x.startswith(y) or y.startswith(x)) or cut_front and (x.endswith(y) or y.endswith(x)):
        return False
    digits_x, digits_y = "".join(_DIGITS.findall(x)), "".join(_DIGITS.findall(y))
    if digits_x and digits_y and digits_x != digits_y:
        return True  # other figures, however the words around them are spaced ("db1", "db 2")
    if len(old) != len(new) and not changed([x], [y]):
        return False  # a word split in two by the slip, or two run together: a space changed, added or dropped
    if len(old) > 1 and edit_distance(x, y) <= 1:
        return False  # a space moved and a slip beside it: "this key" typed "thi seky"
    short, long = (old, new) if len(old) <= len(new) else (new, old)
    n = len(short)
    return all(changed(short, long[at : at + n]) for at in range(len(long) - n + 1))


def changed(old: list[str], new: list[str]) -> bool:
    """Whether tokens ``new`` in place of ``old`` are another word rather than a slip: other
    digits (a host, a version, a route), in runs of words as many on each side one word that
    is another, two or more Han characters or hiragana on each side that are not the same ones
    reordered, or letters at an edit distance of two or more and at least half the longer side,
    after OCR's two-letter look-alikes (rn/m, cl/d, vv/w) are folded. Words in another
    outlet's style (:data:`SAME_WORD`: "five" and "5", "nov" and "november", "lt gov" and
    "lieutenant governor") are the same words; two abbreviations (:data:`ABBREVIATIONS`:
    "us" and "uk") are two names, however few letters apart."""
    if len(old) == len(new):
        pairs = [(_forms(a), _forms(b)) for a, b in zip(old, new, strict=True)]
        if all(a & b for a, b in pairs):
            return False
        if any(not a & b and (a | b) <= ABBREVIATIONS for a, b in pairs):
            return True  # "us" and "uk": two names a letter apart
    x, y = "".join(old), "".join(new)
    digits_x, digits_y = _DIGITS.findall(x), _DIGITS.findall(y)
    if digits_x and digits_y and digits_x != digits_y:
        return True
    syllables = [_SYLLABLE.fullmatch(t) is not None for t in (*old, *new)]
    if len(old) == len(new) > 1 and not any(syllables):
        # Word for word too: joined, "atlantic determine" and "at1antic free" are few edits apart.
        if any(changed([a], [b]) for a, b in zip(old, new, strict=True)):
            return True
    if all(syllables):
        return len(x) >= 2 and len(y) >= 2 and sorted(x) != sorted(y)
    x, y = ocr_folded(x), ocr_folded(y)
    distance = edit_distance(x, y)
    return distance >= 2 and 2 * distance >= max(len(x), len(y))


def _forms(token: str) -> set[str]:
    """The ways outlets write ``token``'s word: itself in :data:`SAME_WORD`'s spelling, and a
    figure with an ordinal's letters without them ("30th" of "Nov. 30th" is the "30" of
    "November 30"; "1st" is also "first", which "1" is not)."""
    forms = {SAME_WORD.get(token, token)}
    ordinal = _ORDINAL.fullmatch(token)
    if ordinal is not None:
        forms.add(ordinal.group(1))
    return forms


def ocr_folded(word: str) -> str:
    """``word`` with the letter pairs OCR reads as one letter (rn, cl, vv) as that letter."""
    for pair, single in _OCR_PAIRS:
        word = word.replace(pair, single)
    return word


def edit_distance(x: str, y: str) -> int:
    """Edits (a letter changed, dropped, added, or two neighbours swapped) from ``x`` to ``y``."""
    return edit_table(x, y, [1] * (len(x) + len(y)), max(len(x), len(y)))


def edit_table(x: str, y: str, cost: list[int], band: int) -> int:
    """The edit table from ``x`` to ``y`` within ``band`` of its diagonal: ``cost`` holds what
    dropping each character of ``x``, then adding each of ``y``, costs (a change costs the
    dearer of the two); two neighbours swapped cost one."""
    free_x, free_y = cost[: len(x)], cost[len(x) :]
    before: list[int] = []
    row = [0, *itertools.accumulate(free_y)]
    for i in range(1, len(x) + 1):
        earlier, before, row = before, row, [row[0] + free_x[i - 1]] + [FAR] * len(y)
        for j in range(max(1, i - band), min(len(y), i + band) + 1):
            if x[i - 1] == y[j - 1]:
                best = before[j - 1]
            else:
                best = min(before[j] + free_x[i - 1], row[j - 1] + free_y[j - 1])
                best = min(best, before[j - 1] + max(free_x[i - 1], free_y[j - 1]))
                if i > 1 and j > 1 and x[i - 1] == y[j - 2] and x[i - 2] == y[j - 1]:
                    best = min(best, earlier[j - 2] + 1)
            row[j] = best
    return row[-1]
