"""A Faust stream's events in batches, each started as soon as its spacing allows.

Faust's ``take_events(max, within)`` wakes every ``within`` seconds whether or not anything
arrived, and after a batch it waits a full ``within`` even for events that came in while
the batch ran. With three stages at 3-10 ms windows an idle worker used 0.18-0.20 of a core,
0.12-0.14 with these batches (``bench/idle.py``; Faust's passthrough agent idles at 0.005),
CPU that a shared box's busy moments then lack. :func:`take_batches` sleeps until an event
arrives, and starts a batch once ``spacing`` has passed since the previous one ended: an
event after a quiet spell goes at once, and under load batches still come at most one per
``spacing``, so each stays big enough to keep its messages and changelog records few.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Protocol

import faust
from faust.types import EventT


class Message(Protocol):
    """What a stage reads of one input record (Faust's ``Message`` has it; tests build their own)."""

    @property
    def topic(self) -> str: ...

    @property
    def partition(self) -> int: ...

    @property
    def offset(self) -> int: ...

    @property
    def timestamp(self) -> float: ...

    @property
    def key(self) -> bytes | None: ...

    @property
    def value(self) -> bytes | None: ...


@dataclass(frozen=True)
class Windows:
    """Least time between the end of one batch of a stage and the start of its next (seconds).

    An event that finds its stage idle for longer goes at once; under load each stage adds
    up to its window to an event's latency, and longer windows mean bigger batches, hence
    fewer messages and changelog records per event. ``fingerprint_shared`` replaces
    ``fingerprint`` while other workers own some index partitions: then every batch costs a
    Kafka message per remote partition, and short batches cut two workers' backlog
    throughput (docs/benchmarks.md, "Batch windows").

    The index and verdict stages read from Kafka only what another worker sent them, and
    each such message is already one batch of its sender's: spacing them again only made
    every event crossing between two workers wait up to twice more.

    Under a backlog a fingerprint batch holds only what Faust delivered during the window
    before it, so the costs of a batch came every few events. The window after a backlog's
    batch therefore grows with it (``backlog_per_event`` per event) and at least doubles the
    window before it, at most ``backlog_most``, so batches grow towards the stage's maximum
    while the backlog lasts. Growing with the batch alone was a trap on a slow machine: a
    3 ms window held as few events as Faust delivered in 3 ms, which set the next window
    to 3 ms again, and one worker drained its backlog a few events a batch.
    A batch counts as a backlog's when its oldest event had waited at least
    ``backlog_wait``: batch size alone is no such sign, since at a high but sustainable load
    a batch's size grows with the window that follows it and windows would climb to the cap.
    """

    fingerprint: float = 0.003
    fingerprint_shared: float = 0.02
    backlog_per_event: float = 0.0005
    backlog_most: float = 0.1
    backlog_wait: float = 0.2
    index: float = 0.0
    verdict: float = 0.0

    def after(self, events: int, shared: bool, waited: float, before: float = 0.0) -> float:
        """The fingerprint stage's window after a batch of ``events`` whose oldest had waited
        ``waited`` seconds, taken after a window of ``before`` seconds; ``shared`` while other
        workers own some index partitions."""
        least = self.fingerprint_shared if shared else self.fingerprint
        if waited < self.backlog_wait:
            return least
        return max(least, min(self.backlog_most, max(events * self.backlog_per_event, 2 * before)))


async def take_batches(
    stream: faust.StreamT[bytes], max_events: int, spacing: Callable[[], float]
) -> AsyncIterator[list[EventT]]:
    """Batches of at most ``max_events`` events, at least ``spacing()`` seconds apart.

    The gap runs from the end of one batch (when the loop body returns) to the start of the
    next; a full batch does not wait for it. As with ``take_events``, the stream does not
    ack events on its own: a batch's events are acked once the loop body has returned, so
    the body decides when their offsets may be committed (see :class:`worker.stream.guard.OffsetHolds`);
    a batch whose body never returns is never acked here, and its offsets never committed.
    """
    loop = asyncio.get_running_loop()
    pending: list[EventT] = []
    arrived = asyncio.Event()  # pending is not empty, or the reader ended
    full = asyncio.Event()  # pending holds a whole batch, or the reader ended
    room = asyncio.Event()  # the reader may add more
    room.set()

    async def read() -> None:
        try:
            async for event in stream.events():
                pending.append(event)
                arrived.set()
                if len(pending) >= max_events:
                    full.set()
                    room.clear()
                    await room.wait()
        finally:
            arrived.set()
            full.set()

    acks_enabled = stream.enable_acks
    stream.enable_acks = False
    reader = asyncio.ensure_future(read())
    last_end = float("-inf")
    try:
        while True:
            await arrived.wait()
            if not pending:
                reader.result()  # the reader ended: raise what ended it
                return
            delay = last_end + spacing() - loop.time()
            if delay > 0 and len(pending) < max_events:
                try:
                    await asyncio.wait_for(full.wait(), delay)
                except TimeoutError:
                    pass
            batch = pending[:max_events]
            del pending[:max_events]
            if not reader.done():
                if len(pending) < max_events:
                    full.clear()
                    room.set()
                if not pending:
                    arrived.clear()
            yield batch
            # Only a body that returned: one stopped mid-way (a crash or a stop cancels it,
            # say while it waits for a stage's lock) may not have taken its holds yet, and
            # acking its events then let the stop commit offsets of events never decided.
            for event in batch:
                await stream.ack(event)
            last_end = loop.time()
    finally:
        reader.cancel()
        stream.enable_acks = acks_enabled
