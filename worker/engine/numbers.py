"""The numbers a text states, which its copies keep and a template's other reports change.

Copies of a story keep its figures: an update changes one or two, a cut or an added sentence
drops or adds some. Reports of one template ("ALERT: disk usage on web-068 reached 98%",
a daily operations report, a market close) share every word and differ in their figures, and
word features cannot tell them apart. So a fingerprint also carries its text's numbers:

* a short text, a 64-bit mask of them (``NUMBER_BITS`` a number; :func:`numbers_mask`): its
  few numbers must lie among the other's;
* a longer one, the tags of its first ``MAX_NUMBER_TAGS`` distinct numbers
  (:func:`number_tags`): two long texts are not copies when each states at least
  ``MIN_OTHER_NUMBERS`` figures the other does not, and they share fewer than half of the
  smaller list (:func:`numbers_disagree`). An updated story (one or two figures) and a
  truncation (one side's numbers within the other's) stay copies; a template's report with
  other figures does not.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, cast

import mmh3

__all__ = ["NUMBER_BITS", "MAX_NUMBER_TAGS", "MIN_OTHER_NUMBERS", "numbers_mask", "number_tags", "numbers_disagree"]

# Bits a number sets in the numbers mask, the first two as they always were, so that a mask
# stored before holds its numbers' bits within one of today's. Each number whose bits all lie
# among another mask's passes for one of its numbers: against a mask of five numbers, about one
# in 23 with two bits and one in 90 with four, and a probe of a template's reports checks dozens.
NUMBER_BITS = 4
MAX_NUMBER_TAGS = 32
MIN_OTHER_NUMBERS = 3
_SEED = 0xBA4D
_TAG_SEED = 0x4E0B
_NON_WORD = re.compile(r"[\W_]+")
# A number on its own: not after a Latin letter ("he11o" is a typo, not a number); a unit may
# follow ("6f", "10am", "3km"), but not a lone 0 or 1, which are as often OCR slips ("0f",
# "1ike"); 3.5, 1,000 and 12:30 are one number each. Of any decimal digits for the mask, of
# ASCII ones for the tags (as the native engine scans them).
_PATTERN = r"(?<![a-z0-9.,:])(?:D{2,}(?:[.,:]D+)*|D(?:[.,:]D+)+|[2-9]|[01](?![a-z]))"
_NUMBER = re.compile(_PATTERN.replace("D", r"\d"))
_ASCII_NUMBER = re.compile(_PATTERN.replace("D", "[0-9]"))


def _whole(normalised: str, found: list[re.Match[str]]) -> list[re.Match[str]]:
    """The numbers ``found`` in the text that are whole: a number that ends the text, only
    punctuation after it, may be a cut one ("July 9, 17…" of "July 9, 1776, and …")."""
    if found and not _NON_WORD.sub("", normalised[found[-1].end() :]):
        return found[:-1]
    return found


def _numbers(normalised: str) -> tuple[list[str], list[str]]:
    """Every number of the text, and those of them that are whole (:func:`_whole`)."""
    found = list(_NUMBER.finditer(normalised))
    return [m.group() for m in found], [m.group() for m in _whole(normalised, found)]


def numbers_mask(normalised: str, engine: Any | None = None) -> int:
    """Bits of the numbers standing on their own in the text (0 without numbers):
    ``NUMBER_BITS`` for each whole number, one for the first digit of each. Computed by the
    native ``engine`` when given, as :func:`_numbers_mask_reference` defines it."""
    if engine is not None:
        mask = engine.numbers_mask(normalised, _SEED, NUMBER_BITS)
        if mask is not None:
            return cast(int, mask)
    return _numbers_mask_reference(normalised)


def _numbers_mask_reference(normalised: str) -> int:
    """:func:`numbers_mask` in Python."""
    numbers, whole = _numbers(normalised)
    mask = 0
    for number in whole:
        h = mmh3.hash64(number, _SEED, signed=False)[0]
        for i in range(NUMBER_BITS):
            mask |= 1 << ((h >> (6 * i)) & 63)
    for number in numbers:
        mask |= 1 << (mmh3.hash64("^" + number[0], _SEED, signed=False)[0] & 63)
    return mask


def number_tags(normalised: str, engine: Any | None = None) -> bytes:
    """16-bit tags of the text's first ``MAX_NUMBER_TAGS`` distinct whole numbers, two bytes
    each; empty when there are fewer than ``MIN_OTHER_NUMBERS``, too few to disagree on.
    Computed by the native ``engine`` when given (a regular expression over a whole story is
    dear in Python), as :func:`_number_tags_reference` defines them."""
    if engine is not None:
        tags = engine.number_tags(normalised, _TAG_SEED, MAX_NUMBER_TAGS, MIN_OTHER_NUMBERS)
        if tags is not None:
            return cast(bytes, tags)
    return _number_tags_reference(normalised)


def _number_tags_reference(normalised: str) -> bytes:
    """:func:`number_tags` in Python: the whole numbers (:func:`_whole`) in ASCII digits (the
    normalised form's)."""
    found = _whole(normalised, list(_ASCII_NUMBER.finditer(normalised)))
    tags = dict.fromkeys(mmh3.hash64(m.group(), _TAG_SEED, signed=False)[0] & 0xFFFF for m in found)
    if len(tags) < MIN_OTHER_NUMBERS:
        return b""
    return b"".join(tag.to_bytes(2, "big") for tag in list(tags)[:MAX_NUMBER_TAGS])


def numbers_disagree(a: bytes, b: bytes) -> bool:
    """Whether two texts' number tags (:func:`number_tags`) tell them apart: each has at least
    ``MIN_OTHER_NUMBERS`` the other lacks, and they share fewer than half of the shorter list."""
    if len(a) < 2 * MIN_OTHER_NUMBERS or len(b) < 2 * MIN_OTHER_NUMBERS:
        return False
    set_a, set_b = _tag_set(a), _tag_set(b)
    shared = len(set_a & set_b)
    fewer = min(len(set_a), len(set_b))
    return fewer - shared >= MIN_OTHER_NUMBERS and 2 * shared < fewer


@lru_cache(maxsize=1 << 14)
def _tag_set(tags: bytes) -> frozenset[bytes]:
    """The tags as a set, kept: a probe checks the same list against every candidate, and a
    template's reports are each other's candidates probe after probe."""
    return frozenset(tags[i : i + 2] for i in range(0, len(tags), 2))
