"""What a short text adds to its fingerprint: a character sketch, its numbers, band keys.

A post of a few words has few word features, and one slip of a finger changes a word, so
its word shingles and its exact hash break at the first typo and a 30-character post with one
wrong letter, or a cut mid-word, passes as unique. Its *characters* hardly change: one slip
alters at most ``CHAR_GRAM`` of its character 3-grams. So a text whose normalised form has at
most ``Settings.short_chars`` characters also gets:

* a second MinHash sketch (:func:`worker.engine.sketch.sketch`, same layout) over the hashes
  of its character 3-grams, spaces and punctuation left out, so "eastbound" and "east bound"
  agree and Chinese needs no segmentation; Chinese characters are first folded to their
  sound (:mod:`worker.engine.sounds`), so an input method's slip (再 for 在) changes nothing;
* a flag in its sketch's size field when at least half of it is Han characters
  (:func:`is_dense`): :func:`worker.engine.sketch.compare` lets a smaller such set match;
* the set itself when it has at most ``MAX_LISTED_GRAMS`` 3-grams (16 bits of each), since
  the sketch's estimate is coarse for so few; for a dense text, a second list of the 3-grams
  of its text folded by shape (:mod:`worker.engine.shapes`), so an OCR engine's misreading
  (己/已) is no change either; and with the set its words, folded by shape and sound
  (:mod:`worker.engine.words`): two posts one word apart are two messages, however many of
  their grams agree;
* its lead windows (:mod:`worker.engine.leads`), which tell a teaser or cut of a long story
  exactly;
* a 64-bit mask of the numbers standing on their own in it (:mod:`worker.engine.numbers`):
  two templated reports that differ only in a score or a time are not one post, while a cut
  or an added sentence only ever drops or adds numbers (:func:`worker.engine.sketch.compare`
  requires the smaller mask to lie inside the larger);
* ``Settings.short_bands`` exact keys, each a hash of three consecutive minima of the
  character sketch (LSH banding): two posts whose character sets have Jaccard resemblance
  J share a given band with probability about J³, so a copy with a slip (J ≈ 0.7) shares one
  of 8 bands with probability 0.97 and two unrelated posts almost never do. The keys only
  nominate candidates; the character sketches verify them;
* two more exact keys, hashes of its first and last ``EDGE_CHARS`` characters
  (``DENSE_EDGE_CHARS`` for a dense text of at most ``DENSE_EDGE_MAX_CHARS``), which find a
  cut or a prefixed copy whose resemblance is too low for the bands (and for a Latin text of
  at most ``DENSE_EDGE_MAX_CHARS``, a third, of its first ``SHORT_LEAD_CHARS``, which a longer
  one stores under a seed of its own for a cut of it to look up: :func:`latin_lead_keys`; for a
  longer dense one, a narrow lead that a cut of it to its first line looks up: :func:`lead_keys`,
  and a narrow tail that it looks up with its opening sentences taken out: :func:`tail_keys`);
* *inner edges* to look up but not store (:func:`inner_edge_keys`): the edges a post would
  have if it began or ended at one of its first or last clauses, which find the post under a
  header with a sentence after it (a longer text of up to twice ``short_chars`` is stored under
  and looks up its *header leads* for the same, :func:`header_leads`: the post under a header with sentences
  after it that take it past ``short_chars``);
* for a post of 8-36 letters and digits, its *halves* (:func:`half_keys`): one slip in the
  middle of so short a post breaks both edges and most bands, never both halves; for a dense
  post of 4-7, the whole of it folded by shape and sound.

The native engine (``worker/native/src/short.rs``) computes all of it but the numbers mask, the
second list's folding, the words and the half and reach keys, bit for bit as :func:`_short_reference` does
(``tests/engine/test_native.py``).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import mmh3
import numpy as np

from worker.engine.leads import lead_windows, letters, opening_key
from worker.engine.numbers import numbers_mask
from worker.engine.shapes import fold_shapes_and_sounds
from worker.engine.simhash import mix64, shingle_hashes
from worker.engine.sketch import (
    DENSE_FLAG,
    LEADS_FLAG,
    MIN_CHAR_GRAMS,
    MIN_DENSE_CHAR_GRAMS,
    PERMUTATIONS,
    WORDS_FLAG,
    sketch,
)
from worker.engine.slips import MIN_SLIP_CHARS
from worker.engine.sounds import fold_sounds
from worker.engine.words import HAN_CHAR, canonical

__all__ = [
    "CHAR_GRAM", "BAND_ROWS", "EDGE_CHARS", "DENSE_EDGE_CHARS", "DENSE_EDGE_MAX_CHARS", "SHORT_LEAD_CHARS",
    "ShortPart", "band_keys", "is_dense", "short_part", "numbers_mask", "INNER_EDGES", "inner_edge_keys", "half_keys",
    "NARROW_LEAD_CHARS", "CUT_MARKS", "reach_keys", "lead_keys", "tail_keys", "latin_lead_keys", "header_leads",
    "HEAD_SPAN", "HEADER_BREAKS",
]  # fmt: skip

CHAR_GRAM = 3
BAND_ROWS = 3
_CHAR_SEED = np.uint64(0xC4A2_5EED_0000_0003)
_BAND_SEED = 0xBA4D
_LEAD_SEED = 0x1EAD5
_TAIL_SEED = 0x7A115
_HALF_SEED = 0x4A1F
_NARROW_LEAD_SEED = 0x90571EAD
_MARKED_CUT_SEED = 0xC0771EAD
_NARROW_TAIL_SEED = 0x90577A11
_LATIN = re.compile("[a-z]")  # words are case-folded
EDGE_CHARS = 16
# A dense text's edges: as many characters as its smallest set that compare() lets match, on
# texts short enough to be a set under MIN_CHAR_GRAMS with a header and an addition (three times
# a dozen characters). Longer ones keep the wider edges: seven characters are a feed's own
# boilerplate as often ("来自iPhone客户端"), and every text under a key is a candidate to verify.
DENSE_EDGE_CHARS = MIN_DENSE_CHAR_GRAMS + CHAR_GRAM - 1
DENSE_EDGE_MAX_CHARS = 36
# A Latin text of at most DENSE_EDGE_MAX_CHARS letters and digits also stores a lead key of as
# many characters as its smallest set that compare() lets match: a cut of a 25-letter line keeps
# 11-24 of them, fewer than EDGE_CHARS, and nothing else nominates so short a cut. A third key,
# not a narrower edge as in dense text: the inner edges a longer copy looks up stay EDGE_CHARS wide.
SHORT_LEAD_CHARS = MIN_CHAR_GRAMS + CHAR_GRAM - 1
# A dense cut this short and no shorter is joined to the post it was cut from (lead_keys): a
# cut of a post of a hundred characters to a tenth of it reads as it, and verification takes
# it; under ten characters, an opening is a feed's own phrase as often as a post's.
NARROW_LEAD_CHARS = 10
# How a normalised text that was cut mid-sentence ends (NFKC has made "…" three dots, "，" a comma).
CUT_MARKS = ("...", ",", "、")
# A set of at most this many 3-grams is listed whole (16 bits of each hash, sorted) after the
# numbers mask: for so few grams the sketch's estimate is coarse (one-permutation hashing fills
# only as many of its 128 bins, at most, and the rest copy them), a listed set gives the
# resemblance itself. As many as the sketch has bins: at half that, a question of five words
# against a post of eighty characters that opens with four of them read as held whole (its
# estimate rested on the two dozen bins the question fills), and the post had no words to
# tell "a cheap bike" from "a cheap train ticket".
MAX_LISTED_GRAMS = 128
# A listed text keeps its words when they take at most this many bytes (a length byte's reach).
MAX_WORDS_BYTES = 255
_TAG_SHIFT = np.uint64(48)
_NON_WORD = re.compile(r"[\W_]+")


@dataclass(frozen=True, slots=True)
class ShortPart:
    """What a short text adds: the character part of its sketch and its exact keys, those it
    looks up only (``lookups``) and those it is stored under only (``marks``: a text never
    looks up its own, so two long posts that open alike never meet under their narrow leads)."""

    sketch: bytes
    keys: tuple[int, ...]
    lookups: tuple[int, ...] = ()
    marks: tuple[int, ...] = ()


def short_part(normalised: str, short_chars: int, bands: int, native: Any | None = None) -> ShortPart | None:
    """The character sketch, numbers mask and keys of a short normalised text (None when it is
    longer than ``short_chars`` characters, or has no letter or digit). ``native``: the native
    engine (``worker/native``, ``Engine.short``), which computes all but the numbers mask."""
    if len(normalised) > short_chars:
        return None
    bands = min(bands, PERMUTATIONS // BAND_ROWS)
    heard = fold_sounds(normalised)
    edges = (EDGE_CHARS, DENSE_EDGE_CHARS, DENSE_EDGE_MAX_CHARS, INNER_EDGES, SHORT_LEAD_CHARS)
    done = None if native is None else native.short(heard, bands, *edges)
    if done is None:
        done = _short_reference(heard, bands)
        if done is None:
            return None
    char_sketch, tags, keys, lookups = done
    marks, looked = reach_keys(heard, bool(char_sketch[0] & DENSE_FLAG))
    lookups += looked
    mask = numbers_mask(normalised, native).to_bytes(8, "big")
    windows = lead_windows(normalised, short=True, native=native)
    if windows:
        char_sketch = bytes((char_sketch[0] | LEADS_FLAG,)) + char_sketch[1:]
        mask += bytes((len(windows),)) + windows
        opening = opening_key(normalised)  # a long story's, which it may be cut from
        if opening is not None:
            lookups += (opening,)
    if not tags:
        return ShortPart(char_sketch + mask, keys, lookups, marks)
    seen = fold_shapes_and_sounds(normalised)
    said = canonical(seen)
    spoken = said.encode()
    if len(spoken) <= MAX_WORDS_BYTES:
        char_sketch = bytes((char_sketch[0] | WORDS_FLAG,)) + char_sketch[1:]
        mask += bytes((len(spoken),)) + spoken
    part = char_sketch + mask + tags
    if char_sketch[0] & DENSE_FLAG:
        part += shape_list(seen, heard, tags, native)
    halves, near = half_keys(said.replace(" ", ""))
    return ShortPart(part, keys[:bands] + halves + keys[bands:], lookups + near, marks)  # band numbers kept


def shape_list(seen: str, heard: str, tags: bytes, native: Any | None = None) -> bytes:
    """A dense listed text's second list: the tags of its 3-grams folded by shape, then by sound
    (:mod:`worker.engine.shapes`), and after them one byte, the number of tags in the first list
    (which makes the part's length odd). Empty when folding by shape changes no 3-gram, or the
    second set is too large to list. ``seen``: the text folded by shape, then by sound."""
    if seen == heard:
        return b""
    done = (None if native is None else native.short(seen, 0)) or _short_reference(seen, 0)
    listed = None if done is None else done[1]
    if listed is None or listed == tags:
        return b""
    return listed + bytes((len(tags) // 2,))


def is_dense(text: str) -> bool:
    """Whether at least half of the letters and digits of ``text`` are Han characters: a Han
    character is a syllable and often a word, so a few of them say as much as a Latin word
    or two, and a post of seven of them is as specific as one of a dozen letters and more."""
    basis = _NON_WORD.sub("", text)
    return bool(basis) and _dense(basis)


def _dense(basis: str) -> bool:
    return 2 * len(HAN_CHAR.findall(basis)) >= len(basis)


Keys = tuple[int, ...]


def _short_reference(heard: str, bands: int) -> tuple[bytes, bytes | None, Keys, Keys] | None:
    """(character sketch, its size field flagged when dense; listed tags or None; band and edge
    keys; inner edges) of a text folded to sound, None when it has no letter or digit."""
    basis = _NON_WORD.sub("", heard)
    if not basis:
        return None
    grams = char_gram_hashes(basis)
    char_sketch = sketch(grams)
    tags = np.unique((grams >> _TAG_SHIFT).astype(">u2"))
    listed = tags.tobytes() if tags.size <= MAX_LISTED_GRAMS else None
    dense = _dense(basis)
    edge = DENSE_EDGE_CHARS if dense and len(basis) <= DENSE_EDGE_MAX_CHARS else EDGE_CHARS
    keys = band_keys(char_sketch, bands) + edge_keys(basis, edge)
    if not dense and SHORT_LEAD_CHARS < len(basis) <= DENSE_EDGE_MAX_CHARS:
        keys += (_edge(basis[:SHORT_LEAD_CHARS], _LEAD_SEED),)
    if dense:
        char_sketch = bytes((char_sketch[0] | DENSE_FLAG,)) + char_sketch[1:]
    return char_sketch, listed, keys, inner_edge_keys(heard, dense, keys)


# Where a clause ends: punctuation, a line break, a symbol; in Latin script not a space between
# words, in dense text a space too (Chinese puts none between words, but between a header's
# fields and before the post: "11月10日 晚安小镇 发布 军民鱼水情").
_CLAUSE_BREAK = re.compile(r"[^\w ]+|_+")
_DENSE_BREAK = re.compile(r"[\W_]+")
INNER_EDGES = 1


# How much of a longer text :func:`header_leads` reads, and at how many of its first breaks a
# post may begin: a header is a line of a few fields ("10月20日 晚安小镇 发布", "Re: Budget vote").
HEAD_SPAN = 96
HEADER_BREAKS = 3


def header_leads(normalised: str) -> Keys:
    """Keys a longer text is stored under and looks up: the lead key (:func:`edge_keys`) a short
    post would have if it began after one of this text's first ``HEADER_BREAKS`` breaks (a space
    or a punctuation mark). A post under a header with sentences appended is a longer text that
    shares no key with the post it copies (neither anchor, no character key, and too few
    words for a word band); the post itself still begins at a break near the top."""
    pieces = _NON_WORD.split(fold_sounds(normalised[:HEAD_SPAN]))
    basis = "".join(pieces)
    starts = _piece_starts(pieces, len(basis))[:HEADER_BREAKS]
    return tuple(
        dict.fromkeys(_edge(basis[b : b + EDGE_CHARS], _LEAD_SEED) for b in starts if b + EDGE_CHARS <= len(basis))
    )


def _piece_starts(pieces: Iterable[str], length: int) -> list[int]:
    """Where each piece after the first starts among the letters and digits of the text they
    make up (``length`` of them), in order and each once: where a post may begin or end."""
    return sorted({b for b in itertools.accumulate(map(len, pieces)) if 0 < b < length})


def inner_edge_keys(heard: str, dense: bool, own: tuple[int, ...]) -> tuple[int, ...]:
    """Keys to look up, not to store: the lead key a stored text would have if it began at one
    of this text's first ``INNER_EDGES`` clauses after the first, and the tail key if it ended
    at one of the last before the last. A copy with a header in front and a sentence after
    shares neither edge with the post it copies, but the post starts and ends at a clause. A
    dense text looks up both widths a dense post's edges have (narrow up to
    ``DENSE_EDGE_MAX_CHARS``, ``EDGE_CHARS`` beyond), not knowing the stored post's length."""
    widths = (DENSE_EDGE_CHARS, EDGE_CHARS) if dense else (EDGE_CHARS,)
    clauses = (_DENSE_BREAK if dense else _CLAUSE_BREAK).split(heard)
    basis = _NON_WORD.sub("", heard)
    bounds = _piece_starts((_NON_WORD.sub("", clause) for clause in clauses), len(basis))
    keys = [_edge(basis[s : s + w], _LEAD_SEED) for w in widths for s in bounds[:INNER_EDGES] if s + w <= len(basis)]
    keys += [_edge(basis[e - w : e], _TAIL_SEED) for w in widths for e in bounds[-INNER_EDGES:] if e >= w]
    return tuple(dict.fromkeys(k for k in keys if k not in own))


