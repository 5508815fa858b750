"""One block index for every index partition a worker owns.

An event's slots are routed to index partitions one by one, so an event reaches almost every
partition (3.98 of 4 on the dev stream). With a store per partition, a worker that owns several
looked each event up, stored its entry and verified it once per partition. Sharing one
:class:`BlockIndex`, the index stage handles an event's shares of all of them as one: one lookup
of its exact keys, one entry, one add (docs/benchmarks.md, "One store for the partitions a
worker owns").

Nothing else changes: a slot belongs to one partition, so the rows under a partition's slots
are exactly those its own store would hold; each partition keeps its own changelog, checkpoint
and dirty flag (records under ``p<n>:``), is restored from its own changelog, and is handed
to another worker as before. Only the wipe differs. A store found dirty at start (a crash
mid-batch) is deleted whole, every partition then replayed from its changelog; a partition
that must be rebuilt later (its log was cut, or copies another deployment's) has its rows
deleted (:meth:`BlockIndex.delete_keys`), a walk of the whole store.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Callable
from pathlib import Path

from topology.stages import EXACT, TABLE, slot_partition
from worker.state.index import BlockIndex
from worker.state.layout import CHECKPOINT_RECORD, DIRTY_RECORD, TOPIC_RECORD
from worker.state.partition import IndexPartition

log = logging.getLogger("neardup.worker")

SHARED_DIR = "shared"  # beside the numbered stores of one partition each, as workers before kept them


class SharedIndex:
    """The store under ``root``, opened at the first partition asked for (:meth:`partition`)."""

    def __init__(self, root: Path, partitions: int, topic: str, opener: Callable[[Path], BlockIndex]) -> None:
        self.root, self.partitions, self.topic = root, partitions, topic
        self._opener = opener
        self._index: BlockIndex | None = None

    @property
    def index(self) -> BlockIndex:
        if self._index is None:
            self._index = self._open()
        return self._index

    def partition(self, partition: int) -> SharedPartition:
        return SharedPartition(self, partition)

    def _open(self) -> BlockIndex:
        path = self.root / SHARED_DIR
        for old in sorted(self.root.glob("[0-9]*")):
            log.warning("%s: an index store of one partition, as earlier workers kept them: removed", old)
            shutil.rmtree(old, ignore_errors=True)
        index = self._opener(path)
        stale = [part for part in range(self.partitions) if self._stale(index, part)]
        if stale:
            log.warning(
                "%s: rebuilding the index store from the changelog: partitions %s were closed mid-batch "
                "or copy another changelog than %s",
                path,
                stale,
                self.topic,
            )
            index.close()
            shutil.rmtree(path)
            index = self._opener(path)
        return index

    def _stale(self, index: BlockIndex, partition: int) -> bool:
        records = records_of(partition)
        topic = index.get_record(records + TOPIC_RECORD)
        return bool(index.get_record(records + DIRTY_RECORD)) or (topic is not None and topic.decode() != self.topic)

    def close(self) -> None:
        if self._index is not None:
            self._index.close()
            self._index = None

    def delete(self) -> None:
        """Close the store and delete its directory (its partitions' views are dead)."""
        self.close()
        shutil.rmtree(self.root / SHARED_DIR, ignore_errors=True)


class SharedPartition(IndexPartition):
    """One partition's view of a :class:`SharedIndex`: its records and changelog ops."""

    def __init__(self, shared: SharedIndex, partition: int) -> None:
        self._start(shared.index, records_of(partition))
        self.shared = shared
        self.partition = partition
        self._partitions = shared.partitions

    def clear(self) -> int:
        """Delete this partition's rows and records (before its changelog rebuilds it); how many keys went."""
        part, count = self.partition, self._partitions
        deleted = self.index.delete_keys(
            lambda table, key: slot_partition((table, key, TABLE), count) == part,
            lambda key: slot_partition((0, key, EXACT), count) == part,
        )
        for record in (CHECKPOINT_RECORD, TOPIC_RECORD, DIRTY_RECORD):
            self.index.delete_record(self._records + record)
        return deleted

    def close(self) -> None:
        """The store stays open for the worker's other partitions (:meth:`SharedIndex.close`)."""


def records_of(partition: int) -> str:
    """What a partition's record keys begin with in a shared store."""
    return f"p{partition}:"


def discard(store: IndexPartition, path: Path, stamped: bool = False) -> None:
    """A :class:`~worker.state.changelog.StoreSet`'s discard of a shared store's partition: its
    part, or (``stamped`` with settings its changelog refuses) the whole store, which its
    worker then stops with (the settings of the right workers must find no store of others)."""
    if not isinstance(store, SharedPartition):
        raise TypeError(f"{store!r} is not a partition of a shared index")
    if stamped:
        store.shared.delete()
    else:
        store.clear()
