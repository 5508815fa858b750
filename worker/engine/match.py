"""The decision rule, once, for ``neardup scan`` and the stream alike.

An event is a duplicate of the *earliest* earlier event (in arrival order) that it was
found near and that the MinHash sketches verify, the closest fingerprint breaking ties; it
is unique when none passes. Candidates older than the retention window (event time) never
count. In the stream an event's candidates are spread over index partitions: each
partition applies :func:`earliest` to its own and the verdict stage takes :func:`first`
of their answers, which is the same choice, since the earliest of the earliest is the
earliest. A stored event that comes *later* in arrival order than the probing one (a race
between partitions) is told about it the other way round (:func:`is_later_match`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from worker.engine import slips, words
from worker.engine.blocks import Plan
from worker.engine.fingerprint import Fingerprint
from worker.engine.sketch import NUMBERS_DIFFER, Similarity, compare, worded_pair

_MAX_ORDER = 1 << 128  # orders are Kafka (append time, partition, offset) packed in 128 bits
# (event_id, fingerprint, order, ts, sketch)
EntryFields = tuple[str, int, int, int, bytes]


@dataclass(frozen=True)
class Entry:
    """One stored event: where it is in the arrival order, its event time and verification sketch."""

    event_id: str
    fingerprint: int
    order: int
    ts: int
    sketch: bytes

    @classmethod
    def trusted(cls, fields: EntryFields) -> Entry:
        """An entry from the fields of one this process built (and so checked) before: the
        index's hot path does not pay for checking them again."""
        entry = object.__new__(cls)
        # Unpacked into the instance's dict, cheaper than zip and update: a probe of a hot key
        # builds dozens of entries.
        state = entry.__dict__
        state["event_id"], state["fingerprint"], state["order"], state["ts"], state["sketch"] = fields
        return entry

    def fields(self) -> EntryFields:
        """The entry as a plain tuple: kept in a cache, a tuple of strings, numbers and bytes is
        one the cyclic garbage collector stops scanning; tens of thousands of cached entries
        made each of its full passes a pause of the event loop."""
        return (self.event_id, self.fingerprint, self.order, self.ts, self.sketch)

    def __post_init__(self) -> None:
        if not 0 <= self.fingerprint < 1 << 64:
            raise ValueError(f"fingerprint {self.fingerprint!r} is not a 64-bit unsigned integer")
        if not 0 <= self.order < _MAX_ORDER:
            raise ValueError(f"order {self.order!r} must be in [0, 2^128)")
        if not -(1 << 63) <= self.ts < 1 << 63:
            raise ValueError(f"ts {self.ts!r} does not fit a signed 64-bit integer")


@dataclass(frozen=True)
class Candidate:
    """A stored entry found near the probe (a shared table key or exact key), and its Hamming distance."""

    entry: Entry
    distance: int


class Thresholds(Protocol):
    """The settings verification reads (``worker.settings.Settings`` has them)."""

    @property
    def min_resemblance(self) -> float: ...

    @property
    def min_long_resemblance(self) -> float: ...

    @property
    def min_containment(self) -> float: ...

    @property
    def min_teaser_containment(self) -> float: ...


WORDS_DIFFER = "a word of one stands where another word stands in the other"
NEGATED = "a negation (not, no, never, non) between words both share is in one and not the other"


@dataclass(frozen=True, slots=True)
class Judgement:
    """What verification made of one candidate: the similarity that confirms it, or why not.

    ``reason``: why a pair was refused before the thresholds were read; ``missed``: the
    resemblance, its floor, the containment and its floor of a pair refused on the thresholds.
    The sentence :attr:`refused` is made only when asked for (``/check``): scan and stream
    refuse candidates by the thousand and never read it."""

    similarity: float | None
    reason: str = ""
    missed: tuple[float, float, float, float] | None = None

    @property
    def refused(self) -> str:
        """Why the candidate was refused, as ``/check`` shows it ("" when it was not)."""
        if self.missed is None:
            return self.reason
        resemblance, floor, containment, needed = self.missed
        return (
            f"too little in common: resemblance {resemblance:.2f} (needs {floor:.2f}),"
            f" containment {containment:.2f} (needs {needed:.2f})"
        )

    def shown(self, candidate: Candidate, oldest_ts: int) -> dict[str, Any]:
        """``candidate`` as a check lists it (a worker's ``/check``, ``neardup check --state``):
        its event, distance and similarity, or why it was refused, and whether it is still
        within the window that begins at ``oldest_ts``."""
        entry, similarity = candidate.entry, self.similarity
        return (
            {"id": entry.event_id, "order": entry.order, "ts": entry.ts, "distance": candidate.distance}
            | {"similarity": None if similarity is None else round(similarity, 3)}
            | {"verified": similarity is not None, "in_window": entry.ts >= oldest_ts}
            | ({"refused": self.refused} if self.refused else {})
        )


def accepts(probe: Fingerprint, candidate: Candidate, thresholds: Thresholds) -> float | None:
    """The similarity that confirms ``candidate`` as a near-duplicate of ``probe``, or None
    (:func:`judge`)."""
    return judge(probe, candidate, thresholds).similarity


