"""Exactly-once outputs: each outbox entry and its deletion published in one Kafka transaction.

With ``NEARDUP_PROCESSING_GUARANTEE=exactly_once`` the verdict stage's outbox
(:mod:`worker.outbox`) does not send an entry's records and log its deletion later, as
at-least-once does (a crash between the two re-sends the entry). It writes the records and
the changelog record that deletes the entry in one transaction: a ``read_committed``
consumer sees both or neither, and the restore (which reads changelogs ``read_committed``
too) sends again exactly the entries whose transaction did not commit.

Why not Faust's own ``processing_guarantee="exactly_once"``: it ties a transaction to the
consumer's offset commit and sends only what goes through ``Topic.send`` inside it, while
our outputs leave after their changelog record is acknowledged, from the outbox; and its
open issues report duplicates under read_committed, crashes on rebalance and at startup
(docs/reliability.md). Input offsets need no transaction here: a replayed input whose
verdict exists is recognised by its order (:meth:`worker.gather.Published.answered`) and
publishes nothing.

One transactional producer per verdict partition, with a transactional id derived from the
partition: a new owner that opens it fences the previous owner (a zombie's open
transaction is aborted), so two workers never both publish a partition's entries.
"""

from __future__ import annotations

import logging
import uuid
from typing import Any

from aiokafka import AIOKafkaProducer

from topology import codec

log = logging.getLogger("neardup.worker")

# (topic, key, value) of one output record.
Record = tuple[str, bytes, bytes]


class Transactions:
    """The transactional producers of the verdict partitions this worker owns."""

    def __init__(self, bootstrap: str, client_kwargs: dict[str, Any], prefix: str, changelog: str) -> None:
        self._bootstrap = bootstrap
        self._kwargs = client_kwargs
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
            bootstrap_servers=self._bootstrap,
            transactional_id=self.transactional_id(partition),
            enable_idempotence=True,
            acks="all",
            linger_ms=2,
            **self._kwargs,
        )
        await producer.start()
        self._producers[partition] = producer

    async def publish(self, partition: int, records: list[Record], outbox_key: str) -> None:
        """Send ``records`` and the changelog record deleting ``outbox_key``, all or nothing."""
        producer = self._producers[partition]
        deletion = codec.dumps([[outbox_key, None]])
        async with producer.transaction():
            for topic, key, value in records:
                await producer.send(topic, value, key=key)
            await producer.send(self._changelog, deletion, key=uuid.uuid4().hex.encode(), partition=partition)

    async def close(self, partition: int) -> None:
        """Give up ``partition`` (revoked): an open transaction of it is aborted."""
        producer = self._producers.pop(partition, None)
        if producer is not None:
            await producer.stop()

    async def close_all(self) -> None:
        for partition in list(self._producers):
            await self.close(partition)
