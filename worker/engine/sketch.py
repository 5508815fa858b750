"""A compact b-bit MinHash sketch stored with every indexed event: the fine check.

SimHash at k = 3 alone finds only about half of real feed duplicates, and loosening k
alone lets in boilerplate look-alikes. So the tables are probed loosely and every
candidate is verified here: two sketches estimate the Jaccard resemblance of the two
feature sets (Broder), and from it, with the stored set sizes, the containment of the
shorter text in the longer — what makes a truncated teaser a duplicate of its story while
"same opening, different rest" is not.

Sketch layout (130 bytes): feature-set size as uint16 big-endian, then ``PERMUTATIONS``
one-byte minima. A fingerprint's sketch is followed by a short text's character part, or by
a longer text's lead windows (:mod:`worker.engine.leads`) and number tags
(:mod:`worker.engine.numbers`), which :func:`compare` also reads.

The minima come from one-permutation hashing with optimal densification (Li, Owen & Zhang
2012; Shrivastava 2017) rather than 128 separate permutations. Feature hashes are already
uniformly random, so their own order serves as the permutation: the top 7 bits of a hash
pick one of 128 bins and each bin keeps its smallest hash. That is one sort of the
document's hashes instead of a (features x 128) multiply-add, with the same expected
agreement (the Jaccard resemblance) and about the same variance once a text has more
features than bins (for 10-40 features the standard error is 10-25% higher). An empty bin
borrows the minimum of the first non-empty bin in a fixed pseudo-random order of the other
bins (the same order for every text), so two texts that both lack a bin still compare a
real minimum. Eight bits of each minimum are kept (b-bit MinHash, Li & König); their chance
collisions (1/256) are corrected in :func:`resemblance`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from worker.engine.leads import LONG_LEADS, MIN_WINDOWS, opens
from worker.engine.numbers import numbers_disagree

PERMUTATIONS = 128
_BITS = 8
_CHANCE = 1.0 / (1 << _BITS)
SKETCH_BYTES = 2 + PERMUTATIONS

# Bins are the top 7 bits of a hash: bin i holds [i << 57, (i + 1) << 57).
_BIN_SHIFT = np.uint64(64 - (PERMUTATIONS - 1).bit_length())
_BIN_EDGES = np.arange(PERMUTATIONS + 1, dtype=np.uint64)
# The kept byte: bits 8..15, clear of the bin bits and of any low-bit pattern in the input.
_BYTE_SHIFT = np.uint64(8)

_rng = np.random.Generator(np.random.PCG64(20070508))
# Row i: the other bins in the order an empty bin i tries them.
_DONORS = np.array(
    [[j for j in _rng.permutation(PERMUTATIONS).tolist() if j != i] for i in range(PERMUTATIONS)],
    dtype=np.intp,
)


def donor_order() -> bytes:
    """The borrowing order of every empty bin (row ``i`` = the 127 other bins, one byte each),
    for the native pipeline (``worker/native``)."""
    return _DONORS.astype(np.uint8).tobytes()


def sketch(hashes: np.ndarray) -> bytes:
    """Sketch of a set of 64-bit feature hashes (duplicates in ``hashes`` are harmless).

    The hashes must already be uniformly random (MurmurHash3 or ``mix64`` outputs are):
    their own top bits choose the bin and their sorted order is the permutation.
    """
    if hashes.size == 0:
        return bytes(SKETCH_BYTES)
    values = np.sort(hashes)
    size = min(1 + int(np.count_nonzero(values[1:] != values[:-1])), 0xFFFF)
    # edges[i] = index of the first value in bin i (edges[128] = len): bin i is values[edges[i]:edges[i+1]]
    edges = np.searchsorted(values >> _BIN_SHIFT, _BIN_EDGES)
    minima = (values.take(edges[:-1], mode="clip") >> _BYTE_SHIFT).astype(np.uint8)
    filled = edges[1:] > edges[:-1]
    if not filled.all():
        empty = np.flatnonzero(~filled)
        order = _DONORS[empty]
        minima[empty] = minima[order[np.arange(empty.size), filled[order].argmax(axis=1)]]
    return size.to_bytes(2, "big") + minima.tobytes()


# Why two sketches were found unrelated before their sets were compared (Similarity.ruled_out).
NUMBERS_DIFFER = "their numbers differ"
TOO_FEW_GRAMS = "too short to be a copy unless equal"


@dataclass(frozen=True, slots=True)
class Similarity:
    """Estimated resemblance (Jaccard) and containment of the smaller set in the larger;
    ``long``: both texts are longer than a short text, compared on their word sketches alone;
    ``ruled_out``: why the pair is unrelated whatever its sets share (:data:`NUMBERS_DIFFER`,
    :data:`TOO_FEW_GRAMS`), shown by ``/check``; ``teaser``: a short text against a long one
    with ``TEASER_RATIO`` times its features (a teaser and its story), whose containment comes
    from a small resemblance, so loosely."""

    resemblance: float
    containment: float
    long: bool = False
    ruled_out: str = ""
    teaser: bool = False


# A short text's sketch is followed by its character part (``worker.engine.shorttext``): a
# sketch of the same layout over character 3-grams, a 64-bit mask of its numbers, its lead
# windows when it has any (flagged in the character sketch's size field: one byte, their
# number, then theirs), then, for a set of at most 128 grams, its words (flagged there too: one
# byte, their length, then their UTF-8; :mod:`worker.engine.words`), the set itself (16-bit
# tags, two bytes each), and for a dense one whose grams folding by shape changes, the second
# set and the number of tags in the first (one byte: such a list alone has an odd length).
# Entries stored before the words (or the windows) were kept have the lists right after the mask.
SHORT_SKETCH_BYTES = 2 * SKETCH_BYTES + 8
# A character set this small (10 3-grams: about a dozen characters, "good morning") is in too
# many unrelated posts: it matches only a set it equals, and containment in a larger set counts
# only from this size on. (Tuned on the dev set's cut_anywhere class: 16 missed cuts of short
# Chinese posts, 10 let in no false duplicate.) A dense set (mostly Han characters, flagged in
# its size field by ``worker.engine.shorttext``) says as much in half as many grams, seven
# characters being three or four words, so from ``MIN_DENSE_CHAR_GRAMS`` on it also matches a
# listed set that holds all of it: the same post under a header, with an addition or cut.
# Not by resemblance: a post of seven Han characters with its last one changed ("…很好",
# "…很差") keeps six of its seven grams.
MIN_CHAR_GRAMS = 10
# The words (worker.engine.words) judge a pair of listed short texts whose smaller set has at
# most this many 3-grams, as many as the texts that kept words when they were written for and
# checked on (texts of a line or two, where each word is the message).
MAX_WORDED_GRAMS = 64
MIN_DENSE_CHAR_GRAMS = 5
# A short text against a long one with at least this many times its word features is judged as
# a teaser: at most half of its story. Two texts of about one length are not, whatever their
# lengths' classes (a post of 290 characters against one of 310).
TEASER_RATIO = 2
# Set in the first byte of a dense text's character sketch (its size field, which a short text's
# set never takes to 0x8000).
DENSE_FLAG = 0x80
# Set in the same byte when the words follow the mask.
WORDS_FLAG = 0x40
# Set in the same byte when lead windows follow the mask (a short text's set never reaches 0x2000).
LEADS_FLAG = 0x20
_FLAGS = DENSE_FLAG | WORDS_FLAG | LEADS_FLAG


def compare(a: bytes, b: bytes) -> Similarity:
    """Estimate how alike two sketched sets are.

    Two short texts are compared on their character parts, and are unrelated when the numbers
    of one are not among the numbers of the other (the mask with fewer bits must lie inside the
    other) or when the smaller set has fewer 3-grams than ``MIN_CHAR_GRAMS`` and the two sets
    differ (but a dense one of ``MIN_DENSE_CHAR_GRAMS`` and more that the other, listed, holds
    whole); any other pair on its word sketches (``long`` when neither has a character part),
    unless their number tags tell them apart (two reports of one template).

    Two empty sets are identical (J = 1): texts with no words at all (emoji only, symbols) are
    only ever compared when their exact hashes agree, and must then match.
    """
    if len(a) >= SHORT_SKETCH_BYTES and len(b) >= SHORT_SKETCH_BYTES:
        if numbers_apart(a, b):
            return Similarity(0.0, 0.0, ruled_out=NUMBERS_DIFFER)
        lists_a, lists_b = _lists(a), _lists(b)
        listed = bool(lists_a) and bool(lists_b)
        if listed:
            chars = _listed_best(lists_a, lists_b)
        else:
            chars = _compare(_char_sketch(a), _char_sketch(b))
            if chars.containment < 1.0 and _short_opens(a, b):
                chars = Similarity(chars.resemblance, 1.0)
        size_a, size_b = _size(a[SKETCH_BYTES:]), _size(b[SKETCH_BYTES:])
        small, dense = min((size_a, a[SKETCH_BYTES] & DENSE_FLAG), (size_b, b[SKETCH_BYTES] & DENSE_FLAG))
        whole = dense and listed and chars.containment == 1.0  # a dense set the other holds whole
        if small >= (MIN_DENSE_CHAR_GRAMS if whole else MIN_CHAR_GRAMS):
            return chars
        same = chars.resemblance == 1.0 and size_a == size_b
        return Similarity(1.0, 1.0) if same else Similarity(0.0, 0.0, ruled_out=TOO_FEW_GRAMS)
    long = len(a) < SHORT_SKETCH_BYTES and len(b) < SHORT_SKETCH_BYTES  # neither has a character part
    if long and numbers_disagree(_number_tags(a), _number_tags(b)):
        return Similarity(0.0, 0.0, long, NUMBERS_DIFFER)
    words = _compare(a[:SKETCH_BYTES], b[:SKETCH_BYTES], long, mixed=not long)
    if not long and words.containment < 1.0 and _opens(a, b):
        return Similarity(words.resemblance, 1.0, teaser=words.teaser)
    return words


def _opens(a: bytes, b: bytes) -> bool:
    """Whether, of a short text and a long one, the short one's lead windows are the long
    one's first (:func:`worker.engine.leads.opens`): the long text begins with it."""
    short, long = (a, b) if len(a) >= SHORT_SKETCH_BYTES else (b, a)
    if not short[SKETCH_BYTES] & LEADS_FLAG or not _long_leads(long):  # none kept, or stored before they were
        return False
    return opens(_leads(short), long[SKETCH_BYTES : SKETCH_BYTES + LONG_LEADS])


