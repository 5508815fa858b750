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
from typing import TYPE_CHECKING, Protocol, TypeVar

if TYPE_CHECKING:  # the rule reads candidates; it needs no store to do so
    from worker.store import Candidate

# The similarity that confirms a candidate (worker.decide.accepts), or None.
Verify = Callable[["Candidate"], "float | None"]


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
