"""A text's opening, twelve characters a byte: what tells a teaser of a story exactly.

A teaser, a link preview or a cut of a long story is a short text, and the story a long one:
their word sketches compare a set of a few dozen features with one of hundreds, whose
resemblance is a few hundredths, and the containment estimated from so small a resemblance
spreads from a third to one for a teaser that the story holds whole. So every text also
carries its opening's *lead windows*: its letters and digits (the normalised text without
spaces and punctuation) cut into ``WINDOW_CHARS``-character windows from the start, one byte
of a hash each, at most ``MAX_WINDOWS`` of them. A short text keeps the windows that end at
least ``SLACK_CHARS`` before its end (an ellipsis's "全文" or a word cut in half may follow
the cut); a long one keeps its first ``MAX_WINDOWS``, as many as a short text can have.

:func:`worker.engine.sketch.compare` finds a short text whose windows (``MIN_WINDOWS`` and
more) all equal a long text's first ones contained in it whole: the long text begins with it.
A stranger that opens as a story does and goes on with other words departs within its own
windows, and a pair whose windows do not line up (a header on top, slips) is judged on its
sketches as before. Of two short texts, the character sketches compare them closely while their
3-grams are listed; past that (a post of a hundred and more characters) the windows tell a cut
of one as they tell a teaser (:func:`worker.engine.sketch.compare`). They say nothing of two
long texts.
"""

from __future__ import annotations

import re
from typing import Any, cast

import mmh3

__all__ = [
    "WINDOW_CHARS",
    "MAX_WINDOWS",
    "SLACK_CHARS",
    "MIN_WINDOWS",
    "LONG_LEADS",
    "lead_windows",
    "long_leads",
    "opens",
    "OPENING_CHARS",
    "opening_key",
    "letters",
]

WINDOW_CHARS = 12
# A short text (at most ``Settings.short_chars`` characters, 300 by default) has at most this
# many windows.
MAX_WINDOWS = 24
SLACK_CHARS = 4
# Two windows are 24 characters the two texts begin with, of a short text of 28 to 39: a
# chance agreement of their bytes is one in 65,536 and a text that short holds little else.
MIN_WINDOWS = 2
# A long text's windows as its sketch keeps them: MAX_WINDOWS bytes, then their number (fewer
# when its letters run out first, the rest zeros). An odd length, which tells a long text's
# sketch with windows from one stored before them (its number tags come in pairs of bytes).
LONG_LEADS = MAX_WINDOWS + 1
_SEED = 0x1EAD_0012
# A long text's opening key spans its first MIN_WINDOWS windows: the least a short text must
# begin with to be found contained whole (:func:`opens`).
OPENING_CHARS = MIN_WINDOWS * WINDOW_CHARS
_OPENING_SEED = 0x0BE7_1EAD
_NON_WORD = re.compile(r"[\W_]+")
_DIGIT = re.compile(r"\d")


def lead_windows(normalised: str, short: bool, native: Any | None = None) -> bytes:
    """The lead windows' bytes of a normalised text: a short text's, which end ``SLACK_CHARS``
    before its end (none when fewer than ``MIN_WINDOWS`` or more than ``MAX_WINDOWS``, or when
    a digit follows the last), or a long text's first ones. Computed by the ``native`` engine
    when given, as :func:`_lead_windows_reference` defines them."""
    if native is not None:
        done = native.lead_windows(normalised, short, WINDOW_CHARS, MAX_WINDOWS, SLACK_CHARS, MIN_WINDOWS, _SEED)
        if done is not None:
            return cast(bytes, done)
    return _lead_windows_reference(normalised, short)


def _lead_windows_reference(normalised: str, short: bool) -> bytes:
    """:func:`lead_windows` in Python: the letters and digits of the text (or, of a long one,
    its first ``MAX_WINDOWS`` windows' worth), a byte of ``mmh3.hash64`` of each window."""
    basis = _NON_WORD.sub("", normalised) if short else _first_letters(normalised, WINDOW_CHARS * MAX_WINDOWS)
    count = (len(basis) - SLACK_CHARS if short else len(basis)) // WINDOW_CHARS
    if short and (not MIN_WINDOWS <= count <= MAX_WINDOWS or _DIGIT.search(basis, count * WINDOW_CHARS)):
        # Too few to tell; more than a long text keeps (short_chars over 300); a figure after them.
        return b""
    count = min(count, MAX_WINDOWS)
    return bytes(
        mmh3.hash64(basis[at : at + WINDOW_CHARS], _SEED, signed=False)[0] & 0xFF
        for at in range(0, count * WINDOW_CHARS, WINDOW_CHARS)
    )


def long_leads(normalised: str, native: Any | None = None) -> bytes:
    """A long text's windows as its sketch keeps them (``LONG_LEADS`` bytes)."""
    windows = lead_windows(normalised, short=False, native=native)
    return windows.ljust(MAX_WINDOWS, b"\0") + bytes((len(windows),))


# ASCII characters that are not letters or digits, deleted by bytes.translate: the regular
# expression took 2 µs over 64 characters, a fifth of what a short English text's keys cost.
_ASCII_NON_WORD = bytes(c for c in range(128) if not chr(c).isalnum())


def letters(text: str) -> str:
    """The letters and digits of ``text``, as ``_NON_WORD`` leaves them."""
    if text.isascii():
        return text.encode("ascii").translate(None, _ASCII_NON_WORD).decode("ascii")
    return _NON_WORD.sub("", text)


def _first_letters(text: str, count: int) -> str:
    """The first ``count`` letters and digits of ``text`` (fewer when it has fewer), taken from
    its start twice as many characters at a time: a story may run to half a megabyte."""
    basis, at = "", 0
    while len(basis) < count and at < len(text):
        basis += letters(text[at : at + 2 * count])
        at += 2 * count
    return basis[:count]


def opening_key(normalised: str) -> int | None:
    """The key of a text's first ``OPENING_CHARS`` letters and digits (None when it has fewer).

    Why: a teaser of a story cut before the story's twelfth word shares no key with it. It
    is a short text, kept out of the tables, and its edges and bands are those of the story's
    first hundred characters, which a long story does not store. So a long text stores this
    key (never reading it), and a short text with lead windows looks it up: the story it was
    cut from is then nominated, and :func:`opens` tells whether it holds the teaser whole.
    A story that comes after its teaser does not look it up: a headline, then its story, is
    news the headline did not carry."""
    basis = _first_letters(normalised, OPENING_CHARS)
    if len(basis) < OPENING_CHARS:
        return None
    return mmh3.hash64(basis, _OPENING_SEED, signed=False)[0]


def opens(short: bytes, long: bytes) -> bool:
    """Whether a short text's windows (:func:`lead_windows`) are the long text's first ones
    (``long`` as :func:`long_leads` keeps them)."""
    return MIN_WINDOWS <= len(short) <= long[-1] and long.startswith(short)