def _short_opens(a: bytes, b: bytes) -> bool:
    """Whether, of two short texts, the one with fewer lead windows (:mod:`worker.engine.leads`)
    has windows that are the other's first: the other begins with it. A cut of a post of a
    hundred and more characters to a tenth of it is a set of grams that the post's sketch,
    not a list any more, estimates as held a half or two thirds."""
    leads_a, leads_b = _leads(a), _leads(b)
    fewer, more = (leads_a, leads_b) if len(leads_a) <= len(leads_b) else (leads_b, leads_a)
    return MIN_WINDOWS <= len(fewer) < len(more) and more.startswith(fewer)


def _long_leads(long: bytes) -> int:
    """The bytes a long text's lead windows take after its word sketch: ``LONG_LEADS``, or none
    in an entry stored before they were kept (its sketch's length is even: number tags come in
    pairs of bytes, the windows' block is odd)."""
    return LONG_LEADS if len(long) % 2 else 0


def _number_tags(long: bytes) -> bytes:
    """A long text's number tags: what follows its word sketch and its windows (when kept)."""
    return long[SKETCH_BYTES + _long_leads(long) :]


def numbers_apart(a: bytes, b: bytes) -> bool:
    """Whether two short texts' sketches hold numbers that tell them apart: the mask with fewer
    bits does not lie inside the other. Such a pair is never a copy, whatever else agrees; a
    probe of a template's events skips its candidates on this alone (:func:`plausible`)."""
    if len(a) < SHORT_SKETCH_BYTES or len(b) < SHORT_SKETCH_BYTES:
        return False
    return _masks_apart(_numbers_mask(a), _numbers_mask(b))


