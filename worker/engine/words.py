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
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher

# The Han characters (CJK unified ideographs, extension A, compatibility ideographs).
HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
HAN_CHAR = re.compile(f"[{HAN}]")
# A token: one Han character (a syllable, often a word), or a run of other letters and digits
# (an identifier's parts apart: "mlx5e_ptp_open" is three words).
_TOKEN = re.compile(rf"[{HAN}]|[^\W_{HAN}]+")
_WORDS = re.compile(r"\w+")
_DIGITS = re.compile(r"\d+")
# Letter pairs OCR reads as one letter (and back).
_OCR_PAIRS = (("rn", "m"), ("cl", "d"), ("vv", "w"))


def canonical(folded: str) -> str:
    """The words of a normalised, folded text, one space apart: what the check compares."""
    return " ".join(_WORDS.findall(folded))


def differ(a: str, b: str) -> bool:
    """Whether the aligned tokens of two canonical texts hold a run replaced by another word.

    The tokens the two share at their start and end are aligned first and only what lies
    between goes to the matcher: most pairs verified are a copy and its original, equal or one
    holding the other, and the matcher cost a repost-heavy scan a twentieth of its time."""
    if a == b:
        return False
    old, new = _TOKEN.findall(a), _TOKEN.findall(b)
    shorter = min(len(old), len(new))
    head = 0
    while head < shorter and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < shorter - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    old, new = old[head : len(old) - tail], new[head : len(new) - tail]
    if not old or not new:
        return False
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        ends = (not tail and (i2 == len(old) or j2 == len(new)), not head and (i1 == 0 or j1 == 0))
        if tag == "replace" and replaced(old[i1:i2], new[j1:j2], *ends):
            return True
    return False


def replaced(old: list[str], new: list[str], cut: bool = False, cut_front: bool = False) -> bool:
    """Whether ``new`` in place of ``old`` is another word, not a slip beside words added or
    removed: no run of the longer side as many tokens long as the shorter is a slip of it
    (:func:`changed`). ``cut``: the run ends one of the texts, which may stop mid-word: one
    side a beginning of the other is a cut, not a change; ``cut_front``: the run begins one,
    and one side an ending of the other is a cut."""
    x, y = "".join(old), "".join(new)
    if cut and (x.startswith(y) or y.startswith(x)) or cut_front and (x.endswith(y) or y.endswith(x)):
        return False
    short, long = (old, new) if len(old) <= len(new) else (new, old)
    n = len(short)
    return all(changed(short, long[at : at + n]) for at in range(len(long) - n + 1))


def changed(old: list[str], new: list[str]) -> bool:
    """Whether tokens ``new`` in place of ``old`` are another word rather than a slip: other
    digits (a host, a version, a route), two or more Han characters on each side that are not
    the same ones reordered, or letters at an edit distance of two or more and at least half
    the longer side, after OCR's two-letter look-alikes (rn/m, cl/d, vv/w) are folded."""
    x, y = "".join(old), "".join(new)
    digits_x, digits_y = _DIGITS.findall(x), _DIGITS.findall(y)
    if digits_x and digits_y and digits_x != digits_y:
        return True
    if all(HAN_CHAR.fullmatch(t) for t in (*old, *new)):
        return len(x) >= 2 and len(y) >= 2 and sorted(x) != sorted(y)
    x, y = _ocr_folded(x), _ocr_folded(y)
    distance = edit_distance(x, y)
    return distance >= 2 and 2 * distance >= max(len(x), len(y))


def _ocr_folded(word: str) -> str:
    for pair, single in _OCR_PAIRS:
        word = word.replace(pair, single)
    return word


def edit_distance(x: str, y: str) -> int:
    """Edits (a letter changed, dropped, added, or two neighbours swapped) from ``x`` to ``y``."""
    before: list[int] = []
    row = list(range(len(y) + 1))
    for i in range(1, len(x) + 1):
        earlier, before, row = before, row, [i] + [0] * len(y)
        for j in range(1, len(y) + 1):
            cost = x[i - 1] != y[j - 1]
            row[j] = min(before[j] + 1, row[j - 1] + 1, before[j - 1] + cost)
            if i > 1 and j > 1 and x[i - 1] == y[j - 2] and x[i - 2] == y[j - 1]:
                row[j] = min(row[j], earlier[j - 2] + 1)
    return row[-1]
