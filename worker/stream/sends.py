"""Every record a worker writes goes through the app's one producer, from here.

Straight to Faust's producer, not through ``Topic.send``, which wraps every record in a
FutureMessage with callbacks and sensors (most of the stages' send cost, profiled); the
producer is the same, so Faust's flush before committing offsets covers these records too.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import faust

from topology.stages import Topics
from worker.settings import Settings
from worker.stream import shutdown

log = logging.getLogger("neardup.worker")

# The future a send returns: awaited, the broker's acknowledgement (record metadata).
Delivery = Awaitable[Any]


@dataclass
class Counters:
    """What this worker did since it started; logged now and then."""

    events: int = 0
    deadlettered: int = 0
    verdicts: int = 0
    republished: int = 0
    replayed: int = 0  # intros of inputs already answered, read again (at-least-once delivery)
    corrections: int = 0
    # Batches being handled now, by stage: records and since when (time.monotonic()); what a
    # shutdown that runs out of time abandons (worker.stream.shutdown).
    in_flight: dict[str, tuple[int, float]] = field(default_factory=dict)

    def running(self) -> str:
        now = time.monotonic()
        busy = [f"{stage}: {n} records for {now - since:.1f} s" for stage, (n, since) in self.in_flight.items()]
        return "; ".join(busy) or "no batch"

    def summary(self) -> str:
        return (
            f"events {self.events}, dead-lettered {self.deadlettered}, verdicts {self.verdicts}, "
            f"republished {self.republished}, replayed {self.replayed}, corrections {self.corrections}"
        )


class Sends:
    """The worker's writes: internal hops, changelogs, outputs and dead letters."""

    def __init__(self, app: faust.App, settings: Settings, counters: Counters) -> None:
        self.app = app
        self.settings = settings
        self.names = Topics(settings.topic_prefix)
        self.counters = counters
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
        self.counters.deadlettered += len(values)
        for i, value in enumerate(values):
            await self.send(self.names.deadletter, keys[i] if keys else None, value)

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
        shutdown.start_deadline(self.settings.shutdown_timeout_s, self.counters.running, self.app)
        asyncio.ensure_future(self.app.crash(exc))