# Characters at each end of a short text that its reach keys are cut from, when they hold more
# letters and digits than DENSE_EDGE_MAX_CHARS: stripping a post of 300 characters whole cost
# a tenth of its fingerprint, and only its first and last EDGE_CHARS letters matter here.
_REACH_SPAN = 64


def reach_keys(heard: str, dense: bool) -> tuple[Keys, Keys]:
    """(to store only, to look up only): the keys that join a short text to a longer one it was
    cut from or had its opening taken from, whose edges are wider than its own
    (:func:`lead_keys`, :func:`tail_keys`, :func:`latin_lead_keys`)."""
    head = letters(heard[:_REACH_SPAN])
    whole = len(heard) <= _REACH_SPAN
    if not whole and len(head) <= DENSE_EDGE_MAX_CHARS:  # its size is needed exactly
        head, whole = letters(heard), True
    size = len(head)  # or, not whole, more than DENSE_EDGE_MAX_CHARS: all that the keys ask
    if not dense:
        return latin_lead_keys(head, size)
    tail = head if whole else letters(heard[-_REACH_SPAN:])
    if len(tail) < EDGE_CHARS and not whole:
        tail = letters(heard)
    stored, looked = lead_keys(head, heard.endswith(CUT_MARKS), size)
    tail_stored, tail_looked = tail_keys(tail, size)
    return stored + tail_stored, looked + tail_looked


