"""The index stage's store for one ``{p}.probes`` partition: a :class:`BlockIndex` plus its changelog ops.

Each probe touches only its own table (``tables=[t]``) or the exact keyspace, so a partition
holds exactly the buckets routed to it, each bucket one RocksDB prefix scan, each stored
event's entry (fingerprint, order, ts, sketch) once however many of its tables landed here.
A worker keeps the partitions it owns in one store (:mod:`worker.state.shared`), each one a
view of it with its own records and ops; a partition alone (tests, benches) has its own.

Every add is also recorded as a logical operation; the stage writes a batch's operations as
one changelog record (:mod:`worker.state.changelog`, in :mod:`topology.changelog`'s format).
Operations of one event within a batch are merged into one :class:`IndexOp`, so the sketch
travels once per event and partition, not once per table.
"""

from __future__ import annotations

import base64
import logging
import shutil
from collections.abc import Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from topology.changelog import IndexOp
from worker.engine.blocks import Plan, hamming
from worker.engine.match import Candidate, Entry
from worker.settings import REORDER_MS
from worker.state.buckets import PURGE_SLICE
from worker.state.index import BlockIndex
from worker.state.layout import Packed, StoreLayoutError, StoreMismatch
from worker.state.memory import SharedMemory
from worker.state.reads import Keep

log = logging.getLogger("neardup.worker")


def open_index(
    path: Path,
    plan: Plan,
    retention_ms: int | None,
    cache_bytes: int = 64 << 20,
    reorder_ms: int = REORDER_MS,
    features: Mapping[str, object] | None = None,
    memory: SharedMemory | None = None,
) -> BlockIndex:
    """A stream's block index at ``path``; one of an older layout is rebuilt from its changelog."""

    def opened() -> BlockIndex:
        return BlockIndex(
            path,
            plan,
            retention_ms=retention_ms,
            cache_bytes=cache_bytes,
            lazy_drops=True,
            reorder_ms=reorder_ms,
            features=features,
            memory=memory,
        )

    try:
        return opened()
    except StoreLayoutError as exc:
        # The store is a copy of its changelog: without its checkpoint it is replayed whole.
        log.warning("%s; rebuilding it from its changelog", exc)
        shutil.rmtree(path)
        return opened()


def one_each(stores: Iterable[IndexPartition]) -> list[IndexPartition]:
    """One partition of each block index among ``stores``: partitions that share a store
    (:mod:`worker.state.shared`) count, purge and settle it once."""
    return list({id(store.index): store for store in stores}.values())


