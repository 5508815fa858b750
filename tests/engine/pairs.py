"""The decision on one pair of texts, as a user would ask it: is this a copy of that?"""

from __future__ import annotations

from worker.engine.fingerprint import fingerprint
from worker.engine.match import Candidate, Entry, accepts
from worker.engine.sketch import SKETCH_BYTES, WORDS_FLAG, _leads_end
from worker.settings import Settings


def is_duplicate(a: str, b: str, settings: Settings | None = None) -> bool:
    """Whether ``a``, arriving after ``b``, is verified as its copy (the distance unbounded,
    as for a candidate an exact key nominates)."""
    settings = settings or Settings()
    probe, stored = fingerprint(a, settings), fingerprint(b, settings)
    entry = Entry("stored", stored.simhash, 0, 0, stored.sketch)
    return accepts(probe, Candidate(entry, (probe.simhash ^ stored.simhash).bit_count()), settings) is not None


def without_words(sketch: bytes) -> bytes:
    """A short text's sketch as entries stored before listed texts kept their words."""
    if not sketch[SKETCH_BYTES] & WORDS_FLAG:
        return sketch
    flags = bytes((sketch[SKETCH_BYTES] & ~WORDS_FLAG,))
    words = _leads_end(sketch)  # where the words' length byte is: after the mask and the lead windows
    lists = sketch[words + 1 + sketch[words] :]
    return sketch[:SKETCH_BYTES] + flags + sketch[SKETCH_BYTES + 1 : words] + lists