def lead_keys(basis: str, marked: bool = False, size: int | None = None) -> tuple[Keys, Keys]:
    """(to store, to look up): the lead keys that join a dense cut to the post it was cut from.
    A cut of at most ``DENSE_EDGE_MAX_CHARS`` letters and digits keeps edges
    ``DENSE_EDGE_CHARS`` wide, a longer post ``EDGE_CHARS``, so a cut of a post to its first
    line shared no key with it, and a cut to a tenth of a post of a hundred characters went
    unfound though verification takes it.

    * A cut of ``EDGE_CHARS`` or more looks up the post's lead key.
    * A shorter one, down to ``NARROW_LEAD_CHARS``, looks up its first ``NARROW_LEAD_CHARS``
      under a seed of their own, which only a longer post stores. So two longer posts that
      open alike (a feed's "【快讯】国家统计局…") never meet under it.
    * A cut that arrives first is found by its post only when it says it was cut: it ends
      mid-sentence, in an ellipsis or a comma (:data:`CUT_MARKS`; a share preview's "位置…").
      It then stores its first ``NARROW_LEAD_CHARS`` under a third seed, which every longer
      post looks up. A short text without such an end is not nominated by it: a headline,
      then its story, is news the headline did not carry.

    ``basis``: the text's letters and digits, folded by sound, or its first ``EDGE_CHARS`` and
    more; ``marked``: whether it ends in one of :data:`CUT_MARKS`; ``size``: how many letters
    and digits it has (``len(basis)`` when not given), or any number over
    ``DENSE_EDGE_MAX_CHARS`` when it has more."""
    size = len(basis) if size is None else size
    if size < NARROW_LEAD_CHARS:
        return (), ()
    lead = basis[:NARROW_LEAD_CHARS]
    if size > DENSE_EDGE_MAX_CHARS:
        return (_edge(lead, _NARROW_LEAD_SEED),), (_edge(lead, _MARKED_CUT_SEED),)
    stored = (_edge(lead, _MARKED_CUT_SEED),) if marked else ()
    if size >= EDGE_CHARS:
        return stored, (_edge(basis[:EDGE_CHARS], _LEAD_SEED),)
    return stored, (_edge(lead, _NARROW_LEAD_SEED),)


