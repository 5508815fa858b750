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

import faust
from faust.types import EventT


async def take_batches(
    stream: faust.StreamT[bytes], max_events: int, spacing: Callable[[], float]
) -> AsyncIterator[list[EventT]]:
    """Batches of at most ``max_events`` events, at least ``spacing()`` seconds apart.

    The gap runs from the end of one batch (when the loop body returns) to the start of the
    next; a full batch does not wait for it. As with ``take_events``, the stream does not
    ack events on its own: a batch's events are acked once the loop body has returned, so
    the body decides when their offsets may be committed (see ``hold_offsets`` in
    :mod:`worker.stream.worker`).
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
            try:
                yield batch
            finally:
                for event in batch:
                    await stream.ack(event)
                last_end = loop.time()
    finally:
        reader.cancel()
        stream.enable_acks = acks_enabled