class IndexPartition:
    """One partition's buckets, with the operations added since the last :meth:`take_ops`."""

    def __init__(
        self,
        path: Path,
        plan: Plan,
        retention_ms: int | None = None,
        cache_mb: int = 64,
        reorder_ms: int = REORDER_MS,
        features: Mapping[str, object] | None = None,
        memory: SharedMemory | None = None,
    ) -> None:
        self._start(open_index(path, plan, retention_ms, cache_mb << 20, reorder_ms, features, memory))

    def _start(self, index: BlockIndex, records: str = "") -> None:
        self.index = index
        self._records = records  # what this partition's record keys begin with in its store
        self._ops: dict[tuple[str, int], IndexOp] = {}
        self._added = 0  # entries stored since the last take_added

    def candidates(
        self, fingerprint: int, tables: Sequence[int], max_distance: int, order: int | None = None
    ) -> list[Candidate]:
        """Entries sharing ``fingerprint``'s key in one of ``tables``, within ``max_distance``, each
        once, in the window the event of arrival ``order`` sees."""
        return self.index.query(fingerprint, max_distance, tables=tables, order=order) if tables else []

    def exact_candidates(
        self, fingerprint: int, keys: Sequence[int], keep: Keep | None = None, order: int | None = None
    ) -> list[Candidate]:
        """Entries stored under any of the exact ``keys`` that ``keep`` takes, each once (no distance
        bound, as in batch mode), in the window the event of arrival ``order`` sees."""
        found = self.index.query_exact_many(keys, keep, order)
        return [Candidate(e, hamming(fingerprint, e.fingerprint)) for e in found]

    def add(self, entry: Entry | Packed, tables: Sequence[int] = (), exact_keys: Sequence[int] = ()) -> bool:
        """Store ``entry`` in block tables and under exact keys (one write), and log it. The
        index stage passes it :func:`~worker.state.layout.pack`ed, once for all its partitions.
        Returns False for an entry older than the retention window behind the partition's
        newest (late), which is not stored; its replay from the log skips it the same way."""
        stored = self.store(entry, tables, exact_keys)
        self.log(entry, tables, exact_keys)
        return stored

    def store(self, entry: Entry | Packed, tables: Sequence[int], exact_keys: Sequence[int]) -> bool:
        """:meth:`add` without the log: in a store shared by several partitions
        (:class:`worker.state.shared.SharedIndex`), an event's slots of all of them in one add,
        each partition logging its own (:meth:`log`)."""
        if not tables and not exact_keys:
            raise ValueError("add needs a table or an exact key")
        self._added += 1
        return self.index.add_one(entry, tables, exact_keys)

    def log(self, entry: Entry | Packed, tables: Sequence[int], exact_keys: Sequence[int]) -> None:
        """Record ``entry``'s slots of this partition for its changelog, merged with the event's
        others of this batch (the sketch travels once an event and partition)."""
        if isinstance(entry, Packed):
            entry = entry.entry
        op = self._ops.get((entry.event_id, entry.order))
        if op is None:
            op = IndexOp.of(entry.event_id, entry.fingerprint, entry.order, entry.ts, entry.sketch)
            self._ops[(entry.event_id, entry.order)] = op
        op.tables.extend(tables)
        op.exact_keys.extend(exact_keys)

    def behind(self, ts: int, order: int) -> bool:
        """Whether an event of time ``ts`` is behind the window that the event of arrival ``order``
        sees here (:meth:`BlockIndex.horizon_before`)."""
        horizon = self.index.horizon_before(order)
        return horizon is not None and ts < horizon

    def deferred(self, exact_keys: Iterable[int] = ()) -> AbstractContextManager[None]:
        """Adds in the block written once at its end, seen by its queries at once; ``exact_keys``
        read up front in one multi-get (:meth:`BlockIndex.deferred`)."""
        return self.index.deferred(exact_keys)

    def take_added(self) -> int:
        """Entries stored since the last call: what an upkeep step's purge slice is sized to."""
        added, self._added = self._added, 0
        return added

    def settle_before(self, arrival_ms: int) -> None:
        """Every event that arrived before ``arrival_ms`` is stored (:meth:`BlockIndex.settle_before`)."""
        self.index.settle_before(arrival_ms)

    def maintain(self, rows: int = PURGE_SLICE) -> bool:
        """One step of bucket upkeep (:meth:`BlockIndex.maintain`), a purge's slice of up to
        ``rows`` rows; False when none was due."""
        return self.index.maintain(rows)

    @property
    def purging(self) -> bool:
        return self.index.purging

    @property
    def purges_pending(self) -> int:
        return self.index.purges_pending

    def take_ops(self) -> list[IndexOp]:
        ops = list(self._ops.values())
        self._ops.clear()
        return ops

    def apply(self, ops: list[Any]) -> None:
        """Re-add logged entries (restore); adding an entry again changes nothing. An entry this
        store's plan cannot hold was logged under other settings (:class:`StoreMismatch`)."""
        try:
            self._apply(ops)
        except StoreMismatch:
            raise
        except ValueError as exc:
            raise StoreMismatch(f"the changelog of {self.index.path} was written with other settings: {exc}") from exc

    def _apply(self, ops: list[Any]) -> None:
        self.index.add_many(_replayed(op) for op in ops)

    def get_record(self, key: str) -> bytes | None:
        return self.index.get_record(self._records + key)

    def put_record(self, key: str, value: bytes) -> None:
        self.index.put_record(self._records + key, value)

    def close(self) -> None:
        self.index.close()


def _replayed(op: IndexOp | list[Any]) -> tuple[Entry, list[int], list[int]]:
    """An op as :meth:`BlockIndex.add_many` takes it: an :class:`IndexOp`, or the JSON array
    ``[id, fingerprint, order, ts, sketch in base64, tables, exact_keys]`` of a record written
    before that format."""
    if isinstance(op, IndexOp):
        return Entry(op.event_id, op.fingerprint, op.order, op.ts, op.sketch), op.tables, op.exact_keys
    event_id, fp, order, ts, sketch, tables, exact_keys = op
    entry = Entry(str(event_id), int(fp), int(order), int(ts), base64.b64decode(sketch))
    return entry, [int(t) for t in tables], [int(k) for k in exact_keys]