def latin_lead_keys(basis: str, size: int) -> tuple[Keys, Keys]:
    """(to store, to look up): :func:`lead_keys` for a Latin text. A cut of ``SHORT_LEAD_CHARS``
    to ``EDGE_CHARS`` letters and digits shares no key with a post longer than
    ``DENSE_EDGE_MAX_CHARS`` (whose shorter texts store their first ``SHORT_LEAD_CHARS``): it
    looks up those under a seed of their own, which only such a post stores. ``basis`` and
    ``size`` as :func:`lead_keys` takes them."""
    if size > DENSE_EDGE_MAX_CHARS:
        return (_edge(basis[:SHORT_LEAD_CHARS], _NARROW_LEAD_SEED),), ()
    if SHORT_LEAD_CHARS <= size < EDGE_CHARS:
        return (), (_edge(basis[:SHORT_LEAD_CHARS], _NARROW_LEAD_SEED),)
    return (), ()


def tail_keys(basis: str, size: int | None = None) -> tuple[Keys, Keys]:
    """(to store, to look up): the tail keys that join a dense post with its opening sentence
    removed to the post. As with a cut (:func:`lead_keys`), the short copy keeps edges
    ``DENSE_EDGE_CHARS`` wide and the post ``EDGE_CHARS``, so they shared no key: a copy of
    ``EDGE_CHARS`` or more looks up the post's tail key, a shorter one down to
    ``NARROW_LEAD_CHARS`` its last ``NARROW_LEAD_CHARS`` under a seed only a longer post stores.
    ``basis``: the text's letters and digits, or its last ``EDGE_CHARS`` and more; ``size`` as
    :func:`lead_keys` takes it."""
    size = len(basis) if size is None else size
    if size < NARROW_LEAD_CHARS:
        return (), ()
    tail = basis[-NARROW_LEAD_CHARS:]
    if size > DENSE_EDGE_MAX_CHARS:
        return (_edge(tail, _NARROW_TAIL_SEED),), ()
    if size >= EDGE_CHARS:
        return (), (_edge(basis[-EDGE_CHARS:], _TAIL_SEED),)
    return (), (_edge(tail, _NARROW_TAIL_SEED),)