def judge(probe: Fingerprint, candidate: Candidate, thresholds: Thresholds) -> Judgement:
    """Verify ``candidate`` as a near-duplicate of ``probe``: the similarity that confirms it,
    or the reason it is refused (``/check`` shows it).

    Resemblance catches edited reposts; containment of the shorter feature set in the
    longer catches teasers and truncations, whose resemblance to the full story is low. Two
    long texts need less resemblance than two short ones: a long text's word sketch holds many
    features, and slips throughout a story lower it more than an edit lowers a post's.
    Callers bound the Hamming distance of table candidates (``max_distance``); candidates
    nominated by an exact key (an anchor, a word band, a short text's key) have no bound.
    Two listed short texts (:mod:`worker.engine.words`) that share too few grams pass when
    their words are one another's with a slip or two, and are refused, however they passed,
    when a word of one stands where another word stands in the other, or when the two or three
    words of one stand apart in the other; listed texts of any
    length are refused when one says "not", "no", "never" or "non" where the other does not.
    """
    similarity = compare(probe.sketch, candidate.entry.sketch)
    if similarity.ruled_out == NUMBERS_DIFFER:
        return Judgement(None, similarity.ruled_out)
    floor = thresholds.min_long_resemblance if similarity.long else thresholds.min_resemblance
    needed = thresholds.min_teaser_containment if similarity.teaser else thresholds.min_containment
    passed = _passes(similarity, floor, needed)
    worded = worded_pair(probe.sketch, candidate.entry.sketch)
    if worded is None:  # not two listed short texts: the sets decide alone
        return _refused(similarity, floor, needed) if passed is None else Judgement(passed)
    mine, theirs, judged = worded
    if passed is None and judged:
        passed = slips.slipped(theirs, mine)
    if passed is None and judged:
        passed = slips.slipped_within(theirs, mine)
    if passed is None:
        return _refused(similarity, floor, needed)
    if words.negated(theirs, mine):
        return Judgement(None, NEGATED)
    if judged:
        swapped = words.differ(theirs, mine) or words.split_apart(theirs, mine)
    else:
        swapped = words.swapped_far(theirs, mine)
    return Judgement(None, WORDS_DIFFER) if swapped else Judgement(passed)


def _passes(similarity: Similarity, floor: float, needed: float) -> float | None:
    """The resemblance or containment that meets its floor, or None."""
    if similarity.ruled_out:
        return None
    if similarity.resemblance >= floor:
        return similarity.resemblance
    return similarity.containment if similarity.containment >= needed else None


def _refused(similarity: Similarity, floor: float, needed: float) -> Judgement:
    if similarity.ruled_out:
        return Judgement(None, similarity.ruled_out)
    return Judgement(None, missed=(similarity.resemblance, floor, similarity.containment, needed))


# The similarity that confirms a candidate (:func:`accepts` bound to a probe), or None.
Verify = Callable[[Candidate], "float | None"]


class Ranked(Protocol):
    """Anything with a place in the arrival order and a distance: a candidate's match or a ref."""

    @property
    def order(self) -> int: ...

    @property
    def distance(self) -> int: ...


R = TypeVar("R", bound=Ranked)


def precedence(order: int, distance: int) -> tuple[int, int]:
    """What decides between two matches: the earlier one, then the closer one."""
    return (order, distance)


def first(matches: Iterable[R]) -> R | None:
    """The match that wins by :func:`precedence`, or None."""
    return min(matches, key=lambda m: precedence(m.order, m.distance), default=None)


def earliest(
    candidates: Iterable[Candidate], verify: Verify, oldest_ts: int, before_order: int | None = None
) -> tuple[Candidate, float] | None:
    """The winning verified candidate (and its similarity) among those before ``before_order``.

    Candidates are verified in :func:`precedence` order and the first that passes ends the
    search, so most events verify one or two candidates, however many they were near.
    """
    for candidate in sorted(candidates, key=lambda c: precedence(c.entry.order, c.distance)):
        if before_order is not None and candidate.entry.order >= before_order:
            break
        if candidate.entry.ts < oldest_ts:
            continue
        similarity = verify(candidate)
        if similarity is not None:
            return candidate, similarity
    return None


def is_later_match(probe_ts: int, candidate: Candidate, verify: Verify, retention_ms: int) -> float | None:
    """Whether the probing event is a match of ``candidate``, stored but later in arrival order:
    within the candidate's retention window and verified (the similarity, or None)."""
    if probe_ts < candidate.entry.ts - retention_ms:
        return None
    return verify(candidate)


def found_by(plan: Plan, probe: Fingerprint, stored: Fingerprint) -> list[str]:
    """Where the index meets two fingerprints: the block tables whose keys they share (when
    both are in the tables), and the exact keys (a very short text's exact hash, or the
    opening and closing anchors; word bands; a short text's band and edge keys; a longer text's
    header leads) they share, and the stored text's keys that the probe's lookups (inner edges,
    halves, reach keys) find."""
    keys = zip(plan.keys(probe.simhash), plan.keys(stored.simhash), strict=True)
    tabled = probe.in_tables and stored.in_tables
    tables = [f"table {t}" for t, (a, b) in enumerate(keys) if a == b] if tabled else []
    shared = set(probe.exact_keys) & set(stored.exact_keys)
    if probe.exact is not None:
        found = tables + (["exact text"] if probe.exact in shared else [])
    else:
        found = tables + [f"anchor {i}" for i, key in enumerate(probe.anchors) if key in shared]
    found += [f"word band {i}" for i, key in enumerate(probe.word_bands) if key in shared]
    found += [f"short key {i}" for i, key in enumerate(probe.bands) if key in shared]
    found += [f"header lead {i}" for i, key in enumerate(probe.heads) if key in shared]
    stored_keys = set(stored.stored_keys)
    return found + [f"lookup {i}" for i, key in enumerate(probe.lookups) if key in stored_keys]