def _masks_apart(mask_a: int, mask_b: int) -> bool:
    """The rule of :func:`numbers_apart` on two masks: the one with fewer bits is not inside the other."""
    fewer = mask_a if mask_a.bit_count() <= mask_b.bit_count() else mask_b
    return mask_a & mask_b != fewer


def plausible(probe: bytes, own: str | None = None) -> Callable[[str, bytes], bool]:
    """A filter of stored entries (their event id and sketch) for a probe with sketch ``probe``:
    False for one :func:`compare` would refuse on its numbers alone. A key of a template's
    events names dozens of entries whose figures differ; reading each into a candidate and
    verifying it was most of a probe. ``own``: the probe's event id, whose entry is always kept
    (the index stage tells a replay by it)."""
    if len(probe) < SHORT_SKETCH_BYTES:
        return lambda _id, _sketch: True
    mask = _numbers_mask(probe)  # read once: a hot key's probe filters dozens of entries

    def keep(event_id: str, sketch: bytes) -> bool:
        if event_id == own or len(sketch) < SHORT_SKETCH_BYTES:
            return True
        return not _masks_apart(mask, _numbers_mask(sketch))

    return keep


def _numbers_mask(short: bytes) -> int:
    """A short text's 64-bit mask of its numbers."""
    return int.from_bytes(short[SHORT_SKETCH_BYTES - 8 : SHORT_SKETCH_BYTES], "big")


