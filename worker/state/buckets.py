"""Retention by event time: the block index's storage cut into time buckets.

An event goes to bucket ``ts // width`` with ``width = ceil(retention_ms / (buckets - 1))``
(:mod:`worker.state.layout` for the keys). The *watermark* is the largest event ts stored;
the *horizon* is ``watermark - retention_ms``. Entries older than the horizon are filtered
out of every query at once; with adds out of arrival order (the stream), an event's query
and add see the horizon behind the newest event that *arrived before it*
(:mod:`worker.state.arrivals`), and the horizon that expires buckets waits until no earlier
arrival can still come. A bucket whose whole range lies before the horizon *expires*:
it leaves every read at once (its rows in the shared ``tables`` and ``exact`` families no
longer name a live bucket), its table rows are deleted, and so are the exact keys that named
its events and no later one (:meth:`TimeBuckets._purge`, from its entries' fingerprints and
its log of exact keys; a key still naming a live event keeps the expired records, which reads
skip, until an append cuts them), and then its own family, which holds its entries, log and
records, is dropped with ``drop_column_family``. At most ``buckets`` buckets are live, so
disk holds one window plus one bucket (and, until compaction meets them, the deletes'
tombstones; until an append, the expired records of keys still live) however long the
stream runs. Late events (older than the horizon on arrival) are decided but not stored:
they can never be a candidate again.

Why the probe's families are shared and the rest is bucketed: a family per bucket made a
probe seek once per table *per live bucket* (8 times the seeks at the default retention);
sharing makes it one per table, and the price, point deletes at expiry, is paid once per
stored row, off the probe's path. RocksDB's TTL compaction expires by *wall-clock* write
time, not event time, and rocksdict exposes no compaction filter or merge operator from
Python, so deletes it is (docs/benchmarks.md, "Index layout").

Creating or dropping a family rewrites RocksDB's MANIFEST and OPTIONS files with the GIL
held, and costs more the more families there are; a purge is many deletes. Inside a
streaming batch either set the stream's p99, on every partition at once (event time
crosses a bucket boundary everywhere together). So the stream calls
:meth:`TimeBuckets.maintain` between batches: it creates the *next* bucket's family before
any event needs it and, with ``lazy_drops``, purges an expired bucket a slice at a time and
drops its family after. Batch scans do all of it where the write happens.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import cast

from rocksdict import (
    BlockBasedOptions,
    Cache,
    ColumnFamily,
    DBCompressionType,
    MemtableFactory,
    Options,
    Rdict,
    ReadOptions,
    SliceTransform,
    WriteBatch,
    WriteOptions,
)

from worker.engine.blocks import Plan
from worker.engine.match import EntryFields
from worker.state.arrivals import Arrivals
from worker.state.layout import (
    ENTRIES,
    EXACT_PREFIX,
    HASHED_MEMTABLE_BUCKETS,
    KIND_BYTE,
    KINDS,
    LOG,
    ONLY,
    PREFIXES,
    RECORDS,
    WATERMARK_KEY,
    Bucket,
    any_live,
    bucket_family,
)

PURGE_SLICE = 512  # least entries (or log rows) of an expired bucket deleted per maintain() step: a few ms


@dataclass
class _Purge:
    """An expired bucket whose rows in the shared families are being deleted: where it got to."""

    bucket: Bucket
    kind: str = ENTRIES  # the keyspace walked now: its entries, then its log
    after: bytes = b""  # the last key done in it


class TimeBuckets:
    """The bucket bookkeeping of :class:`worker.state.index.BlockIndex` (which sets these fields)."""

    path: Path
    plan: Plan
    retention_ms: int | None
    bucket_ms: int
    _db: Rdict
    _meta: ColumnFamily
    _records: Rdict
    _tables_cf: Rdict
    _exact_cf: Rdict
    _tables_handle: ColumnFamily
    _exact_handle: ColumnFamily
    _cache: Cache
    _codec: DBCompressionType
    _block_size: int
    _names: set[str]
    _lazy_drops: bool
    _retired: list[_Purge]
    _buckets: dict[int | None, Bucket]
    _newest_first: list[Bucket]
    _live_suffixes: frozenset[bytes]  # the row suffixes of the live buckets: reads skip others' records
    _drop_at: int | None
    _write: WriteOptions
    _watermark: int | None
    _stored_watermark: int | None  # the watermark the store holds
    _arrivals: Arrivals  # the watermark each arrival saw, for stores reached out of arrival order
    _recent: dict[tuple[int | None, bytes], EntryFields]
    _entry_counts: dict[int | None, int]  # stored entries per bucket, counted at open, then kept up
    _exact_read: dict[bytes, bytes | None]  # exact keys' values as the last probe read them, until a write

    def _options(self, name: str) -> Options:
        opts = Options(raw_mode=True)
        opts.create_if_missing(True)
        opts.create_missing_column_families(True)
        table = BlockBasedOptions()
        table.set_block_cache(self._cache)
        table.set_block_size(self._block_size)
        # Full (prefix) bloom filters held by the table readers, not in the block cache:
        # measured, a multi-MB filter block in a sharded 64 MB cache was evicted and re-read
        # on every seek (400 us per seek instead of 2 us).
        table.set_bloom_filter(10, False)
        opts.set_block_based_table_factory(table)
        opts.set_compression_type(self._codec)
        prefix = PREFIXES.get(name)
        if prefix is not None:
            opts.set_prefix_extractor(SliceTransform.create_fixed_prefix(prefix))
            opts.set_memtable_prefix_bloom_ratio(0.1)
            # Both shared families are read within one prefix (an exact key is its own; a table
            # row's is its table and block key), and walked in total order only by ``warm``:
            # hashed by prefix to a small skip list, a read costs no search of the whole
            # memtable, which was a fifth of a long scan's exact reads.
            # rocksdict's stub leaves out the arguments its run time requires: buckets, height, branching.
            hashed = MemtableFactory.hash_skip_list(HASHED_MEMTABLE_BUCKETS, 4, 4)  # type: ignore[call-arg]
            opts.set_memtable_factory(hashed)
        # A database option (the store's are built from these): a hashed memtable takes one
        # writer at a time, and a store has one.
        opts.set_allow_concurrent_memtable_write(False)
        return opts

    @property
    def watermark(self) -> int | None:
        """The largest event ts stored so far (None before the first, or without retention)."""
        return self._watermark

    @property
    def horizon(self) -> int | None:
        """Events older than this ts are out of the window (None: nothing is out)."""
        if self._watermark is None or self.retention_ms is None:
            return None
        return self._watermark - self.retention_ms

    def horizon_before(self, order: int | None) -> int | None:
        """The horizon an event of arrival ``order`` sees: behind the newest stored event that
        arrived before it (:mod:`worker.state.arrivals`; None: behind the newest)."""
        newest = self._arrivals.before(order) if order is not None else self._watermark
        return None if newest is None or self.retention_ms is None else newest - self.retention_ms

    @property
    def live_buckets(self) -> tuple[int, ...]:
        """Numbers of the time buckets on disk, oldest first (empty without retention)."""
        return tuple(sorted(n for n in self._buckets if n is not None))

    def _open_bucket(self, number: int | None) -> Bucket:
        if number is None:  # entries of both kinds share the ``entries`` family
            entries, entries_handle = self._family(ENTRIES), self._db.get_column_family_handle(ENTRIES)
            cf = {ENTRIES: entries, ONLY: entries, RECORDS: self._family(RECORDS)}
            handle = {
                ENTRIES: entries_handle,
                ONLY: entries_handle,
                RECORDS: self._db.get_column_family_handle(RECORDS),
            }
            lead = {ENTRIES: KIND_BYTE[ENTRIES], ONLY: KIND_BYTE[ONLY], RECORDS: b""}
        else:
            name = bucket_family(number)
            family = self._family(name)
            cf = dict.fromkeys(KINDS, family)
            handle = dict.fromkeys(KINDS, self._db.get_column_family_handle(name))
            lead = dict(KIND_BYTE)
        bucket = Bucket(number, cf, handle, lead)
        for purge in [p for p in self._retired if p.bucket.suffix == bucket.suffix]:
            self._purge(purge, None)  # its rows would read as this bucket's
        self._buckets[number] = bucket
        self._entry_counts[number] = self._scan(bucket, ENTRIES) + self._scan(bucket, ONLY)
        self._reorder()
        return bucket

    def _scan(self, bucket: Bucket, kind: str) -> int:
        """Read every row of one keyspace of ``bucket`` once; returns how many there are."""
        return sum(1 for _ in self._rows(bucket, kind))

    def _rows(
        self, bucket: Bucket, kind: str, after: bytes = b"", values: bool = False
    ) -> Iterator[tuple[bytes, bytes]]:
        """(key without its lead, value if ``values`` else b"") of a keyspace of ``bucket``, in
        key order, from just after ``after``."""
        lead = bucket.lead[kind]
        scan = ReadOptions()
        scan.set_total_order_seek(True)
        it = bucket.cf[kind].iter(scan)
        it.seek(lead + after)
        if after and it.valid() and it.key() == lead + after:
            it.next()
        while it.valid():
            key = it.key()
            if not key.startswith(lead):
                break
            yield key[len(lead) :], it.value() if values else b""
            it.next()

    @property
    def entry_count(self) -> int:
        """Events stored in the live buckets (an entry added again after it left the recent-entry
        memory counts twice until the store is opened again)."""
        return sum(self._entry_counts.values())

    def _family(self, name: str) -> Rdict:
        if name == RECORDS:
            return self._records
        if name in self._names:
            return self._db.get_column_family(name)
        return self._create_family(name)

    def _create_family(self, name: str) -> Rdict:
        family = self._db.create_column_family(name, self._options(name))
        self._names.add(name)
        return family

    def _reorder(self) -> None:
        numbers = sorted((n for n in self._buckets if n is not None), reverse=True)
        self._newest_first = [self._buckets[n] for n in numbers] or list(self._buckets.values())
        self._live_suffixes = frozenset(bucket.suffix for bucket in self._newest_first)
        # The horizon at which the oldest bucket is wholly out of the window.
        self._drop_at = (numbers[-1] + 1) * self.bucket_ms if numbers else None

    def _target(self, ts: int, order: int | None = None) -> Bucket | None:
        """The bucket an event of time ``ts`` (arrival ``order``) is written to, or None if it
        is older than the window it sees (:meth:`horizon_before`).

        Advances the watermark when ``ts`` is the newest so far (the next write stores it).
        """
        if not self.bucket_ms:
            return self._buckets[None]
        watermark = self._watermark
        # The horizon an event sees is at most the newest time stored less the retention: an
        # event newer than that (most) is in its window without the search of the arrivals
        # that finds its own horizon.
        if watermark is not None and ts < watermark - cast(int, self.retention_ms):
            horizon = self.horizon_before(order)
            if horizon is not None and ts < horizon:
                return None
        if watermark is None or ts > watermark:
            self._watermark = ts  # stored by the write (:meth:`_commit`), once however many events moved it
        self._arrivals.add(order, ts)
        number = ts // self.bucket_ms
        bucket = self._buckets.get(number)
        return bucket if bucket is not None else self._open_bucket(number)

    def _expire(self) -> None:
        """Take every bucket whose whole time range is older than the horizon out of reads,
        and purge it (now, or with ``lazy_drops`` in :meth:`maintain`)."""
        settled = self._arrivals.settled  # no event that could still see the bucket will come
        horizon = None if settled is None or self.retention_ms is None else settled - self.retention_ms
        if horizon is None or self._drop_at is None or horizon < self._drop_at:
            return
        for number in self.live_buckets:
            if (number + 1) * self.bucket_ms > horizon:
                break
            bucket = self._buckets.pop(number)
            # Its decoded entries stay in ``_recent`` until eviction reaches them: no read asks
            # for them any more, and rebuilding that dict at each expiry stalled a batch for
            # about 10 ms a partition.
            self._entry_counts.pop(number, None)
            self._retired.append(_Purge(bucket))
        self._reorder()
        if not self._lazy_drops:
            self._drop_retired()

    def _drop_retired(self) -> None:
        """Purge and drop every retired bucket."""
        while self._retired:
            self._purge(self._retired[0], None)

    def _purge(self, purge: _Purge, limit: int | None) -> bool:
        """Delete up to ``limit`` (None: all) of an expired bucket's entries' rows from the shared
        families; once all are gone, drop its family. Returns True when it was dropped."""
        bucket = purge.bucket
        while True:
            rows = list(islice(self._rows(bucket, purge.kind, purge.after, values=True), limit))
            batch = WriteBatch(raw_mode=True)
            if purge.kind == ENTRIES:
                for key, value in rows:
                    self._delete_rows(batch, int.from_bytes(value[0:8], "big"), key, bucket.suffix)
            else:  # key: ref | first hash; value: every hash the add stored
                self._drop_dead_exact(
                    batch,
                    (value[at : at + EXACT_PREFIX] for _, value in rows for at in range(0, len(value), EXACT_PREFIX)),
                )
            if rows:
                self._db.write(batch, self._write)
                purge.after = rows[-1][0]
            if limit is not None and len(rows) == limit:
                return False
            if purge.kind == LOG:
                break
            purge.kind, purge.after = LOG, b""
        self._retired.remove(purge)
        name = bucket_family(cast(int, bucket.number))  # only time buckets expire
        # Dropped before its Python objects: rocksdict flushes a family when its object goes,
        # which writes the memtable of a family about to be dropped out to files (10-40 ms).
        # The files go once no Python object holds the family any more.
        self._db.drop_column_family(name)
        bucket.cf.clear()
        bucket.handle.clear()
        self._names.discard(name)
        return True

    def _drop_dead_exact(self, batch: WriteBatch, keys: Iterable[bytes]) -> None:
        """Delete each of ``keys`` that names no event of a live bucket. One that still does is
        left as it is: reads skip its expired records, and an append cuts them out
        (:func:`worker.state.layout.append_records`), where rewriting it here cost a split of
        its records and a write for every key a story's later copies share."""
        self._exact_read = {}
        live = self._live_suffixes
        unique = [*dict.fromkeys(keys)]
        for key, old in zip(unique, cast(list[bytes | None], self._exact_cf.get([*unique])), strict=True):
            if old is not None and not any_live(old, live):
                batch.delete(key, self._exact_handle)

    def _delete_rows(self, batch: WriteBatch, fingerprint: int, ref: bytes, suffix: bytes) -> None:
        """Delete one stored fingerprint's rows from every table (absent ones cost a tombstone)."""
        tail = fingerprint.to_bytes(8, "big") + ref + suffix
        for table, block in enumerate(self.plan.keys(fingerprint)):
            batch.delete(bytes((table,)) + block.to_bytes(4, "big") + tail, self._tables_handle)

    @property
    def purging(self) -> bool:
        """An expired bucket's rows are still being deleted (:meth:`maintain` goes on with it)."""
        return bool(self._retired)

    @property
    def purges_pending(self) -> int:
        """Expired buckets whose rows are not all deleted yet: more than one means the purge
        fell behind the stream."""
        return len(self._retired)

    def settle_before(self, arrival_ms: int) -> None:
        """Every event that arrived before ``arrival_ms`` is stored: expire what no later
        arrival can see, without waiting out the reorder window (:meth:`Arrivals.settle_before`)."""
        if self._arrivals.settle_before(arrival_ms):
            self._expire()

    def maintain(self, rows: int = PURGE_SLICE) -> bool:
        """One step of bucket upkeep: a slice of an expired bucket's purge (up to ``rows``
        entries, then as many log rows; or its drop), else create the family of the bucket
        after the watermark's. Returns False when there was nothing to do.

        A family's creation or drop is one MANIFEST and OPTIONS rewrite (see the module
        docstring); a caller between batches spreads a bucket change into steps no event waits for.
        """
        if self._retired:
            self._purge(self._retired[0], max(rows, PURGE_SLICE))
            return True
        if not self.bucket_ms or self._watermark is None:
            return False
        number = self._watermark // self.bucket_ms + 1
        name = bucket_family(number)
        if number in self._buckets or name in self._names:
            return False
        self._create_family(name)
        return True

    def _commit(self, batch: WriteBatch) -> None:
        if self._watermark != self._stored_watermark:
            batch.put(WATERMARK_KEY, str(self._watermark).encode(), self._meta)
        self._db.write(batch, self._write)
        self._stored_watermark = self._watermark
        self._expire()

    def _live(self) -> list[Bucket]:
        """Buckets a read consults, newest first."""
        return self._newest_first
