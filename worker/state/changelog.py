"""Stores the worker owns, one per (stage, partition), each backed by a *batched* changelog.

(The index partitions' stores are views of one RocksDB store, :mod:`worker.state.shared`; each
still has its own records and changelog, so nothing here tells them apart.)

A Faust table writes one changelog record per assignment; at a dozen index writes per event
that was most of the worker's Kafka traffic. Here a stage mutates its local RocksDB store
while it processes a batch, collects the logical operations, and writes them as ONE
changelog record per partition for every batch committed within ``group_s`` of the last
write (group commit; split only past 512 KiB). The changelog partition equals the store's source
partition, so a worker that takes a partition over replays exactly that changelog partition.

Crash safety without transactions:

* before a batch touches a store, the store's ``dirty`` flag is set; once every batch that
  touched it has its changelog records acknowledged, the next changelog offset is stored as
  the store's *checkpoint* and the flag is cleared;
* a batch does not wait for that acknowledgement (a round trip per batch was most of a
  stage's latency): :meth:`StoreSet.commit` hands the records to the producer and calls the
  batch's ``on_durable`` when they are acknowledged. The stages ack their source messages to
  Faust only then, so Faust never commits a source offset whose state changes are not in
  Kafka (an unacknowledged message blocks the commit of every later offset of its partition),
  and the verdict stage publishes a batch's outputs only then (:mod:`worker.stream.outbox`);
* a store found dirty when first opened may hold writes that never reached the changelog
  (a crash mid-batch): it is wiped and rebuilt from the whole changelog. Otherwise the
  changelog is replayed from the checkpoint to its end — records written by the worker that
  owned the partition in between — before the partition's first message is processed.

Replaying an operation twice must leave the store as replaying it once (stores re-add the
same entry, or overwrite a key with the value it already has).
"""

from __future__ import annotations

import asyncio
import logging
import shutil
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from topology import codec
from worker.state.flushes import chunk_keys
from worker.state.layout import CHECKPOINT_RECORD, DIRTY_RECORD, TOPIC_RECORD, StoreMismatch
from worker.state.replay import ChangelogReader

log = logging.getLogger("neardup.changelog")


class PartitionStore(Protocol):
    """What :class:`StoreSet` needs of a store: hand over and re-apply logged ops, keep two small records."""

    def apply(self, ops: list[Any]) -> None: ...

    def take_ops(self) -> list[Any]: ...

    def get_record(self, key: str) -> bytes | None: ...

    def put_record(self, key: str, value: bytes) -> None: ...

    def close(self) -> None: ...


S = TypeVar("S", bound=PartitionStore)

# Sends one changelog record to a partition; Faust's ``topic.send`` returns the delivery future.
Send = Callable[[bytes, bytes, int], Awaitable[Awaitable[Any]]]


def close_and_delete(store: PartitionStore, path: Path, stamped: bool = False) -> None:
    """Discard a store that is its own directory (``stamped``: see :class:`StoreSet`)."""
    store.close()
    shutil.rmtree(path, ignore_errors=True)


