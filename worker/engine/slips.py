"""A short post read as another with a slip or two: the slips counted, word by word.

A post of a dozen characters with one slip shares too few of its 3-grams with its original for
any threshold that keeps unrelated posts apart (a letter changed in "update gbp.conf" leaves 8
of 11; two Han characters swapped in a 15-character headline, 9 of 13). Their words tell it
exactly: :func:`slipped` reads two short texts (their canonical words,
:func:`worker.engine.words.canonical`) as one another with a slip every ``SLIP_CHARS``
characters, :func:`slipped_within` one as a run of the other. :func:`worker.engine.match.judge`
asks them when the sets alone refuse a pair of listed short texts.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from difflib import SequenceMatcher

from worker.engine.words import FAR, HAN_CHAR, edit_table, ocr_folded

# Digits OCR reads for a letter, where they touch a letter (:func:`_digits_read`).
_DIGIT_LETTERS = {"0": "o", "1": "l", "5": "s"}
_DIGIT_IN_WORD = re.compile(r"(?<=[a-z])[015]|[015](?=[a-z])")
_NEAR_DIGIT = re.compile(r"(?<=\d)[a-z]|[a-z](?=\d)")
# A slip allowed every this many letters and digits (at least one), in texts of at least
# MIN_SLIP_CHARS: shorter ones must be equal.
SLIP_CHARS = 10
MIN_SLIP_CHARS = 8
# Least letters and digits (a Han character counting two) of a text read as a run of a longer
# one with slips: a line of three Latin words plus any words after it is too little to tell.
MIN_WITHIN_CHARS = 24


def slipped(a: str, b: str) -> float | None:
    """1 - edits / length when canonical texts ``a`` and ``b`` are one another with at most one
    slip every ``SLIP_CHARS`` letters and digits, else None.

    A slip: two neighbours swapped, anything; a Latin letter changed, dropped or added. Not a
    Han character or a digit changed, dropped or added: the sound and shape folds already undo
    a Chinese slip of the keyboard or of OCR, and what is left is as often a word ("很好",
    "很差"; "不"), as a changed digit is another figure; nor a letter next to a digit, of a
    name or a model ("A1" and "B1", "db1" and "dc1"). Each of :func:`_readings` is tried."""
    for x, y in _readings(a, b):
        length = max(len(x), len(y))
        if min(len(x), len(y)) < MIN_SLIP_CHARS:
            return None
        budget = max(1, length // SLIP_CHARS)
        edits = _slips(x, y, budget)
        if edits <= budget:
            return 1.0 - edits / length
    return None


def slipped_within(a: str, b: str) -> float | None:
    """1 - edits / length when the shorter of canonical texts ``a`` and ``b`` is a run of the
    longer one with at most one slip every ``SLIP_CHARS`` letters and digits (as
    :func:`slipped` counts them), else None: a short post under a header, or with a sentence
    after it, that also has a slip or two. Where the run lies in the longer text is read off
    their matching blocks; the edits are counted in that window, near its diagonal."""
    for x, y in _readings(a, b):
        if len(x) > len(y):
            x, y = y, x
        if len(x) + len(HAN_CHAR.findall(x)) < MIN_WITHIN_CHARS:
            return None
        blocks = [m for m in SequenceMatcher(None, x, y, autojunk=False).get_matching_blocks() if m.size]
        if not blocks:
            continue
        start = max(0, blocks[0].b - blocks[0].a)
        end = min(len(y), blocks[-1].b + len(x) - blocks[-1].a)
        budget = max(1, len(x) // SLIP_CHARS)
        edits = _slips(x, y[start:end], budget)
        if edits <= budget:
            return 1.0 - edits / len(x)
    return None


def _readings(a: str, b: str) -> Iterator[tuple[str, str]]:
    """Two canonical texts as :func:`slipped` counts them: as written, then (where it differs)
    with either one's OCR look-alikes read as the letters they stand for. OCR misreads a letter
    of a word as a digit ("1ost", "0ffset", "5ecret") as often as one letter as two ("rnail");
    counted as written, one such misreading refused a short English post its copy, since a
    changed digit is another figure. A digit that touches a letter is read as one; a figure of
    digits alone stays a figure. The written reading too, since a keyboard slip can make a
    look-alike ("closed" typed "lcosed"), which read as OCR's is further from its word. The
    letter pairs are folded on both sides, the digits read on one side at a time: read on
    both, two names "b1" and "a1" would be "bl" and "al", a slip apart."""
    written = (_marked(a), _marked(b))
    yield written  # most pairs end here: the OCR readings are made only when asked for
    folded_a, folded_b = ocr_folded(a), ocr_folded(b)
    read_a, read_b = ocr_folded(_digits_read(a)), ocr_folded(_digits_read(b))
    # A text with no digit beside a letter reads as its fold: each distinct pair is counted once.
    read = dict.fromkeys(((_marked(read_a), _marked(folded_b)), (_marked(folded_a), _marked(read_b))))
    yield from (pair for pair in read if pair != written)


def _digits_read(text: str) -> str:
    return _DIGIT_IN_WORD.sub(lambda m: _DIGIT_LETTERS[m.group()], text)


def _marked(text: str) -> str:
    """``text`` with spaces out and a letter next to a digit upper-cased, which :func:`_slips`
    counts as a digit: "a1" and "b1" are two names, a size or a model, not a slip apart. Marked
    after the spaces are out, so that "iphone 15" and "iphone15" stay one text."""
    return _NEAR_DIGIT.sub(lambda m: m.group().upper(), text.replace(" ", ""))


def _slips(x: str, y: str, budget: int) -> int:
    """Slips (as :func:`slipped` counts them) from ``x`` to ``y``, or more than ``budget`` when
    there are more: the edit table near its diagonal, after the common ends are cut."""
    head = 0
    while head < min(len(x), len(y)) and x[head] == y[head]:
        head += 1
    x, y = x[head:], y[head:]
    while x and y and x[-1] == y[-1]:
        x, y = x[:-1], y[:-1]
    if abs(len(x) - len(y)) > budget:
        return budget + 1
    return edit_table(x, y, [FAR if c.isdigit() or c.isupper() or HAN_CHAR.match(c) else 1 for c in x + y], budget)
