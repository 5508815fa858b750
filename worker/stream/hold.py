"""Verdicts decided and logged, waiting out ``allowed_lateness_ms`` before they go out.

The verdict stage decides an event the moment its gather completes and writes that verdict
and its outbox entry with the batch (:mod:`worker.state.verdicts`). What the lateness hold
delays is only the *send*: a note that arrives meanwhile, naming an earlier original,
revises the stored verdict instead of publishing a correction after it. Deciding early
means the store is written once an event (its first verdict), not twice (a held gather
state, then the verdict), and the timer that ends holds only hands entries to the outbox.

An entry goes out when its hold has run out *and* the changelog has acknowledged every
record it depends on: the one that stored it and any that revised one of its verdicts since
(``seq``, the partition's :attr:`~worker.state.verdicts.VerdictPartition.taken` count). So,
as for every output, nothing is sent that a restore could decide differently; a restore
sends what the store's outbox holds at once, held or not.

A lone worker catching up on a backlog holds an entry past its due time while an input
partition it has not read to the end is behind the entry in append time
(:meth:`~worker.stream.frontier.Frontier.lagging_ms`): that partition's next chunk may hold an
earlier original. Only an entry whose inputs are :data:`BEHIND_MS` old waits so, for at most
:data:`LAG_HOLD_MS` more: a live stream keeps the hold the operator set.

One :class:`Hold` per verdict partition, in memory; entries leave in the order they came.
"""

from __future__ import annotations

import functools
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

from topology.verdicts import Output, Published

# An entry whose newest input was appended this long ago comes from a worker catching up: a
# live worker decides within tens of milliseconds, and its verdicts keep the hold it was set.
BEHIND_MS = 1000
# The longest a lagging partition holds an entry past its due time: a partition whose log ends
# in records it never applies (transaction markers) would otherwise look behind for ever.
LAG_HOLD_MS = 5000


@dataclass
class HeldEntry:
    """One batch's held outputs: its outbox key, when its hold ends, the ids it publishes, and
    when the latest of their inputs was appended (None: unknown; only ``due_ms`` ends its hold).

    An id appears once per output: a re-sent copy of a held id publishes its verdict again.
    """

    key: str
    due_ms: int
    seq: int
    ids: list[str]
    last_ms: int | None = None
    lagged: bool = False  # kept past its due time for a lagging input partition


class Due(NamedTuple):
    """A held entry that may go out: its outbox key, its outputs, and what ended its hold:
    ``early`` (before it ran out: no earlier event could change it any more), ``due`` (it ran
    out, or shutdown), or ``lag`` (it ran out while a lagging input partition kept it longer)."""

    key: str
    outputs: list[Output]
    by: str


class Hold:
    """The held outbox entries of one verdict partition, and the verdicts they will send."""

    def __init__(self) -> None:
        self._entries: deque[HeldEntry] = deque()
        self._verdicts: dict[str, Published] = {}
        self._entry_of: dict[str, HeldEntry] = {}

    def __bool__(self) -> bool:
        return bool(self._entries)

    def holds(self, event_id: str) -> bool:
        """Whether ``event_id``'s first verdict is decided but not sent yet."""
        return event_id in self._verdicts

    def add(self, entry: HeldEntry, verdicts: dict[str, Published]) -> None:
        """Hold ``entry``; ``verdicts`` are the first verdicts it decided (copies of ids held
        earlier name no new verdict)."""
        if self._entries and entry.due_ms < self._entries[-1].due_ms:
            entry.due_ms = self._entries[-1].due_ms  # the wall clock stepped back: keep the order
        self._entries.append(entry)
        for event_id, published in verdicts.items():
            self._verdicts[event_id] = published
            self._entry_of[event_id] = entry

    def revise(self, event_id: str, published: Published, seq: int) -> None:
        """``event_id``'s held verdict changed in batch ``seq``: its entry waits for that record
        (and so do later entries republishing it: entries leave in order)."""
        self._verdicts[event_id] = published
        entry = self._entry_of[event_id]
        entry.seq = max(entry.seq, seq)

    def take_due(
        self,
        now_ms: int,
        settled_seq: int,
        stored: Callable[[str], Published | None],
        everything: bool = False,
        caught_up_ms: int | None = None,
        lagging_ms: Callable[[], int | None] | None = None,
    ) -> list[Due]:
        """Entries whose hold ran out and whose records are acknowledged, oldest first; with
        ``everything``, held ones too (shutdown).

        ``stored`` reads a verdict this hold no longer keeps (a copy's entry that outlives its
        first verdict's). ``caught_up_ms``: every input appended before it has been applied
        (:mod:`worker.stream.frontier`), so an entry whose inputs all came before it is due
        whatever its hold: no note can change it any more. ``lagging_ms``: the least append time
        applied of an input partition not read to its end, if any; asked only of an entry past
        its due time that a worker catching up decided.
        """
        due: list[Due] = []
        lagging = functools.cache(lagging_ms or unknown)  # asked once, if at all
        while self._entries:
            entry = self._entries[0]
            if entry.seq > settled_seq:
                break
            caught_up = caught_up_ms is not None and entry.last_ms is not None and entry.last_ms < caught_up_ms
            if not (everything or caught_up) and (entry.due_ms > now_ms or _waits_for_lag(entry, now_ms, lagging)):
                break
            self._entries.popleft()
            outputs: list[Output] = []
            for event_id in entry.ids:
                published = self._verdicts.get(event_id) or stored(event_id)
                if published is not None:
                    outputs.append(published.output(event_id))
            for event_id in set(entry.ids):
                if self._entry_of.get(event_id) is entry:
                    del self._entry_of[event_id], self._verdicts[event_id]
            early = entry.due_ms > now_ms and not everything
            due.append(Due(entry.key, outputs, "early" if early else "lag" if entry.lagged else "due"))
        return due


def _waits_for_lag(entry: HeldEntry, now_ms: int, lagging: Callable[[], int | None]) -> bool:
    """Whether ``entry``, due, still waits for a lagging input partition (module docstring)."""
    if entry.last_ms is None or entry.last_ms > now_ms - BEHIND_MS or now_ms >= entry.due_ms + LAG_HOLD_MS:
        return False
    behind = lagging()
    if behind is None or entry.last_ms < behind:
        return False
    entry.lagged = True
    return True


def unknown() -> int | None:
    """An append time not known (the default of what the hold is told)."""
    return None