def _char_sketch(short: bytes) -> bytes:
    """The character sketch of a short text's sketch, its flags masked off the size."""
    return bytes((short[SKETCH_BYTES] & ~_FLAGS,)) + short[SKETCH_BYTES + 1 : SHORT_SKETCH_BYTES - 8]


def _leads_end(short: bytes) -> int:
    """Where a short text's lead windows end (right after the mask when it has none)."""
    if short[SKETCH_BYTES] & LEADS_FLAG:
        return SHORT_SKETCH_BYTES + 1 + short[SHORT_SKETCH_BYTES]
    return SHORT_SKETCH_BYTES


def _leads(short: bytes) -> bytes:
    """A short text's lead windows (:mod:`worker.engine.leads`), empty when it has none."""
    return short[SHORT_SKETCH_BYTES + 1 : _leads_end(short)]


def _words_end(short: bytes) -> int:
    """Where a listed short text's words end and its gram lists begin (right after the mask
    and windows in an entry stored before the words were kept)."""
    start = _leads_end(short)
    if short[SKETCH_BYTES] & WORDS_FLAG:
        return start + 1 + short[start]
    return start


def _lists(short: bytes) -> bytes:
    """A listed short text's gram lists: what follows its mask and words."""
    return short[_words_end(short) :]


def short_words(sketch: bytes) -> str | None:
    """The words a listed short text's sketch keeps (:mod:`worker.engine.words`), or None."""
    if len(sketch) <= SHORT_SKETCH_BYTES or not sketch[SKETCH_BYTES] & WORDS_FLAG:
        return None
    return sketch[_leads_end(sketch) + 1 : _words_end(sketch)].decode()


