"""The block index's writes: an event's table rows, entry and exact records in one atomic write.

Every :meth:`Writes.add` is one ``WriteBatch`` written straight into the memtables, except
inside :meth:`Writes.deferred`, where a batch's adds are written once at its end and its
queries read them from :mod:`worker.state.pending` meanwhile: either way a query sees every
entry added before it (read-your-writes). Records (verdicts, checkpoints) go into the same
writes, so an event's verdict expires with its entry.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import cast

from rocksdict import WriteBatch

from worker.engine.match import Entry
from worker.state.layout import ENTRIES, LOG, ONLY, RECORDS, Bucket, Packed, exact_prefixes, pack
from worker.state.pending import Pending
from worker.state.reads import Reads


class Writes(Reads):
    """Adds and records of :class:`worker.state.index.BlockIndex` (which opens the store)."""

    def add(
        self,
        entry: Entry,
        tables: Sequence[int] | None = None,
        exact_keys: Sequence[int] = (),
        record: tuple[str, bytes] | None = None,
    ) -> bool:
        """Store ``entry`` in the given tables (default all) and under the given exact keys, in one
        atomic write; visible to the next query at once. ``tables=[]`` stores exact keys only.
        ``record`` (key, value) goes into the same write, to expire with the entry (as
        :meth:`put_record` with the entry's ts): one write an event instead of two.

        Entries of equal fingerprints must be given equal tables (all of them, or the same
        partition's share): :meth:`query` reads a fingerprint's rows in one table only.

        Returns False, storing nothing, for an entry older than the retention window.
        """
        return self.add_many([(entry, tables, exact_keys)], [] if record is None else [(entry.ts, *record)]) == 1

    def add_many(
        self,
        items: Iterable[tuple[Entry | Packed, Sequence[int] | None, Sequence[int]]],
        records: Iterable[tuple[int, str, bytes]] = (),
    ) -> int:
        """:meth:`add` of each ``(entry, tables, exact_keys)``, and :meth:`put_record` of each
        ``(ts, key, value)`` in ``records``, in one atomic write (inside :meth:`deferred`, the
        block's); returns how many entries were stored. An entry may come :func:`pack`ed.

        For a changelog's replay, where no query runs between two adds: one write a record
        instead of one an event (docs/benchmarks.md, "Restoring an index partition").
        """
        return self._add(items, records)[0]

    def add_one(self, item: Entry | Packed, tables: Sequence[int] | None, exact_keys: Sequence[int]) -> bool:
        """:meth:`add_many` of one item, staged straight into an open deferred block: what a
        stream partition does for each share of a batch, about four an event."""
        pending = self._pending
        if pending is None:
            return self._add([(item, tables, exact_keys)], ())[0] == 1
        stored = pending.stored
        self._stage_entry(pending, item, tables, exact_keys)
        return pending.stored > stored

    def _add(
        self,
        items: Iterable[tuple[Entry | Packed, Sequence[int] | None, Sequence[int]]],
        records: Iterable[tuple[int, str, bytes]],
    ) -> tuple[int, int]:
        """Stage entries and records, and write them unless a deferred block is open; how many
        of each were stored (an entry or record older than the window is not)."""
        pending = self._pending or Pending(WriteBatch(raw_mode=True))
        stored, kept = pending.stored, pending.kept
        for entry, tables, exact_keys in items:
            self._stage_entry(pending, entry, tables, exact_keys)
        for ts, key, value in records:
            bucket = self._stage_record(pending.batch, ts, key, value)
            if bucket is not None:
                pending.kept += 1
                pending.show_record(bucket.number, key, value)
        if self._pending is None:
            self._write_pending(pending)
        return pending.stored - stored, pending.kept - kept

    @contextmanager
    def deferred(self, exact_keys: Iterable[int] = ()) -> Iterator[None]:
        """Adds inside the block are written once, at its end, and read at once by its queries
        (:mod:`worker.state.pending`): a batch of events pays one write, not one an event.
        ``exact_keys``, the keys the block's queries will ask for, are read now in one multi-get."""
        if self._pending is not None:
            raise RuntimeError("BlockIndex.deferred blocks do not nest")
        self._pending = Pending(WriteBatch(raw_mode=True), overlay=True)
        self._read_exact(exact_prefixes(exact_keys))
        try:
            yield
        finally:
            pending, self._pending = self._pending, None
            self._write_pending(pending)

    def _stage_entry(
        self, pending: Pending, item: Entry | Packed, tables: Sequence[int] | None, exact_keys: Sequence[int]
    ) -> None:
        """Put one entry's rows, entry and exact records into ``pending``; whatever can refuse
        it (a table not in the plan, a hash or id out of range) is checked before the first put."""
        table_ids = self._tables(tables)
        hashes = exact_prefixes(exact_keys)
        entry, ref, value = item if isinstance(item, Packed) else pack(item)
        bucket = self._target(entry.ts, entry.order)
        if bucket is None:
            return
        pending.stored += 1
        rows: list[bytes] = []
        if table_ids:
            self._replace_rows(pending.batch, bucket, ref, entry.fingerprint, pending.fingerprints)
            keys = self.plan.keys(entry.fingerprint)
            tail = entry.fingerprint.to_bytes(8, "big") + ref + bucket.suffix
            rows = [bytes((t,)) + keys[t].to_bytes(4, "big") + tail for t in table_ids]
            for row in rows:
                pending.batch.put(row, b"", self._tables_handle)
        elif not hashes:
            return
        # An anchor's entry is the one its table rows name; a text stored under exact keys
        # only has its own keyspace, which expiry does not walk for table rows.
        kind = ENTRIES if table_ids else ONLY
        key = bucket.lead[kind] + ref
        pending.batch.put(key, value, bucket.handle[kind])
        pending.show(bucket.number, key, entry, rows)
        record = ref + bucket.suffix + bucket.lead[kind]  # the lead is one byte
        for full in hashes:
            pending.exact.setdefault(full, []).append(record)
        if hashes and bucket.number is not None:  # its expiry reads the keys above
            pending.batch.put(bucket.lead[LOG] + ref + hashes[0], b"".join(hashes), bucket.handle[LOG])

    def _write_pending(self, pending: Pending) -> None:
        """Write what ``pending`` staged in one atomic write, and remember its entries decoded."""
        if not pending.stored and not pending.kept:
            return
        self._stage_exact(pending)
        self._commit(pending.batch)
        for number, key, entry in pending.added:
            if number in self._entry_counts:  # its bucket outlived this very write
                self._entry_counts[number] += (number, key) not in self._recent
            self._remember(number, key, entry)

    def _stage_exact(self, pending: Pending) -> None:
        """Append each exact key's records of this write to its value, as a probe before read it
        (an event is probed, then added) or else read now, in one multi-get."""
        keys = [*pending.exact]
        values = self._read_exact(keys)
        self._exact_read = {}
        for key, value in zip(keys, values, strict=True):
            pending.batch.put(key, pending.exact_value(key, value, self._live_suffixes), self._exact_handle)

    def _replace_rows(
        self,
        batch: WriteBatch,
        bucket: Bucket,
        ref: bytes,
        fingerprint: int,
        batched: dict[tuple[int | None, bytes], int],
    ) -> None:
        """An event (id and order: one ref) stored again with another fingerprint, which only a
        change of fingerprint settings makes: delete the old one's rows, which its expiry could
        no longer find (it walks the entries' fingerprints). Known from this batch or the recent
        entries; one older than both keeps its rows: reads skip them (their entry's fingerprint
        differs), but its bucket's purge does not find them, so they stay until the store is
        rebuilt. (An id re-sent with another text has a new order, so an entry of its own.)"""
        key = (bucket.number, ref)
        before = batched.get(key)
        if before is None:
            cached = self._recent.get((bucket.number, bucket.lead[ENTRIES] + ref))
            before = None if cached is None else cached[1]
        if before is not None and before != fingerprint:
            self._delete_rows(batch, before, ref, bucket.suffix)
        batched[key] = fingerprint

    def get_record(self, key: str) -> bytes | None:
        """The record ``key``: a store-wide one, else the newest kept in a live time bucket."""
        staged = {} if self._pending is None else self._pending.records
        raw = key.encode()
        value = staged.get((None, key))
        value = self._records.get(raw) if value is None else value
        if value is None and self.bucket_ms:
            horizon = self.horizon
            for bucket in self._live():
                if horizon is not None and (cast(int, bucket.number) + 1) * self.bucket_ms <= horizon:
                    continue  # expired, though a deferred block's write has not taken it out yet
                value = staged.get((bucket.number, key))
                value = bucket.cf[RECORDS].get(bucket.lead[RECORDS] + raw) if value is None else value
                if value is not None:
                    break
        return None if value is None else bytes(value)

    def put_record(self, key: str, value: bytes, *, ts: int | None = None) -> bool:
        """Store a record; with ``ts`` (event time) it expires with that time's bucket.

        Records without ``ts`` (counters, checkpoints) are kept forever. Returns False,
        storing nothing, for a ``ts`` older than the retention window.
        """
        if ts is None or not self.bucket_ms:
            self._records.put(key.encode(), bytes(value), self._write)
            return True
        return self._add((), [(ts, key, bytes(value))])[1] == 1

    def _stage_record(self, batch: WriteBatch, ts: int, key: str, value: bytes) -> Bucket | None:
        """Put a record into ``batch``, in the bucket of event time ``ts``, and return that
        bucket; None (nothing put) for a ``ts`` older than the retention window."""
        bucket = self._target(ts)
        if bucket is not None:
            batch.put(bucket.lead[RECORDS] + key.encode(), value, bucket.handle[RECORDS])
        return bucket
