"""How far every input partition has been decided, so that held verdicts can go out early.

A verdict is held (:mod:`worker.stream.hold`) for a note from an event *earlier* in the total
order (append time, partition, offset) that a later batch may still bring. While one worker
owns every partition, notes only come from its own batches, and input appended with
LogAppendTime has non-decreasing append times within a partition. Once a batch holding a
record of partition *p* appended at time *t* has been applied in full (indexed, its notes
handed to the verdict stage), every record of *p* appended before *t* has been too. So when
every input partition has been applied past an event's append time, no event before it can
still come and its verdict need not wait out the rest of ``allowed_lateness_ms``.

The hold's timer still releases what this cannot: with other workers (whose notes come
through Kafka at any time), an input partition with nothing new, or a batch that failed.
Batches may finish out of order; a batch counts only once those before it have finished.

The converse holds a verdict *longer* (:meth:`Frontier.lagging_ms`): a lone worker catching up
on a backlog fetches each partition in chunks, and one partition's chunk can end earlier in
append time than another's. Its next chunk is on the broker, not yet read, so an original in it
would come after a copy decided from the other partitions: a correction. While a partition's
log reaches past what has been applied of it, its applied append time bounds what may go.

The index expires time buckets by the same knowledge (:meth:`Frontier.settled_ms`), but only
once the worker has been alone for a while: shares that other workers, or this one before
the assignment, sent through Kafka may still be on their way, and an expired bucket, unlike
a verdict sent early, cannot be corrected. They get the index's reorder window, as before.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from topology.stages import append_ms
from worker.stream.batches import Message


@dataclass
class Ticket:
    """One input batch under way: the latest append time (ms) of each input partition in it."""

    latest: dict[int, int]
    ends: dict[int, int] = field(default_factory=dict)  # each partition's offset after its last record in it
    finished: bool = False


class Frontier:
    """The append time before which every input partition's records have been applied, or None."""

    def __init__(
        self, partitions: int, settle_after_s: float = 0.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.partitions = partitions
        self.settle_after_s = settle_after_s
        self._clock = clock
        self._sole = False
        self._sole_since = 0.0
        self._applied: dict[int, int] = {}
        self._ends: dict[int, int] = {}  # the offset after each partition's last applied record
        self._under_way: deque[Ticket] = deque()  # every batch taken and not finished, in order

    def reset(self, sole: bool, partitions: int | None = None) -> None:
        """A new assignment: what other workers did meanwhile is unknown, so start again, and
        only while this worker owns every partition (``sole``) of the input's ``partitions``
        (unchanged when None). Batches still under way from before count for nothing, but
        still hold back the batches taken after them."""
        self._sole = sole
        self.partitions = self.partitions if partitions is None else partitions
        self._sole_since = self._clock()
        self._applied.clear()
        self._ends.clear()
        for ticket in self._under_way:
            ticket.latest, ticket.ends = {}, {}

    def begin(self, latest: dict[int, int], ends: dict[int, int] | None = None) -> Ticket:
        """A batch taken, in the order batches are taken; each must reach :meth:`finish`.
        ``latest``: each partition's latest append time in it; ``ends``, the offset after each
        one's last record (both from :func:`appended`)."""
        ticket = Ticket(latest, ends or {}) if self._sole else Ticket({})
        self._under_way.append(ticket)
        return ticket

    def finish(self, ticket: Ticket, applied: bool) -> bool:
        """A batch ended; ``applied`` False (it failed, or was cancelled) stops early releases
        until the next assignment. True when the frontier moved."""
        if not applied:
            self.reset(sole=False)
        ticket.finished = True
        moved = False
        while self._under_way and self._under_way[0].finished:
            done = self._under_way.popleft()
            for partition, ms in done.latest.items():
                if ms > self._applied.get(partition, -1):
                    self._applied[partition] = ms
                    moved = True
            for partition, end in done.ends.items():
                self._ends[partition] = max(end, self._ends.get(partition, 0))
        return moved

    def caught_up_ms(self) -> int | None:
        """Every input partition has been applied past this append time (an event appended
        before it has no earlier event still to come), or None when that is not known."""
        if not self._sole or len(self._applied) < self.partitions:
            return None
        return min(self._applied.values())

    def lagging_ms(self, highwaters: Callable[[], Mapping[int, int]]) -> int | None:
        """The least append time applied of an input partition whose log reaches past what has
        been applied of it (``highwaters``: the offset after each partition's newest record, as
        far as known; read only while alone), or None when none is known to lag. A partition
        with nothing applied yet has no offset to compare, and is not known to lag."""
        if not self._sole:
            return None
        last = highwaters()
        behind = [
            self._applied[partition]
            for partition, end in self._ends.items()
            if partition in self._applied and end < last.get(partition, end)
        ]
        return min(behind, default=None)

    def settled_ms(self) -> int | None:
        """:meth:`caught_up_ms` once this worker has owned every partition for
        ``settle_after_s``: what the index may expire by (see the module docstring)."""
        if self._clock() - self._sole_since < self.settle_after_s:
            return None
        return self.caught_up_ms()


def appended(messages: Iterable[Message]) -> tuple[dict[int, int], dict[int, int]]:
    """Each partition's latest append time (ms, as the total order takes it) among ``messages``,
    and the offset after its last one (where its next record would be): a batch's :class:`Ticket`."""
    latest: dict[int, int] = {}
    ends: dict[int, int] = {}
    for message in messages:
        partition, ms = message.partition, append_ms(message.timestamp)
        if ms > latest.get(partition, -1):
            latest[partition] = ms
        if message.offset >= ends.get(partition, 0):
            ends[partition] = message.offset + 1
    return latest, ends