def worded_pair(a: bytes, b: bytes) -> tuple[str, str, bool] | None:
    """The words of two listed short texts, and whether their words judge them, or None when
    either kept none. The words judge a pair whose smaller has at most ``MAX_WORDED_GRAMS``
    3-grams. Longer texts are listed too (their sets are compared exactly), but the words of a
    text twice that long carry more slips, and two characters misread side by side read as
    another word ("第二夫夫一亮" for "第二天天一亮"); their words are read for a negation only."""
    words_a, words_b = short_words(a), short_words(b)
    if words_a is None or words_b is None:
        return None
    size = min(_size(a[SKETCH_BYTES : SKETCH_BYTES + 2]), _size(b[SKETCH_BYTES : SKETCH_BYTES + 2]))
    return words_a, words_b, size <= MAX_WORDED_GRAMS


def _listed_best(a: bytes, b: bytes) -> Similarity:
    """The better of two listed parts' similarities on their 3-grams folded by sound, and on
    those folded by shape then sound (a part without the second list has one set for both)."""
    by_sound = _listed(_sound_list(a), _sound_list(b))
    if by_sound.resemblance == 1.0 or not (len(a) % 2 or len(b) % 2):
        return by_sound
    by_shape = _listed(_shape_list(a), _shape_list(b))
    return max(by_sound, by_shape, key=lambda s: (s.resemblance, s.containment))


def _sound_list(part: bytes) -> bytes:
    return part[: 2 * part[-1]] if len(part) % 2 else part


def _shape_list(part: bytes) -> bytes:
    return part[2 * part[-1] : -1] if len(part) % 2 else part


def _listed(a: bytes, b: bytes) -> Similarity:
    """Resemblance and containment of two listed sets of 16-bit gram tags. Read in the
    machine's byte order, not the stored big-endian one: swapping bytes maps tags one to one,
    so the sets' sizes are the same, and a memoryview costs less than a numpy array to make."""
    set_a, set_b = set(memoryview(a).cast("H")), set(memoryview(b).cast("H"))
    common = len(set_a & set_b)
    size_a, size_b = len(set_a), len(set_b)
    return Similarity(common / (size_a + size_b - common), common / min(size_a, size_b))


def _size(sketch: bytes) -> int:
    """The set size of a character sketch (or of a part that starts with one), flags masked off."""
    return int.from_bytes(sketch[:2], "big") & ~(_FLAGS << 8)


def _compare(a: bytes, b: bytes, long: bool = False, mixed: bool = False) -> Similarity:
    """``mixed``: one text is short, the other long (a teaser when its sets' sizes say so)."""
    size_a = int.from_bytes(a[:2], "big")
    size_b = int.from_bytes(b[:2], "big")
    teaser = mixed and max(size_a, size_b) >= TEASER_RATIO * min(size_a, size_b)
    if size_a == 0 and size_b == 0:
        return Similarity(1.0, 1.0, long, teaser=teaser)
    if size_a == 0 or size_b == 0:
        return Similarity(0.0, 0.0, long, teaser=teaser)
    # The minima that agree are the zero bytes of the two sketches' XOR: three calls into C,
    # where numpy's arrays cost more to make than the comparison (scan and stream verify
    # candidates by the hundred thousand). Both sketches have the same length.
    differ = int.from_bytes(a[2:], "little") ^ int.from_bytes(b[2:], "little")
    agree = differ.to_bytes(len(a) - 2, "little").count(0)
    jaccard = resemblance(agree / PERMUTATIONS)
    # |A ∩ B| = J (|A| + |B|) / (1 + J)
    common = jaccard * (size_a + size_b) / (1.0 + jaccard)
    return Similarity(jaccard, min(1.0, common / min(size_a, size_b)), long, teaser=teaser)


def resemblance(agreement: float) -> float:
    """Jaccard estimate from the fraction of agreeing b-bit minima, corrected for chance."""
    return max(0.0, (agreement - _CHANCE) / (1.0 - _CHANCE))