class StoreSet(Generic[S]):
    """One stage's stores on this worker, ``<root>/<partition>``, each restored before first use."""

    def __init__(
        self,
        root: Path,
        topic: str,
        opener: Callable[[Path], S],
        reader: ChangelogReader,
        group_s: float = 0.0,
        encode: Callable[[list[Any]], list[bytes]] = codec.encode_chunks,
        discard: Callable[[S, Path, bool], None] = close_and_delete,
    ) -> None:
        """``encode`` makes a flush's records of one partition's ops (at most 512 KiB each): the
        index changelog's are :func:`topology.changelog.encode_ops`. ``discard`` empties a
        partition's store before it is rebuilt from its changelog: a store of several
        partitions (:class:`worker.state.shared.SharedIndex`) deletes that partition's part,
        or, ``stamped`` with settings the changelog refuses, all of itself."""
        self.root = root
        self.topic = topic
        self._group_s = group_s
        self._encode = encode
        self._discard = discard
        self._opener = opener
        self._reader = reader
        self._open: dict[int, S] = {}
        self._ready: set[int] = set()
        self.restoring: set[int] = set()  # partitions being caught up with their changelog now
        # Bumped when a partition is given up: a restore that began before must not mark it ready.
        self._generation: dict[int, int] = defaultdict(int)
        # Batches begun on a partition whose changelog records are not acknowledged yet; the
        # store stays dirty while any is, and its checkpoint only moves forward.
        self._unsettled: dict[int, int] = defaultdict(int)
        self._checkpoint: dict[int, int] = {}
        self._settling: set[asyncio.Task[None]] = set()
        # Flushes settle in the order they were made, so ``on_durable`` callbacks run in
        # commit order (the verdict stage's outputs go out in that order).
        self._last_settle: asyncio.Task[None] | None = None
        # Group commit: ops of batches committed within ``group_s`` of the last flush wait in
        # ``_queued`` and go out together, one record per partition per flush.
        self._queued: dict[int, list[Any]] = defaultdict(list)
        self._queued_batches: list[tuple[list[int], Callable[[], None]]] = []
        self._send: Send | None = None
        self._on_failed: Callable[[BaseException], None] | None = None
        self._flush_lock = asyncio.Lock()
        self._flush_timer: asyncio.TimerHandle | None = None
        self._last_flush = 0.0
        self._mismatch: StoreMismatch | None = None  # a changelog these settings cannot restore

    def _path(self, partition: int) -> Path:
        return self.root / str(partition)

    def _store(self, partition: int) -> S:
        store = self._open.get(partition)
        if store is None:
            path = self._path(partition)
            path.parent.mkdir(parents=True, exist_ok=True)
            store = self._opener(path)
            self._open[partition] = store
        return store

    def _wipe(self, partition: int) -> S:
        self._remove(partition, stamped=False)
        return self._store(partition)

    def _remove(self, partition: int, stamped: bool) -> None:
        self._discard(self._open.pop(partition), self._path(partition), stamped)

    async def restore(self, partition: int) -> S:
        """The partition's store, caught up with its changelog (a no-op once caught up this assignment)."""
        if partition in self._ready:
            return self._store(partition)
        if self._mismatch is not None:  # the worker is stopping: open no store its settings would stamp
            raise self._mismatch
        generation = self._generation[partition]
        self.restoring.add(partition)
        try:
            store = await self._catch_up(partition)
        finally:
            self.restoring.discard(partition)
        if generation == self._generation[partition]:
            self._ready.add(partition)
        return store

    async def _catch_up(self, partition: int) -> S:
        if self._unsettled.get(partition):
            await self.drain()  # our own records of this partition must be in the log we replay
        # No batch of a partition that is not ready is under way: a count left over (a record
        # that failed) must not keep a rebuilt store from being marked dirty by the next batch.
        self._unsettled[partition] = 0
        store = self._store(partition)
        self._checkpoint.pop(partition, None)
        end = await self._reader.end_offset(self.topic, partition)
        raw, copied = store.get_record(CHECKPOINT_RECORD), store.get_record(TOPIC_RECORD)
        start = int(raw) if raw else 0
        if copied is not None and copied.decode() != self.topic:
            log.warning("%s[%d]: local store copies %s; rebuilding it", self.topic, partition, copied.decode())
            store, start = self._wipe(partition), 0
        if store.get_record(DIRTY_RECORD) or start > end:
            # Said with its cause: "not a prefix of the changelog" read as corruption to an
            # operator, on a partition that had only moved while a batch was under way.
            why = (
                "it was closed mid-batch (the log holds every acknowledged batch; the store may hold part of one more)"
                if store.get_record(DIRTY_RECORD)
                else f"it is caught up to offset {start}, past the log's end {end} (the log was deleted or cut)"
            )
            log.warning("%s[%d]: rebuilding the local store from the log: %s", self.topic, partition, why)
            store = self._wipe(partition)
            start = 0
        store.put_record(TOPIC_RECORD, self.topic.encode())
        began = time.monotonic()
        try:
            applied = await self._reader.replay(self.topic, partition, start, end, store.apply)
        except StoreMismatch as exc:  # a copy of a log it cannot hold: gone, so the right settings rebuild it
            self._mismatch = exc
            self._remove(partition, stamped=True)
            raise
        store.put_record(CHECKPOINT_RECORD, str(end).encode())
        if applied:
            log.info(
                "%s[%d]: restored %d changelog records (offsets %d..%d) in %.2f s",
                self.topic,
                partition,
                applied,
                start,
                end,
                time.monotonic() - began,
            )
        return store

    def begin(self, partition: int) -> S:
        """Mark a restored store as being changed by a batch whose changelog record is not yet written."""
        store = self._open[partition]
        if not self._unsettled[partition]:
            store.put_record(DIRTY_RECORD, b"1")
        self._unsettled[partition] += 1
        return store

    def settle_unlogged(self, partition: int) -> None:
        """End a change that :meth:`begin` started and that reached the changelog another way
        (an exactly-once outbox transaction): the store is clean again once nothing else is
        under way."""
        self._unsettled[partition] = max(0, self._unsettled[partition] - 1)  # 0 again if restored meanwhile
        store = self._open.get(partition)
        if store is not None and not self._unsettled[partition]:
            store.put_record(DIRTY_RECORD, b"")

    async def commit(
        self,
        ops: dict[int, list[Any]],
        send: Send,
        on_durable: Callable[[], None],
        on_failed: Callable[[BaseException], None],
        urgent: bool = False,
    ) -> None:
        """Queue a batch's ops; they go to the producer as one record per partition per flush,
        and settle in the background.

        A flush happens at once when ``group_s`` has passed since the last one or the batch
        is ``urgent`` (the caller's call: outputs wait for its ``on_durable``, or its records
        must not wait for an offset commit to protect them), else when ``group_s`` will
        have passed. Either way this returns once the ops are queued or handed over. When a
        flush's records are all acknowledged (and every earlier flush has settled), the
        checkpoints move and each of its batches' ``on_durable`` runs, in commit order; if one
        fails, ``on_failed`` runs and
        the partitions stay dirty (``on_durable`` never runs, so those batches' source offsets
        are never committed).
        """
        self._send, self._on_failed = send, on_failed
        for partition, partition_ops in ops.items():
            self._queued[partition].extend(partition_ops)
        self._queued_batches.append((list(ops), on_durable))
        wait = self._last_flush + self._group_s - time.monotonic()
        if urgent or wait <= 0:
            await self.flush()
        elif self._flush_timer is None:
            self._flush_timer = asyncio.get_running_loop().call_later(wait, self._flush_soon)

    def _flush_soon(self) -> None:
        self._flush_timer = None
        self._track(asyncio.ensure_future(self.flush()))

    def _track(self, task: asyncio.Task[None]) -> None:
        self._settling.add(task)
        task.add_done_callback(self._settling.discard)

    async def flush(self) -> None:
        """Hand every queued op to the producer now (one record per partition, split past 512 KiB)."""
        if self._flush_timer is not None:
            self._flush_timer.cancel()
            self._flush_timer = None
        async with self._flush_lock:  # records of one partition must reach the log in order
            self._last_flush = time.monotonic()
            if not self._queued_batches or self._send is None or self._on_failed is None:
                return
            queued, batches = self._queued, self._queued_batches
            self._queued, self._queued_batches = defaultdict(list), []
            pending: list[tuple[int, Awaitable[Any]]] = []
            for partition, partition_ops in queued.items():
                chunks = self._encode(partition_ops)
                for key, chunk in zip(chunk_keys(len(chunks)), chunks, strict=True):
                    pending.append((partition, await self._send(key, chunk, partition)))
            settle = asyncio.ensure_future(self._settle(batches, pending, self._on_failed, self._last_settle))
            self._last_settle = settle
            self._track(settle)

    async def _settle(
        self,
        batches: list[tuple[list[int], Callable[[], None]]],
        pending: list[tuple[int, Awaitable[Any]]],
        on_failed: Callable[[BaseException], None],
        previous: asyncio.Task[None] | None,
    ) -> None:
        if previous is not None:
            await asyncio.wait([previous])
        try:
            for partition, future in pending:
                metadata = await future
                self._checkpoint[partition] = max(self._checkpoint.get(partition, 0), metadata.offset + 1)
        except Exception as exc:
            log.error("%s: a changelog record was not acknowledged (%s); its batch stays uncommitted", self.topic, exc)
            on_failed(exc)
            return
        touched: set[int] = set()
        for partitions, _ in batches:
            for partition in partitions:
                self._unsettled[partition] -= 1
                touched.add(partition)
        for partition in touched:
            store = self._open.get(partition)
            if store is None:
                continue
            if partition in self._checkpoint:
                store.put_record(CHECKPOINT_RECORD, str(self._checkpoint[partition]).encode())
            if not self._unsettled[partition]:
                store.put_record(DIRTY_RECORD, b"")
        for _, on_durable in batches:
            on_durable()

    async def drain(self) -> None:
        """Flush, then wait until every changelog record handed to the producer is acknowledged (or failed)."""
        await self.flush()
        while self._settling:
            await asyncio.gather(*list(self._settling), return_exceptions=True)

    def forget(self, partitions: Iterable[int]) -> None:
        """Partitions no longer owned: another worker may write their changelog meanwhile."""
        for partition in partitions:
            self._ready.discard(partition)
            self._generation[partition] += 1

    def owned(self) -> set[int]:
        return set(self._ready)

    def owned_store(self, partition: int) -> S | None:
        """The store of a partition this worker owns and has restored, else None."""
        return self._open.get(partition) if partition in self._ready else None

    def open_store(self, partition: int) -> S | None:
        """The store of a partition, restored or not (None if never opened here)."""
        return self._open.get(partition)

    def close(self) -> None:
        if self._flush_timer is not None:
            self._flush_timer.cancel()
            self._flush_timer = None
        for store in self._open.values():
            store.close()
        self._open.clear()
        self._ready.clear()
        self._unsettled.clear()
        self._checkpoint.clear()
