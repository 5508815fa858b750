"""Output records go to Kafka only once the changelog holds what decides them.

Why: a verdict sent before its store change is durable can be decided a second time after a
crash, and the second decision may differ from the first (whether an earlier original from
another partition reached the gather before the hold ran out is a matter of timing). So the
verdict stage writes each batch's outputs into its store as one outbox entry per partition
(logged with the batch, :meth:`worker.state.verdicts.VerdictPartition.put_outbox`), and
hands the entry to :class:`Outbox` when the changelog has acknowledged it. The outbox sends
entries in that order, one at a time, and reports the entries whose records every output
partition acknowledged; the stage then deletes those (logged too). A worker that restores
a partition sends again whatever its outbox still holds, so a crash can repeat a record,
byte for byte, but never publish one that the stores do not know.

With exactly-once outputs, :class:`worker.stream.transactions.TransactionalOutbox` takes this
class's place: an entry's records and its deletion go out in one Kafka transaction.

Verdicts held by ``allowed_lateness_ms`` are no exception: their entry is logged with the
batch that decided them, and handed over once their hold has run out and that record (and
any that revised them meanwhile) is acknowledged (:mod:`worker.stream.hold`).
"""

from __future__ import annotations

import asyncio
from collections import defaultdict, deque
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from topology import codec
from topology.verdicts import Output

# Sends one record to an output topic (by role: unique, duplicates, corrections); returns
# the delivery future, as Faust's ``topic.send`` does.
Send = Callable[[str, bytes, bytes], Awaitable[Awaitable[Any]]]


def encode(output: Output) -> tuple[bytes, bytes]:
    """An output's Kafka key (the event id) and value; the same output always gives the same bytes."""
    _, event_id, value = output
    return event_id.encode(), codec.dumps(value)


class Outbox:
    """Durable outputs on their way to the output topics, in the order they became durable."""

    def __init__(
        self,
        send: Send,
        on_failed: Callable[[BaseException], None],
        on_sent: Callable[[list[Output]], None] = lambda outputs: None,
    ) -> None:
        self._send = send
        self._on_failed = on_failed
        self._on_sent = on_sent  # told of each entry's outputs once the broker acknowledged them all
        self._queue: deque[tuple[int, str, list[Output]]] = deque()
        self._wake = asyncio.Event()
        self._settled = asyncio.Event()  # nothing queued, sent or unacknowledged
        self._settled.set()
        self._sender: asyncio.Task[None] | None = None
        self._sending = False
        self._acking: set[asyncio.Task[None]] = set()
        self._acked: dict[int, list[str]] = defaultdict(list)
        self._failed = False

    def emit(self, partition: int, key: str, outputs: list[Output]) -> None:
        """Queue the outbox entry ``key`` of ``partition`` for sending: its changelog record is
        acknowledged, or (a released held verdict, module doc) the state that decides it is."""
        if self._failed:
            return  # the worker is stopping; the entry stays in the store and is sent after restore
        self._queue.append((partition, key, outputs))
        self._settled.clear()
        self._wake.set()
        if self._sender is None:
            self._sender = asyncio.ensure_future(self._run())

    async def _run(self) -> None:
        while True:
            while not self._queue:
                if not self._acking:
                    self._settled.set()
                self._wake.clear()
                await self._wake.wait()
            partition, key, outputs = self._queue.popleft()
            self._sending = True
            try:
                futures = []
                for output in outputs:
                    record_key, value = encode(output)
                    futures.append(await self._send(output[0], record_key, value))
            except Exception as exc:
                self._fail(exc)
                return
            finally:
                self._sending = False
            task = asyncio.ensure_future(self._wait_acks(partition, key, futures, outputs))
            self._acking.add(task)
            task.add_done_callback(self._ack_done)

    def _ack_done(self, task: asyncio.Task[None]) -> None:
        self._acking.discard(task)
        if not self._acking and not self._queue and not self._sending:
            self._settled.set()

    async def _wait_acks(self, partition: int, key: str, futures: list[Awaitable[Any]], outputs: list[Output]) -> None:
        try:
            for future in futures:
                await future
        except Exception as exc:
            self._fail(exc)
            return
        self._acked[partition].append(key)
        self._on_sent(outputs)

    def _fail(self, exc: BaseException) -> None:
        if not self._failed:
            self._failed = True
            self._queue.clear()
            self._settled.set()
            self._on_failed(exc)

    async def settled(self) -> None:
        """Wait until every queued entry is sent and acknowledged (or the outbox failed).

        This is the verdict stage's backpressure, and what shutdown waits for. The stage waits
        here before a batch, as it used to wait on its own sends. Without it the stage rarely
        let the event loop run mid-batch; a stage's input buffer (:mod:`worker.stream.batches`) fills
        only then, so under a backlog input batches shrank from ~125 events to ~25 at
        a higher cost an event (one worker in ``bench/stream_hops.py --rate 0``: 540-690
        against 810-860 events/s), while durable outputs queued up unsent.
        """
        await self._settled.wait()

    def take_acked(self, partition: int) -> list[str]:
        """Outbox keys of ``partition`` whose every record is acknowledged (each returned once)."""
        return self._acked.pop(partition, [])

    def acked_partitions(self) -> set[int]:
        return {partition for partition, keys in self._acked.items() if keys}

    def forget(self, partitions: Iterable[int]) -> None:
        """Partitions another worker owns now: it sends and deletes their entries after its restore."""
        gone = set(partitions)
        for partition in gone:
            self._acked.pop(partition, None)
        self._queue = deque(entry for entry in self._queue if entry[0] not in gone)

    async def close(self) -> None:
        if self._sender is not None:
            self._sender.cancel()
            await asyncio.gather(self._sender, return_exceptions=True)
            self._sender = None