# The fewest letters and digits of a dense text that gets a key of its whole folded words: three
# Han characters are a common word, in too many posts to be a key of one.
MIN_WHOLE_CHARS = 4


def half_keys(said: str) -> tuple[Keys, Keys]:
    """Keys of a text of ``MIN_SLIP_CHARS`` to ``DENSE_EDGE_MAX_CHARS`` letters and digits (its
    words folded by shape and sound, spaces out) that a copy with one slip shares: its first
    and its last half, each with the text's length. A slip in the middle of a post of a dozen
    characters breaks both edges and most bands, never both halves (each is at most half of
    it, the middle character in neither). Then, to look up, the halves a text one letter
    longer or shorter would have (a Latin letter dropped or doubled: only a text with one
    looks them up, since a Han character or a digit more or less is not a slip). Stored and
    probed as the edges are; :func:`worker.engine.slips.slipped` verifies what they find.

    A dense text shorter than that has one key instead, of all of it: it must equal its
    original once folded, and only the fold joins "房问很小" to "房间很小" (an OCR misreading
    changes every band and edge of four to seven characters, as they are folded by sound only)."""
    size = len(said)
    if MIN_WHOLE_CHARS <= size < MIN_SLIP_CHARS and _dense(said):
        return (mmh3.hash64(f"{size}={said}", _HALF_SEED, signed=False)[0],), ()
    near = _halves(said, size - 1) + _halves(said, size + 1) if _LATIN.search(said) else ()
    return _halves(said, size), near


