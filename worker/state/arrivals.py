"""The newest event time a store holds, as each event would have seen it in its turn.

Retention is relative to the newest event stored (:mod:`worker.state.buckets`). ``neardup
scan`` stores events in arrival order, so "newest" there is the newest *before* the event at
hand. An index partition of the stream receives shares of events from several input
partitions and workers, not quite in arrival order: a backfill's event eight days newer
than the rest, stored a few milliseconds early, moved the window past a copy's original
before the copy's probe arrived, and the copy was published unique where scan found its
original. So a partition keeps the newest time as a function of arrival: a probe is cut
at the newest event that *arrived before it*, and a bucket expires only once no event that
arrived before its newest overtaker can still come (``window_ms`` of arrival time later, or
as soon as the caller knows that every earlier arrival is stored, as a worker that owns
every partition does: in a backfill, where event time races, a minute of arrivals holds
weeks of event time).

The function is kept as *marks*, one per arrival millisecond at most: (arrival ms, newest
ts stored among events that arrived up to then), both increasing. Events of one millisecond
do not see each other's times; what fell out of the window, or past ``limit`` marks, is
*settled*, one newest time.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left

from topology.stages import order_time

# At most one mark an arrival millisecond: a minute of them at full rate.
MAX_MARKS = 60_000


class Arrivals:
    """Newest event time stored, by arrival order; ``window_ms`` 0 keeps the newest only (scan)."""

    def __init__(self, window_ms: int = 0, limit: int = MAX_MARKS) -> None:
        self.window_ms = window_ms
        self.limit = limit
        self._at = array("q")  # arrival ms of each mark
        self._ts = array("q")  # newest ts stored among arrivals up to that ms
        self.settled: int | None = None  # newest ts of arrivals no event can still come before

    def start(self, newest: int | None) -> None:
        """A store opened: what it holds is settled (a restart forgets the marks)."""
        del self._at[:], self._ts[:]
        self.settled = newest

    def before(self, order: int | None) -> int | None:
        """The newest ts stored among events that arrived before ``order`` (None: any)."""
        if not self._at:
            return self.settled
        i = len(self._at) if order is None else bisect_left(self._at, order_time(order))
        newest = self._ts[i - 1] if i else None
        if newest is None or (self.settled is not None and self.settled > newest):
            return self.settled
        return newest

    def add(self, order: int | None, ts: int) -> None:
        """An event of arrival ``order`` and time ``ts`` was stored (``order`` None: settled at once)."""
        if not self.window_ms or order is None:
            if self.settled is None or ts > self.settled:
                self.settled = ts
            return
        at = order_time(order)
        if self._at and at >= self._at[-1]:  # in arrival order: most adds
            self._add_last(at, ts)
            return
        i = bisect_left(self._at, at)
        prior = self.before(order)
        if prior is not None and ts <= prior:
            return  # an event that arrived earlier was as new
        j = i
        while j < len(self._ts) and self._ts[j] <= ts:
            j += 1  # later marks this one's time overtakes
        if j < len(self._at) and self._at[j] == at:
            return  # its millisecond holds a newer time already
        self._at[i:j] = array("q", [at])
        self._ts[i:j] = array("q", [ts])
        self._settle()

    def _add_last(self, at: int, ts: int) -> None:
        if ts <= self._ts[-1] or (self.settled is not None and ts <= self.settled):
            return  # an event that arrived before it, or in its millisecond, was as new
        if at == self._at[-1]:
            self._ts[-1] = ts
            return
        self._at.append(at)
        self._ts.append(ts)
        if self._at[0] < at - self.window_ms or len(self._at) > self.limit:
            self._settle()

    def settle_before(self, arrival_ms: int) -> bool:
        """Every event that arrived before ``arrival_ms`` has been stored (a lone worker knows
        it, :mod:`worker.stream.frontier`): fold their marks into ``settled`` without waiting
        out the window. True when ``settled`` moved."""
        return self._fold(bisect_left(self._at, arrival_ms))

    def _settle(self) -> None:
        """Fold the marks older than the window (or past the limit) into ``settled``, an
        eighth of them at least at a time, so that the arrays move rarely."""
        cut = max(bisect_left(self._at, self._at[-1] - self.window_ms), len(self._at) - self.limit)
        if cut >= max(1, len(self._at) >> 3):
            self._fold(cut)

    def _fold(self, cut: int) -> bool:
        """Fold the first ``cut`` marks into ``settled``; True when it moved."""
        if not cut:
            return False
        newest = self._ts[cut - 1]
        del self._at[:cut], self._ts[:cut]
        if self.settled is not None and newest <= self.settled:
            return False
        self.settled = newest
        return True
