"""RocksDB adapter (rocksdict) holding the permuted-block tables of :mod:`worker.engine.blocks`.

Keyspaces of one *bucket* of stored events:

``tables``   one row per (table, stored fingerprint): ``table(1) | key(4) | fingerprint(8) | event id``,
             empty value. The fixed 5-byte prefix (table | key) is the bucket, so a probe of one
             table is ONE prefix scan; a prefix bloom filter skips files without the bucket.
             The fingerprint sits in the row key, so the distance is known without a read.
``entries``  ``event id -> fingerprint(8) | order(16) | ts(8) | sketch``, written once per event
             however many tables it is in, and read only for rows within ``max_distance``.
``exact``    ``hash(16) | event id -> entry``: texts too short for SimHash match on an exact hash.

and of the whole store:

``records``  small records (counters, checkpoints), ``str -> bytes``.
``default``  the persisted plan, bucket width and watermark.

Without retention each keyspace is a column family of that name, kept forever.

Retention by event time (``retention_ms``): storage is cut into time buckets dropped whole.
An event goes to bucket ``ts // width`` with ``width = ceil(retention_ms / (buckets - 1))``;
bucket ``n`` is ONE column family, ``bucket@n``, holding all four keyspaces (and per-event
records put with a ``ts``, such as first verdicts), each key led by its keyspace's byte
(``t``, ``e``, ``x``, ``r``); it is created when first written.
The *watermark* is the largest event ts stored; the *horizon* is ``watermark - retention_ms``.
Entries older than the horizon are filtered out of every query at once, and a bucket whose
whole range lies before the horizon is dropped with ``drop_column_family``, which deletes its
files: at most ``buckets`` buckets are live, so disk holds one window plus one bucket however
long the stream runs.

Creating or dropping a family rewrites RocksDB's MANIFEST and OPTIONS files with the GIL
held, and costs more the more families the database has (the OPTIONS file lists every one,
and a family's memtable allocates its prefix bloom). The first event of a new bucket paid
that inside a streaming batch, on every partition at once (event time crosses a bucket
boundary everywhere together), and it set the stream's p99 latency. So the streaming index
calls :meth:`BlockIndex.maintain` between batches: it creates the *next* bucket's family
before any event needs it and, with ``lazy_drops``, drops an expired bucket's family later
(the bucket leaves every read at once). Batch scans keep creating and dropping where the
write happens. A bucket used to be four families (one per keyspace): a bucket change was
eight steps of 10-40 ms, and a streaming worker with four partitions spent ~9 % of its event
loop on them while a compressed-clock feed crossed a day every few seconds; one family a
bucket is two steps, each cheaper (docs/architecture.md, "Figures"). Why time buckets rather than the
alternatives:

* RocksDB's TTL compaction expires by *wall-clock* write time, not event time; replays,
  backfills and compressed-clock tests would keep or drop the wrong entries.
* A compaction filter keyed on the entry's ts would fit, but rocksdict exposes none from
  Python, and it frees space only when compaction reaches the files.
* Per-entry deletes (:meth:`BlockIndex.remove`) write tombstones — more data, not less — until
  compaction, and need a time-ordered scan to find what to delete.

The price is one prefix seek per live bucket per table on every probe (8 instead of 1 at the
default, ~2 us each). Measured at 300k entries over one window, plan 10x25..26 (10 tables),
shared 2-core machine: a probe finding nothing took 21-30 us unbucketed, 82-149 us with 8
buckets, 45-88 us with 4; a probe finding its near neighbour 60-85, 133-260 and 108-156 us;
adds were unchanged (55-70 us). Through the whole decider (~600 us an event) that is
10-20 %. Fewer buckets probe faster but keep up to ``1/(buckets-1)`` of a window more on disk.

Late events, i.e. older than the horizon when they arrive, are *not stored*: they can never be
a candidate again, and writing them would re-create a dropped bucket. They are still decided
(the caller probes the live window); ``add``/``add_exact``/``put_record`` return False for them.
Without ``retention_ms`` the store is one bucket named ``tables``/``entries``/``exact``, kept
forever, exactly the layout of stores written before retention existed.

Every :meth:`BlockIndex.add` is one atomic ``WriteBatch`` written straight into the memtable,
so a query sees every entry added before it (read-your-writes) with no side buffer: measured,
buffering 1000 adds per batch saved only ~10-15 % of an add, less than a buffer that queries
must also consult would cost back.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from types import TracebackType
from typing import cast

from rocksdict import (
    AccessType,
    BlockBasedOptions,
    Cache,
    ColumnFamily,
    DBCompressionType,
    Options,
    Rdict,
    ReadOptions,
    SliceTransform,
    WriteBatch,
    WriteOptions,
)

from worker.engine.blocks import MAX_TABLES, Plan
from worker.engine.match import Candidate, Entry

_PLAN_KEY = b"neardup:plan"
_BUCKET_KEY = b"neardup:bucket_ms"
_WATERMARK_KEY = b"neardup:watermark"
_RECORDS = "records"
_KINDS = ("tables", "entries", "exact", _RECORDS)
_BUCKET = "bucket"  # the one family of a time bucket: ``bucket@<n>``
# Each keyspace's leading byte inside a bucket's family.
_KIND_BYTE = {"tables": b"t", "entries": b"e", "exact": b"x", _RECORDS: b"r"}
_MEMTABLE_BUDGET = 256 << 20
_WAL_BUDGET = 256 << 20
_PREFIX = 5  # table id (1 byte) + block key (4 bytes)
_EXACT_PREFIX = 16
# Prefix extractor lengths; a bucket's family leads with the keyspace byte, then a table
# row's (table | key) or the first bytes of an exact hash (shorter keys skip the filter).
_PREFIXES = {"tables": _PREFIX, "exact": _EXACT_PREFIX, _BUCKET: 1 + _PREFIX}
_LAST_FP = b"\xff" * 8
_RECENT_ENTRIES = 32_768  # decoded entries kept per index (~13 MB)
_COMPRESSION = {
    "none": DBCompressionType.none,
    "lz4": DBCompressionType.lz4,
    "zstd": DBCompressionType.zstd,
    "snappy": DBCompressionType.snappy,
}


@contextmanager
def read_only(path: str | os.PathLike[str]) -> Iterator[Rdict]:
    """A closed index opened read-only with all its column families, to inspect what is stored."""
    names = [n for n in Rdict.list_cf(str(path)) if n != "default"]
    db = Rdict(
        str(path),
        Options(raw_mode=True),
        column_families={n: Options(raw_mode=True) for n in names},
        access_type=AccessType.read_only(False),
    )
    try:
        yield db
    finally:
        db.close()


def _encode(entry: Entry) -> bytes:
    return (
        entry.fingerprint.to_bytes(8, "big")
        + entry.order.to_bytes(16, "big")
        + entry.ts.to_bytes(8, "big", signed=True)
        + entry.sketch
    )


def _decode(event_id: str, value: bytes) -> Entry:
    return Entry(
        event_id=event_id,
        fingerprint=int.from_bytes(value[0:8], "big"),
        order=int.from_bytes(value[8:24], "big"),
        ts=int.from_bytes(value[24:32], "big", signed=True),
        sketch=bytes(value[32:]),
    )


def _exact_prefix(h: int) -> bytes:
    if not 0 <= h < 1 << (8 * _EXACT_PREFIX):
        raise ValueError(f"exact hash {h!r} must be an unsigned integer below 2^128")
    return h.to_bytes(_EXACT_PREFIX, "big")


def _bucket_ms(retention_ms: int | None, buckets: int) -> int:
    """Width of one time bucket; 0 means unbucketed (no retention)."""
    if retention_ms is None:
        return 0
    if retention_ms <= 0:
        raise ValueError(f"retention_ms {retention_ms!r} must be positive")
    if buckets < 2:
        raise ValueError(f"buckets {buckets!r} must be at least 2 (one filling, one expiring)")
    return -(-retention_ms // (buckets - 1))


class StoreLayoutError(ValueError):
    """The index on disk was written in a layout this version does not read."""


@dataclass
class _Bucket:
    """Where each keyspace of one time bucket (or of the whole store without retention) lives:
    its column family, and the bytes its keys start with there."""

    number: int | None
    cf: dict[str, Rdict]
    handle: dict[str, ColumnFamily]
    lead: dict[str, bytes]


def _bucket_family(number: int) -> str:
    """The name of time bucket ``number``'s column family."""
    return f"{_BUCKET}@{number}"