def _halves(said: str, length: int) -> Keys:
    """The half keys a text of ``length`` characters would have, cut from ``said``."""
    if not MIN_SLIP_CHARS <= length <= DENSE_EDGE_MAX_CHARS:
        return ()
    half = length // 2
    lead = mmh3.hash64(f"{length}<{said[:half]}", _HALF_SEED, signed=False)[0]
    return lead, mmh3.hash64(f"{length}>{said[-half:]}", _HALF_SEED, signed=False)[0]


def edge_keys(basis: str, chars: int) -> tuple[int, int]:
    """Hashes of the first and the last ``chars`` characters: a cut anywhere after them keeps
    the first, a header or a wrapper in front keeps the last, however little of the longer
    text the shorter one is (bands need a resemblance)."""
    return _edge(basis[:chars], _LEAD_SEED), _edge(basis[-chars:], _TAIL_SEED)


def _edge(chars: str, seed: int) -> int:
    """The key of an edge: its characters hashed with the lead's or the tail's seed."""
    return mmh3.hash64(chars, seed, signed=False)[0]


def char_gram_hashes(basis: str) -> np.ndarray:
    """64-bit hashes of the character 3-grams of ``basis`` (the whole of a shorter one)."""
    points = np.frombuffer(basis.encode("utf-32-le"), dtype="<u4").astype(np.uint64)
    chars = mix64(points ^ _CHAR_SEED)
    n = min(CHAR_GRAM, chars.size)
    windows = chars.size - n + 1
    return shingle_hashes([chars[i : i + windows] for i in range(n)])


def band_keys(part: bytes, bands: int, seed: int = _BAND_SEED) -> tuple[int, ...]:
    """Exact keys of the first ``bands`` bands of ``BAND_ROWS`` minima of a sketch (a character
    sketch's; a longer text's word sketch with a seed of its own)."""
    minima = part[2 : 2 + bands * BAND_ROWS]
    return tuple(
        mmh3.hash64(bytes((b,)) + minima[b * BAND_ROWS : (b + 1) * BAND_ROWS], seed, signed=False)[0]
        for b in range(len(minima) // BAND_ROWS)
    )
