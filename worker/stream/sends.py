"""Every record a worker writes goes through the app's one producer, from here.

Straight to Faust's producer, not through ``Topic.send``, which wraps every record in a
FutureMessage with callbacks and sensors (most of the stages' send cost, profiled); the
producer is the same, so Faust's flush before committing offsets covers these records too.
"""

from __future__ import annotations

import asyncio
import base64
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import faust

from topology import codec
from topology.stages import Topics
from worker.settings import Settings
from worker.stream import shutdown
from worker.stream.metrics import Metrics

log = logging.getLogger("neardup.worker")

# The future a send returns: awaited, the broker's acknowledgement (record metadata).
Delivery = Awaitable[Any]


class Sends:
    """The worker's writes: internal hops, changelogs, outputs and dead letters."""

    def __init__(self, app: faust.App, settings: Settings, metrics: Metrics) -> None:
        self.app = app
        self.settings = settings
        self.names = Topics(settings.topic_prefix)
        self.metrics = metrics
        self.outputs = {
            "unique": self.names.unique,
            "duplicates": self.names.duplicates,
            "corrections": self.names.corrections,
            "deadletter": self.names.deadletter,
        }

    async def send(self, topic: str, key: bytes | None, value: bytes, partition: int | None = None) -> Delivery:
        """Hand one record to the producer; returns its delivery future."""
        return await self.app.producer.send(topic, key, value, partition, None, None)

    async def dead_letter(self, values: Sequence[bytes], keys: Sequence[bytes | None] | None = None) -> None:
        """Send dead letters, each keyed by ``keys`` or else by the event id it names, or its
        input record's key (producers key by id), as the outputs are: a consumer finds an id's
        records by key."""
        records = [codec.loads(value) for value in values]
        self.metrics.dead(str(record.get("reason", "")) for record in records)
        for i, value in enumerate(values):
            await self.send(self.names.deadletter, keys[i] if keys else _key_of(records[i]), value)

    async def output(self, role: str, key: bytes, value: bytes) -> Delivery:
        return await self.send(self.outputs[role], key, value)

    def changelog(self, topic: str) -> Callable[[bytes, bytes, int], Awaitable[Delivery]]:
        """A sender of one store set's changelog records."""

        async def send(key: bytes, value: bytes, partition: int) -> Delivery:
            return await self.send(topic, key, value, partition)

        return send

    def write_failed(self, exc: BaseException) -> None:
        """A changelog or output record was lost: stop this worker; what it did not finish is
        replayed from Kafka (uncommitted batches, outbox entries) by whoever restores next."""
        shutdown.start_deadline(self.settings.shutdown_timeout_s, self.metrics.running, self.app)
        asyncio.ensure_future(self.app.crash(exc))


def _key_of(dead: dict[str, Any]) -> bytes | None:
    """A dead letter's key: the event id it names, else its input record's key, which it holds
    as text or, not being UTF-8, as ``key_b64``."""
    named = dead.get("id", dead.get("key"))
    if isinstance(named, str):
        return named.encode()
    raw = dead.get("key_b64")
    return base64.b64decode(raw) if isinstance(raw, str) else None