class BlockIndex:
    """Near-duplicate candidate index: the plan's tables, an exact-hash keyspace and records.

    ``wal=False`` skips RocksDB's write-ahead log (faster adds); then :meth:`flush` and
    :meth:`close` write the memtables to disk and a crash loses what was added since.
    ``retention_ms`` keeps only events within that much event time of the newest one,
    in ``buckets`` time buckets dropped whole (see the module docstring); ``lazy_drops`` leaves
    an expired bucket's families for :meth:`maintain` to drop.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        plan: Plan,
        *,
        wal: bool = True,
        compression: str = "lz4",
        block_size: int = 4096,
        cache_bytes: int = 64 << 20,
        retention_ms: int | None = None,
        buckets: int = 8,
        lazy_drops: bool = False,
    ) -> None:
        if plan.f > 64:
            raise ValueError(f"plan f={plan.f}: stored fingerprints are at most 64 bits")
        if len(plan.tables) > MAX_TABLES:
            raise ValueError(f"plan has {len(plan.tables)} tables; table ids are one byte (at most {MAX_TABLES})")
        if compression not in _COMPRESSION:
            raise ValueError(f"compression {compression!r} is not one of {sorted(_COMPRESSION)}")
        self.plan = plan
        self.path = Path(path)
        self.retention_ms = retention_ms
        self.bucket_ms = _bucket_ms(retention_ms, buckets)
        self._wal = wal
        self._cache = Cache(cache_bytes)
        self._codec = _COMPRESSION[compression]()
        self._block_size = block_size
        existing = Rdict.list_cf(str(self.path)) if Path(self.path, "CURRENT").exists() else []
        families = {name: self._options(name) for name in existing if name != "default"}
        families.setdefault(_RECORDS, self._options(_RECORDS))
        db_options = self._options("default")
        # A bounded info LOG and MANIFEST: with buckets created and dropped forever, both
        # would otherwise be the only files that keep growing.
        db_options.set_keep_log_file_num(2)
        db_options.set_max_log_file_size(4 << 20)
        db_options.set_max_manifest_file_size(16 << 20)
        # One memory budget for every family's memtables: without it each family may hold two
        # 64 MB memtables, and a scan measured 700 MB peak RSS. (A 64 MB budget made the
        # retention soak grow: flushes outpaced compaction of the live buckets.)
        db_options.set_db_write_buffer_size(_MEMTABLE_BUDGET)
        if self.bucket_ms:
            # A WAL bound, so idle buckets (and the watermark in ``default``) get flushed:
            # RocksDB keeps a WAL file until every family with data in it is flushed, and its
            # default bound grows with the number of families.
            db_options.set_max_total_wal_size(_WAL_BUDGET)
        self._db = Rdict(str(self.path), db_options, column_families=families)
        self._records = self._db.get_column_family(_RECORDS)
        self._meta = self._db.get_column_family_handle("default")
        self._names = set(existing) | {_RECORDS}
        self._lazy_drops = lazy_drops
        self._retired: list[str] = []  # families of expired buckets, not dropped yet
        self._buckets: dict[int | None, _Bucket] = {}
        self._newest_first: list[_Bucket] = []
        self._drop_at: int | None = None
        self._write = WriteOptions()
        # rocksdict's stub declares a method; at run time disable_wal is a property.
        self._write.disable_wal = not wal  # type: ignore[method-assign, assignment]
        self._prefix_read = ReadOptions()
        self._prefix_read.set_prefix_same_as_start(True)
        self._watermark: int | None = None
        self._recent: dict[tuple[int | None, bytes], tuple[Entry, bytes]] = {}
        self._closed = False
        try:
            self._check_plan()
            self._check_buckets()
            if not self.bucket_ms:
                self._open_bucket(None)
            else:
                self._check_layout(existing)
                for number in sorted({int(n.partition("@")[2]) for n in existing if "@" in n}):
                    self._open_bucket(number)
                raw = self._db.get(_WATERMARK_KEY)
                if raw is not None:
                    self._watermark = int(bytes(raw))
                self._expire()
                self._drop_retired()
        except BaseException:
            self.close()
            raise

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
        prefix = _PREFIXES.get(name.partition("@")[0])
        if prefix is not None:
            opts.set_prefix_extractor(SliceTransform.create_fixed_prefix(prefix))
            opts.set_memtable_prefix_bloom_ratio(0.1)
        return opts

    def _check_plan(self) -> None:
        stored = self._db.get(_PLAN_KEY)
        if stored is None:
            self._db.put(_PLAN_KEY, self.plan.to_json().encode(), self._write)
            self._db.put(_BUCKET_KEY, str(self.bucket_ms).encode(), self._write)
            return
        existing = Plan.from_json(bytes(stored).decode())
        if existing != self.plan:
            raise ValueError(
                f"index at {self.path} was built with plan {existing.name} (f={existing.f}, k={existing.k}) "
                f"but is opened with plan {self.plan.name} (f={self.plan.f}, k={self.plan.k}); "
                "its keys would not match: open it with the stored plan or rebuild it"
            )

    def _check_buckets(self) -> None:
        raw = self._db.get(_BUCKET_KEY)
        stored = 0 if raw is None else int(bytes(raw))  # stores older than retention: unbucketed
        if stored == self.bucket_ms:
            return

        def describe(width: int) -> str:
            return f"time buckets of {width} ms" if width else "no retention (one bucket kept forever)"

        raise ValueError(
            f"index at {self.path} was built with {describe(stored)} but is opened with "
            f"{describe(self.bucket_ms)} (retention_ms={self.retention_ms}); its entries would sit in the "
            "wrong buckets: open it with the same retention_ms and buckets, or rebuild it"
        )

    def _check_layout(self, existing: list[str]) -> None:
        old = sorted(n for n in existing if "@" in n and not n.startswith(_BUCKET + "@"))
        if old:
            raise StoreLayoutError(
                f"index at {self.path} keeps its time buckets as one column family per keyspace "
                f"({', '.join(old[:4])}...), the layout of an older neardup; rebuild it"
            )

    @staticmethod
    def stored_plan(path: str | os.PathLike[str]) -> Plan | None:
        """The plan an existing index was built with, or None if there is no index at ``path``."""
        if not Path(path, "CURRENT").exists():
            return None
        with read_only(path) as db:
            raw = db.get(_PLAN_KEY)
        return None if raw is None else Plan.from_json(bytes(raw).decode())

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

    @property
    def live_buckets(self) -> tuple[int, ...]:
        """Numbers of the time buckets on disk, oldest first (empty without retention)."""
        return tuple(sorted(n for n in self._buckets if n is not None))

    def _open_bucket(self, number: int | None) -> _Bucket:
        if number is None:
            cf = {kind: self._family(kind) for kind in _KINDS}
            handle = {kind: self._db.get_column_family_handle(kind) for kind in _KINDS}
            lead = dict.fromkeys(_KINDS, b"")
        else:
            name = _bucket_family(number)
            family = self._family(name)
            cf = dict.fromkeys(_KINDS, family)
            handle = dict.fromkeys(_KINDS, self._db.get_column_family_handle(name))
            lead = dict(_KIND_BYTE)
        bucket = self._buckets[number] = _Bucket(number, cf, handle, lead)
        self._reorder()
        return bucket

    def _family(self, name: str) -> Rdict:
        if name == _RECORDS:
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
        # The horizon at which the oldest bucket is wholly out of the window.
        self._drop_at = (numbers[-1] + 1) * self.bucket_ms if numbers else None

    def _target(self, ts: int, batch: WriteBatch) -> _Bucket | None:
        """The bucket an event of time ``ts`` is written to, or None if it is older than the window.

        Advances the watermark (persisted in ``batch``) when ``ts`` is the newest so far.
        """
        if not self.bucket_ms:
            return self._buckets[None]
        horizon = self.horizon
        if horizon is not None and ts < horizon:
            return None
        if self._watermark is None or ts > self._watermark:
            self._watermark = ts
            batch.put(_WATERMARK_KEY, str(ts).encode(), self._meta)
        number = ts // self.bucket_ms
        bucket = self._buckets.get(number)
        return bucket if bucket is not None else self._open_bucket(number)

    def _expire(self) -> None:
        """Drop every bucket whose whole time range is older than the horizon."""
        horizon = self.horizon
        if horizon is None or self._drop_at is None or horizon < self._drop_at:
            return
        for number in self.live_buckets:
            if (number + 1) * self.bucket_ms > horizon:
                break
            bucket = self._buckets.pop(number)
            self._recent = {k: e for k, e in self._recent.items() if k[0] != number}
            # The files go only once no Python object holds the column family any more.
            bucket.cf.clear()
            bucket.handle.clear()
            self._retired.append(_bucket_family(number))
        self._reorder()
        if not self._lazy_drops:
            self._drop_retired()

    def _drop_retired(self, count: int | None = None) -> None:
        """Drop the first ``count`` retired families (default all)."""
        count = len(self._retired) if count is None else count
        for name in self._retired[:count]:
            self._db.drop_column_family(name)
            self._names.discard(name)
        del self._retired[:count]

    def maintain(self) -> bool:
        """One step of bucket upkeep: drop one retired family, else create the family of the
        bucket after the watermark's. Returns False when there was nothing to do.

        Each step is one MANIFEST and OPTIONS rewrite (see the module docstring); a caller
        between batches spreads a bucket change into steps no event waits for.
        """
        if self._retired:
            self._drop_retired(1)
            return True
        if not self.bucket_ms or self._watermark is None:
            return False
        number = self._watermark // self.bucket_ms + 1
        name = _bucket_family(number)
        if number in self._buckets or name in self._names:
            return False
        self._create_family(name)
        return True

    def _commit(self, batch: WriteBatch) -> None:
        self._db.write(batch, self._write)
        self._expire()

    def _live(self) -> list[_Bucket]:
        """Buckets a read consults, newest first."""
        return self._newest_first

    def _tables(self, tables: Sequence[int] | None) -> Sequence[int]:
        if tables is None:
            return range(len(self.plan.tables))
        for t in tables:
            if not 0 <= t < len(self.plan.tables):
                raise ValueError(f"table {t} is not in plan {self.plan.name}")
        return tables

    def add(self, entry: Entry, tables: Sequence[int] | None = None, exact_keys: Sequence[int] = ()) -> bool:
        """Store ``entry`` in the given tables (default all) and under the given exact keys, in one
        atomic write; visible to the next query at once. ``tables=[]`` stores exact keys only.

        Entries of equal fingerprints must be given equal tables (all of them, or the same
        partition's share): :meth:`query` reads a fingerprint's rows in one table only.

        Returns False, storing nothing, for an entry older than the retention window.
        """
        return self.add_many([(entry, tables, exact_keys)]) == 1

    def add_many(self, items: Iterable[tuple[Entry, Sequence[int] | None, Sequence[int]]]) -> int:
        """:meth:`add` of each ``(entry, tables, exact_keys)``, in one atomic write; returns how
        many were stored.

        For a changelog's replay, where no query runs between two adds: one write a record
        instead of one an event restored 1 M events in 81-82 s instead of 97 (bench/restore.py,
        docs/reliability.md).
        """
        batch = WriteBatch(raw_mode=True)
        added: list[tuple[int | None, bytes, Entry, bytes]] = []
        stored = 0
        for entry, tables, exact_keys in items:
            table_ids = self._tables(tables)
            bucket = self._target(entry.ts, batch)
            if bucket is None:
                continue
            stored += 1
            eid = entry.event_id.encode()
            value = _encode(entry)
            lead = bucket.lead
            if table_ids:
                keys = self.plan.keys(entry.fingerprint)
                tail = entry.fingerprint.to_bytes(8, "big") + eid
                handle, row = bucket.handle["tables"], lead["tables"]
                for t in table_ids:
                    batch.put(row + bytes((t,)) + keys[t].to_bytes(4, "big") + tail, b"", handle)
                batch.put(lead["entries"] + eid, value, bucket.handle["entries"])
                added.append((bucket.number, eid, entry, value))
            for h in exact_keys:
                batch.put(lead["exact"] + _exact_prefix(h) + eid, value, bucket.handle["exact"])
        if not stored:
            return 0
        self._commit(batch)
        for number, eid, entry, value in added:
            self._remember(number, eid, entry, value)
        return stored

    def _remember(self, number: int | None, eid: bytes, entry: Entry, value: bytes) -> None:
        """Keep a recently added or read entry decoded: near-duplicates cluster in time, so the
        same few entries are candidates of every table of every copy (measured: an entry read
        and decode cost ~14 us, two thirds of a probe that finds one neighbour). Its stored
        value comes along, so an exact-key row can tell at a glance whether it holds the same.

        Only what the ``entries`` family holds is remembered: an exact-only add of an id stored
        before with another text must not shadow its table rows' entry."""
        recent = self._recent
        if len(recent) >= _RECENT_ENTRIES:
            for key in list(islice(recent, _RECENT_ENTRIES // 4)):
                del recent[key]
        recent[(number, eid)] = (entry, value)

    def remove(self, entry: Entry) -> None:
        """Delete ``entry`` from every table and the entry store of its bucket."""
        bucket = self._buckets.get(entry.ts // self.bucket_ms if self.bucket_ms else None)
        if bucket is None:
            return
        keys = self.plan.keys(entry.fingerprint)
        eid = entry.event_id.encode()
        tail = entry.fingerprint.to_bytes(8, "big") + eid
        batch = WriteBatch(raw_mode=True)
        handle, row = bucket.handle["tables"], bucket.lead["tables"]
        for t, key in enumerate(keys):
            batch.delete(row + bytes((t,)) + key.to_bytes(4, "big") + tail, handle)
        batch.delete(bucket.lead["entries"] + eid, bucket.handle["entries"])
        self._db.write(batch, self._write)
        self._recent.pop((bucket.number, eid), None)

    def query(self, fingerprint: int, max_distance: int, tables: Sequence[int] | None = None) -> list[Candidate]:
        """Every stored entry in the window sharing a key with ``fingerprint`` and within ``max_distance``, each once.

        Completeness holds up to ``plan.k``; farther entries appear only if they share a key.
        """
        keys = self.plan.keys(fingerprint)
        prefixes = [bytes((t,)) + keys[t].to_bytes(4, "big") for t in self._tables(tables)]
        horizon = self.horizon
        out: dict[str, Candidate] = {}
        for bucket in self._live():
            lead = bucket.lead["tables"]
            start = len(lead) + _PREFIX  # where a row's fingerprint starts
            fp_at = slice(start, start + 8)
            hits: dict[bytes, int] = {}
            # Entries of one fingerprint share every table of the set they were added with
            # (an add writes them all at once; equal fingerprints give equal keys, hence equal
            # tables of a partition), so a fingerprint's rows read in one table are all of its
            # rows: later tables skip them with one seek. A story reposted N times then costs
            # N rows plus a seek per table, not N rows per table.
            read: set[bytes] = set()
            it = bucket.cf["tables"].iter(self._prefix_read)
            for prefix in prefixes:
                fresh: set[bytes] = set()
                full = lead + prefix
                it.seek(full)
                while it.valid():
                    row = it.key()
                    fp = row[fp_at]
                    if fp in read:
                        if fp == _LAST_FP:
                            break
                        it.seek(full + (int.from_bytes(fp, "big") + 1).to_bytes(8, "big"))
                        continue
                    distance = (int.from_bytes(fp, "big") ^ fingerprint).bit_count()
                    if distance <= max_distance:
                        hits[row[start:]] = distance
                    fresh.add(fp)
                    it.next()
                read |= fresh
            del it
            if not hits:
                continue
            for row, entry in self._entries(bucket, list(hits)):
                if entry.fingerprint.to_bytes(8, "big") != row[:8]:
                    continue  # a stale row of an event since re-added with another fingerprint
                if horizon is not None and entry.ts < horizon:
                    continue
                out.setdefault(entry.event_id, Candidate(entry, hits[row]))  # newest bucket wins
        return list(out.values())

    def _entries(self, bucket: _Bucket, rows: list[bytes]) -> list[tuple[bytes, Entry]]:
        """The stored entries of table rows (``fingerprint | event id``), from memory where recent."""
        found: list[tuple[bytes, Entry]] = []
        missing: list[bytes] = []
        recent = self._recent
        for row in rows:
            cached = recent.get((bucket.number, row[8:]))
            if cached is None:
                missing.append(row)
            else:
                found.append((row, cached[0]))
        if missing:
            lead = bucket.lead["entries"]
            values = cast(list[bytes | None], bucket.cf["entries"].get([lead + row[8:] for row in missing]))
            for row, value in zip(missing, values, strict=False):
                if value is not None:
                    entry = _decode(row[8:].decode(), value)
                    self._remember(bucket.number, row[8:], entry, value)
                    found.append((row, entry))
        return found

    def add_exact(self, h: int, entry: Entry) -> bool:
        """Store ``entry`` under the exact hash ``h`` (texts too short for a meaningful SimHash).

        Returns False, storing nothing, for an entry older than the retention window.
        """
        return self.add(entry, tables=[], exact_keys=[h])

    def query_exact(self, h: int) -> list[Entry]:
        """Every entry in the window stored under exactly ``h``."""
        prefix = _exact_prefix(h)
        horizon = self.horizon
        out: dict[str, Entry] = {}
        recent = self._recent
        for bucket in self._live():
            full = bucket.lead["exact"] + prefix
            # One call a row (``items``), not four (``valid``, ``key``, ``value``, ``next``): a story
            # reposted N times has N rows under each of its anchors.
            rows = cast(
                Iterator[tuple[bytes, bytes]], bucket.cf["exact"].items(from_key=full, read_opt=self._prefix_read)
            )
            for key, value in rows:
                if key[: len(full)] != full:
                    break
                eid = key[len(full) :]
                # The recent entry is reused only if it is what this row holds (an id may be reused).
                cached = recent.get((bucket.number, eid))
                entry = cached[0] if cached is not None and cached[1] == value else _decode(eid.decode(), value)
                if horizon is None or entry.ts >= horizon:
                    out.setdefault(entry.event_id, entry)
        return list(out.values())

    def get_record(self, key: str) -> bytes | None:
        """The record ``key``: a store-wide one, else the newest kept in a live time bucket."""
        raw = key.encode()
        value = self._records.get(raw)
        if value is None and self.bucket_ms:
            for bucket in self._live():
                value = bucket.cf[_RECORDS].get(bucket.lead[_RECORDS] + raw)
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
        batch = WriteBatch(raw_mode=True)
        bucket = self._target(ts, batch)
        if bucket is None:
            return False
        batch.put(bucket.lead[_RECORDS] + key.encode(), bytes(value), bucket.handle[_RECORDS])
        self._commit(batch)
        return True

    def _families(self) -> list[Rdict]:
        """Every open family once: a time bucket's keyspaces share one (by identity, in order)."""
        families = {id(self._records): self._records}
        for bucket in self._buckets.values():
            for cf in bucket.cf.values():
                families.setdefault(id(cf), cf)
        return list(families.values())

    def flush(self) -> None:
        """Make everything added so far durable (sync the WAL, or write memtables without one)."""
        if self._wal:
            self._db.flush_wal(True)
        else:
            for cf in self._families():
                cf.flush(True)
            self._db.flush(True)

    def warm(self) -> int:
        """Read every table row and entry once, so the block cache holds them (as far as it is
        large enough); returns the rows read. A probe then costs no disk read — what a long-running
        index converges to, and what a restarted one reaches at once."""
        rows = 0
        scan = ReadOptions()
        scan.set_total_order_seek(True)
        for bucket in self._buckets.values():
            for kind in ("tables", "entries", "exact"):
                lead = bucket.lead[kind]
                it = bucket.cf[kind].iter(scan)
                it.seek(lead)
                while it.valid() and it.key().startswith(lead):
                    rows += 1
                    it.next()
                del it
        return rows

    def compact(self) -> None:
        """Flush and fully compact every keyspace (benchmarks measure the settled size)."""
        self._db.flush(True)  # ``default`` (watermark) too, or it pins every WAL file
        for cf in self._families():
            cf.flush(True)
            cf.compact_range(None, None)

    def disk_bytes(self) -> int:
        """Bytes of every file in the index directory (SST, WAL, manifest)."""
        return sum(p.stat().st_size for p in self.path.rglob("*") if p.is_file())

    def close(self) -> None:
        """Release the database (idempotent); without a WAL, memtables are flushed first."""
        if self._closed:
            return
        self._closed = True
        if not self._wal:
            for cf in self._families():
                cf.flush(True)
            self._db.flush(True)
        # rocksdict keeps the DB lock while any column-family object is alive.
        for bucket in self._buckets.values():
            bucket.cf.clear()
            bucket.handle.clear()
        self._buckets.clear()
        self._newest_first.clear()
        del self._records, self._meta
        self._db.close()

    def __enter__(self) -> BlockIndex:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
