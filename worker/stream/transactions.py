"""Exactly-once outputs: each outbox entry and its deletion published in one Kafka transaction.

With ``NEARDUP_PROCESSING_GUARANTEE=exactly_once`` the verdict stage's outbox
(:mod:`worker.stream.outbox`) does not send an entry's records and log its deletion later, as
at-least-once does (a crash between the two re-sends the entry). It writes the records and
the changelog record that deletes the entry in one transaction: a ``read_committed``
consumer sees both or neither, and the restore (which reads changelogs ``read_committed``
too) sends again exactly the entries whose transaction did not commit.

Why not Faust's own ``processing_guarantee="exactly_once"``: it ties a transaction to the
consumer's offset commit and sends only what goes through ``Topic.send`` inside it, while
our outputs leave after their changelog record is acknowledged, from the outbox; and its
open issues report duplicates under read_committed, crashes on rebalance and at startup
(docs/reliability.md). Input offsets need no transaction here: a replayed input whose
verdict exists is recognised by its order (:meth:`topology.verdicts.Published.answered`) and
publishes nothing.

One transactional producer per verdict partition, with a transactional id derived from the
partition: a new owner that opens it fences the previous owner (a zombie's open
transaction is aborted), so two workers never both publish a partition's entries. Each
partition publishes on its own, one transaction at a time, taking every entry queued for
it meanwhile: under load a transaction carries several batches' outputs, and partitions do
not wait for each other's commits.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from aiokafka import AIOKafkaProducer

from topology import codec
from topology.verdicts import Output
from worker.stream.outbox import encode

log = logging.getLogger("neardup.worker")

# (topic, key, value) of one output record.
Record = tuple[str, bytes, bytes]


class Transactions:
    """The transactional producers of the verdict partitions this worker owns."""

    def __init__(self, client: dict[str, Any], prefix: str, changelog: str) -> None:
        self._client = client  # aiokafka's connection keywords (worker.stream.connection)
        self._prefix = prefix
        self._changelog = changelog
        self._producers: dict[int, AIOKafkaProducer] = {}

    def transactional_id(self, partition: int) -> str:
        return f"{self._prefix}-verdict-{partition}"

    async def open(self, partition: int) -> None:
        """Own ``partition``'s transactional id: fences and aborts whatever a previous owner left open.

        Call before restoring the partition, so that its changelog's stable end is not held
        back by a dead owner's transaction.
        """
        if partition in self._producers:
            return
        producer = AIOKafkaProducer(
            transactional_id=self.transactional_id(partition),
            enable_idempotence=True,
            acks="all",
            linger_ms=2,
            **self._client,
        )
        await producer.start()
        self._producers[partition] = producer

    async def publish(self, partition: int, records: list[Record], outbox_keys: list[str]) -> None:
        """Send ``records`` and the changelog record deleting ``outbox_keys``, all or nothing."""
        producer = self._producers[partition]
        deletion = codec.dumps([[key, None] for key in outbox_keys])
        async with producer.transaction():
            for topic, key, value in records:
                await producer.send(topic, value, key=key)
            await producer.send(self._changelog, deletion, key=uuid.uuid4().hex.encode(), partition=partition)

    async def close(self, partition: int) -> None:
        """Give up ``partition`` (revoked): a transaction left open is aborted by its next owner.

        The producer is detached before the first await, so an :meth:`open` of the partition
        right after this call makes a new one, whose start fences the old.
        """
        producer = self._producers.pop(partition, None)
        if producer is not None:
            await producer.stop()

    async def close_all(self) -> None:
        for partition in list(self._producers):
            await self.close(partition)


class TransactionalOutbox:
    """:class:`worker.stream.outbox.Outbox`'s part when outputs are exactly once: durable entries go
    out in transactions, each with the deletion of the entries it carries.

    ``begin(partition)`` runs before a transaction and ``done(partition, keys)`` after it
    commits: the stage keeps the store marked dirty in between, so a crash before the local
    delete rebuilds it from the changelog rather than sending the entries again.
    """

    def __init__(
        self,
        transactions: Transactions,
        topic_of: Mapping[str, str],
        begin: Callable[[int], object],
        done: Callable[[int, list[str]], None],
        on_failed: Callable[[BaseException], None],
        on_sent: Callable[[list[Output]], None],
    ) -> None:
        self._transactions = transactions
        self._on_sent = on_sent
        self._topic_of = topic_of
        self._begin = begin
        self._done = done
        self._on_failed = on_failed
        self._queues: dict[int, list[tuple[str, list[Output]]]] = defaultdict(list)
        self._tasks: dict[int, asyncio.Task[None]] = {}
        self._settled = asyncio.Event()
        self._settled.set()
        # Bumped when a partition is given up: a transaction begun before that may fail (fenced
        # by the partition's next owner, perhaps this worker again); its entries are then the
        # next owner's, who sends them from its restored outbox.
        self._generation: dict[int, int] = defaultdict(int)
        # Keys queued or in a transaction, per partition: the same entry can be emitted twice
        # (by its batch's durable callback and by a restore that found it unsent), and
        # must be published once.
        self._keys: dict[int, set[str]] = defaultdict(set)
        self._failed = False

    def emit(self, partition: int, key: str, outputs: list[Output]) -> None:
        if self._failed:
            return  # the worker is stopping; the entry stays in the store and is sent after restore
        if key in self._keys[partition]:
            return
        self._keys[partition].add(key)
        self._queues[partition].append((key, outputs))
        self._settled.clear()
        if partition not in self._tasks:
            self._tasks[partition] = asyncio.ensure_future(self._run(partition))

    async def _run(self, partition: int) -> None:
        try:
            while self._queues.get(partition):
                entries = self._queues.pop(partition)
                generation = self._generation[partition]
                keys = [key for key, _ in entries]
                records = [(self._topic_of[o[0]], *encode(o)) for _, outputs in entries for o in outputs]
                self._begin(partition)
                try:
                    await self._transactions.publish(partition, records, keys)
                except Exception as exc:
                    if generation != self._generation[partition]:  # given up since: fenced or closed
                        self._drop_keys(partition, generation, keys)
                        log.info(
                            "%d outbox entries of partition %d left to its new owner (%s)", len(keys), partition, exc
                        )
                        continue
                    self._fail(exc)
                    return
                self._done(partition, keys)
                self._on_sent([o for _, outputs in entries for o in outputs])
                self._drop_keys(partition, generation, keys)
        finally:
            self._tasks.pop(partition, None)
            if not self._tasks and not any(self._queues.values()):
                self._settled.set()

    def _drop_keys(self, partition: int, generation: int, keys: list[str]) -> None:
        if generation == self._generation[partition]:
            self._keys[partition].difference_update(keys)

    def _fail(self, exc: BaseException) -> None:
        if not self._failed:
            self._failed = True
            self._queues.clear()
            self._settled.set()
            self._on_failed(exc)

    async def settled(self) -> None:
        """Wait until every queued entry is committed (or the outbox failed): the stage's backpressure."""
        await self._settled.wait()

    def take_acked(self, partition: int) -> list[str]:
        """Nothing for the stage to delete: each transaction deleted its entries."""
        return []

    def acked_partitions(self) -> set[int]:
        return set()

    def forget(self, partitions: Iterable[int]) -> None:
        for partition in set(partitions):
            self._generation[partition] += 1
            self._queues.pop(partition, None)
            self._keys.pop(partition, None)

    async def close(self) -> None:
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._tasks.clear()
