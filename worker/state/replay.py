"""Reads changelog partitions back: a store's restore, and one record an operator asks about.

One consumer without a group, assigned one partition at a time: both stages restore through
it, and ``/explain`` reads an event's input record with it, so a worker holds one extra
connection whatever it owns.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from aiokafka import AIOKafkaConsumer, TopicPartition

from topology.changelog import decode_ops
from worker.state.flushes import Reassembly

_RESTORE_STALL_S = 120.0


class ChangelogReader:
    """Reads changelog partitions from an offset to their current end (one consumer, no group)."""

    def __init__(self, client: dict[str, Any], read_committed: bool = False) -> None:
        self._client = client  # aiokafka's connection keywords (worker.stream.connection)
        # With exactly-once outputs a changelog also holds transactional records
        # (worker.stream.transactions): an aborted one must not be applied.
        self._isolation = "read_committed" if read_committed else "read_uncommitted"
        self._consumer: AIOKafkaConsumer | None = None
        # Both stages restore through this one consumer; its assignment is one at a time.
        self._lock = asyncio.Lock()

    async def _open(self) -> AIOKafkaConsumer:
        if self._consumer is None:
            consumer = AIOKafkaConsumer(
                group_id=None,
                enable_auto_commit=False,
                auto_offset_reset="earliest",
                isolation_level=self._isolation,
                **self._client,
            )
            await consumer.start()
            self._consumer = consumer
        return self._consumer

    async def end_offset(self, topic: str, partition: int) -> int:
        async with self._lock:
            consumer = await self._open()
            tp = TopicPartition(topic, partition)
            return int((await consumer.end_offsets([tp]))[tp])

    async def replay(self, topic: str, partition: int, start: int, end: int, apply: Callable[[list[Any]], None]) -> int:
        """Apply every record in ``[start, end)``; returns how many records were applied."""
        if start >= end:
            return 0
        async with self._lock:
            return await self._replay(topic, partition, start, end, apply)

    async def _replay(
        self, topic: str, partition: int, start: int, end: int, apply: Callable[[list[Any]], None]
    ) -> int:
        consumer = await self._open()
        tp = TopicPartition(topic, partition)
        consumer.assign([tp])
        consumer.seek(tp, start)
        applied = 0
        last_progress = time.monotonic()
        whole = Reassembly(f"{topic}[{partition}]")
        while await consumer.position(tp) < end:
            batches = await consumer.getmany(tp, timeout_ms=500)
            for record in batches.get(tp, ()):
                if record.offset >= end:
                    break
                if record.value is not None:
                    for ops in whole.feed(record.key, decode_ops(record.value)):
                        apply(ops)
                    applied += 1
                last_progress = time.monotonic()
            if time.monotonic() - last_progress > _RESTORE_STALL_S:
                raise RuntimeError(f"restoring {topic}[{partition}] made no progress for {_RESTORE_STALL_S:.0f} s")
        whole.finish()
        consumer.unsubscribe()
        return applied

    async def record(self, topic: str, partition: int, offset: int, timeout_s: float = 2.0) -> bytes | None:
        """The value of one record (an event the operator asks about), or None once the topic's
        retention has removed it."""
        async with self._lock:
            consumer = await self._open()
            tp = TopicPartition(topic, partition)
            consumer.assign([tp])
            try:
                consumer.seek(tp, offset)
                batches = await consumer.getmany(tp, timeout_ms=int(timeout_s * 1000), max_records=1)
            finally:
                consumer.unsubscribe()
            found = [r for r in batches.get(tp, ()) if r.offset == offset]
            return found[0].value if found else None

    async def close(self) -> None:
        async with self._lock:
            await self._close()

    async def _close(self) -> None:
        if self._consumer is not None:
            await self._consumer.stop()
            self._consumer = None
