"""The block index: the permuted-block tables of :mod:`worker.engine.blocks` in RocksDB (rocksdict).

A probe of one table is one prefix scan of the shared ``tables`` family, and of its exact
keys one multi-get of ``exact``, whatever the retention (:mod:`worker.state.layout`). The
class is built in layers, each a module: time buckets decide what expires
(:mod:`worker.state.buckets`), :mod:`worker.state.reads` answers probes,
:mod:`worker.state.writes` stores events and records; this module opens, checks, flushes
and closes the store.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from types import TracebackType

from rocksdict import Cache, ColumnFamily, Options, Rdict, ReadOptions, WriteBatch, WriteOptions

from worker.engine.blocks import Plan
from worker.engine.match import EntryFields
from worker.state.arrivals import Arrivals
from worker.state.layout import (
    BUCKET,
    BUCKET_KEY,
    BUCKETS,
    COMPRESSION,
    ENTRIES,
    EXACT,
    EXACT_PREFIX,
    FEATURES_KEY,
    LAYOUT,
    LAYOUT_KEY,
    LOG,
    MEMTABLE_BUDGET,
    ONLY,
    PLAN_KEY,
    PREFIX,
    RECENT_ENTRIES,
    RECORDS,
    SHARED,
    TABLES,
    WAL_BUDGET,
    WATERMARK_KEY,
    Bucket,
    StoreLayoutError,
    StoreMismatch,
    bound_info_log,
    bucket_width,
    check_fits,
    features_differ,
    read_only,
)
from worker.state.memory import SharedMemory
from worker.state.pending import Pending
from worker.state.writes import Writes


class BlockIndex(Writes):
    """Near-duplicate candidate index: the plan's tables, an exact-hash keyspace and records.

    ``wal=False`` skips RocksDB's write-ahead log (faster adds); then :meth:`flush` and
    :meth:`close` write the memtables to disk and a crash loses what was added since.
    ``retention_ms`` keeps only events within that much event time of the newest one,
    in ``buckets`` time buckets (see :mod:`worker.state.buckets`); ``lazy_drops`` leaves an
    expired bucket's purge for :meth:`maintain`. ``statistics`` turns on RocksDB's own counters
    (:meth:`counter`), for tests and benchmarks of what a probe costs. ``recent_entries``
    bounds the decoded entries kept in memory (:meth:`Reads._remember`). ``reorder_ms``: how
    far out of arrival order adds may come (:mod:`worker.state.arrivals`; 0 for in order).
    ``memory``: the cache and memtable budget of every store of the process (a worker's), in
    place of the store's own ``cache_bytes`` and budgets.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        plan: Plan,
        *,
        wal: bool = True,
        compression: str = "zstd",
        block_size: int = 4096,
        cache_bytes: int = 64 << 20,
        retention_ms: int | None = None,
        buckets: int = BUCKETS,
        lazy_drops: bool = False,
        statistics: bool = False,
        recent_entries: int = RECENT_ENTRIES,
        reorder_ms: int = 0,
        features: Mapping[str, object] | None = None,
        memory: SharedMemory | None = None,
    ) -> None:
        check_fits(plan, compression)
        self.plan = plan
        self.path = Path(path)
        self.retention_ms = retention_ms
        self.bucket_ms = bucket_width(retention_ms, buckets)
        self._wal = wal
        self._memory = memory
        self._cache = Cache(cache_bytes) if memory is None else memory.cache
        self._codec = COMPRESSION[compression]()
        self._block_size = block_size
        existing = self._open(statistics)
        self._records = self._db.get_column_family(RECORDS)
        self._tables_cf = self._db.get_column_family(TABLES)
        self._exact_cf = self._db.get_column_family(EXACT)
        self._tables_handle = self._db.get_column_family_handle(TABLES)
        self._exact_handle = self._db.get_column_family_handle(EXACT)
        self._meta = self._db.get_column_family_handle("default")
        self._names = set(existing) | {RECORDS, *SHARED}
        self._lazy_drops = lazy_drops
        self._retired = []  # expired buckets whose rows are being deleted
        self._buckets: dict[int | None, Bucket] = {}
        self._newest_first, self._live_suffixes = [], frozenset()
        self._drop_at: int | None = None
        self._write = WriteOptions()
        # rocksdict's stub declares a method; at run time disable_wal is a property.
        self._write.disable_wal = not wal  # type: ignore[method-assign, assignment]
        self._prefix_read = ReadOptions()
        self._prefix_read.set_prefix_same_as_start(True)
        self._watermark: int | None = None
        self._stored_watermark: int | None = None
        self._arrivals = Arrivals(reorder_ms)
        self._recent: dict[tuple[int | None, bytes], EntryFields] = {}
        self._recent_limit = recent_entries
        self._exact_read = {}
        self._pending: Pending | None = None
        self._entry_counts: dict[int | None, int] = {}
        self._closed = False
        try:
            self._check_layout(existing)
            self._check_plan()
            self._check_features(features)
            self._check_buckets()
            self._load_buckets(existing)
        except BaseException:
            self.close()
            raise

    def _check_buckets(self) -> None:
        raw = self._db.get(BUCKET_KEY)
        stored = 0 if raw is None else int(bytes(raw))  # stores older than retention: unbucketed
        if stored == self.bucket_ms:
            return

        def describe(width: int) -> str:
            return f"time buckets of {width} ms" if width else "no retention (one bucket kept forever)"

        raise StoreMismatch(
            f"index at {self.path} was built with {describe(stored)} but is opened with "
            f"{describe(self.bucket_ms)} (retention_ms={self.retention_ms}); its entries would sit in the "
            "wrong buckets: open it with the same retention_ms and buckets, or rebuild it"
        )

    def _check_layout(self, existing: list[str]) -> None:
        old = sorted(n for n in existing if "@" in n and not n.startswith(BUCKET + "@"))
        if old:
            raise StoreLayoutError(
                f"index at {self.path} keeps its time buckets as one column family per keyspace "
                f"({', '.join(old[:4])}...), the layout of an older neardup; rebuild it"
            )
        layout = self._db.get(LAYOUT_KEY)
        if layout is None and self._db.get(PLAN_KEY) is not None:
            raise StoreLayoutError(
                f"index at {self.path} keeps a table per time bucket, the layout of an older neardup; rebuild it"
            )
        if layout is not None and bytes(layout) != LAYOUT:
            raise StoreLayoutError(f"index at {self.path} has layout {bytes(layout)!r}, not {LAYOUT!r}; rebuild it")

    def _open(self, statistics: bool) -> list[str]:
        """Open the database with every family it has and the shared ones; the families found."""
        existing = Rdict.list_cf(str(self.path)) if Path(self.path, "CURRENT").exists() else []
        families = {name: self._options(name) for name in existing if name != "default"}
        for name in (RECORDS, *SHARED):
            families.setdefault(name, self._options(name))
        self._db_options = self._database_options(statistics)
        self._db = Rdict(str(self.path), self._db_options, column_families=families)
        return existing

    def _load_buckets(self, families: list[str]) -> None:
        """Open the time buckets the store holds and its watermark, and expire what the
        window left behind since the store was last open."""
        if not self.bucket_ms:
            self._open_bucket(None)
            return
        for number in sorted({int(n.partition("@")[2]) for n in families if "@" in n}):
            self._open_bucket(number)
        raw = self._db.get(WATERMARK_KEY)
        if raw is not None:
            self._watermark = int(bytes(raw))
        self._stored_watermark = self._watermark
        self._arrivals.start(self._watermark)
        self._expire()
        self._drop_retired()  # what expired before the last close, and this expiry

    def _database_options(self, statistics: bool) -> Options:
        db_options = self._options("default")
        # A bounded info LOG and MANIFEST: with buckets created and dropped forever, both
        # would otherwise be the only files that keep growing.
        bound_info_log(db_options)
        db_options.set_max_manifest_file_size(16 << 20)
        # One memory budget for every family's memtables: without it each family may hold two
        # 64 MB memtables, and a scan measured 700 MB peak RSS. (A 64 MB budget made the
        # retention soak grow: flushes outpaced compaction of the live buckets.)
        if self._memory is not None:
            self._memory.apply(db_options)
        else:
            db_options.set_db_write_buffer_size(MEMTABLE_BUDGET)
            if self.bucket_ms:
                # A WAL bound, so idle buckets (and the watermark in ``default``) get flushed:
                # RocksDB keeps a WAL file until every family with data in it is flushed, and its
                # default bound grows with the number of families.
                db_options.set_max_total_wal_size(WAL_BUDGET)
        if statistics:
            db_options.enable_statistics()
        return db_options

    def _check_plan(self) -> None:
        stored = self._db.get(PLAN_KEY)
        if stored is None:
            self._db.put(PLAN_KEY, self.plan.to_json().encode(), self._write)
            self._db.put(BUCKET_KEY, str(self.bucket_ms).encode(), self._write)
            self._db.put(LAYOUT_KEY, LAYOUT, self._write)
            return
        existing = Plan.from_json(bytes(stored).decode())
        if existing != self.plan:
            raise StoreMismatch(
                f"index at {self.path} was built with plan {existing.name} (f={existing.f}, k={existing.k}) "
                f"but is opened with plan {self.plan.name} (f={self.plan.f}, k={self.plan.k}); "
                "its keys would not match: open it with the stored plan or rebuild it"
            )

    def _check_features(self, features: Mapping[str, object] | None) -> None:
        """Keep the settings a text's stored SimHash, sketch and keys depend on, and refuse
        others; a store from before this record takes the first it is opened with."""
        if features is None:
            return
        raw = self._db.get(FEATURES_KEY)
        stored = None if raw is None else json.loads(bytes(raw))
        differ = features_differ(stored, features)
        if differ:
            raise StoreMismatch(
                f"index at {self.path} was built with {' and '.join(differ)}; what it holds would not "
                "be found with these: open it with the stored settings or rebuild it"
            )
        kept = {**(stored or {}), **features}
        if kept != stored:
            self._db.put(FEATURES_KEY, json.dumps(kept, sort_keys=True).encode(), self._write)

    @staticmethod
    def stored_plan(path: str | os.PathLike[str]) -> Plan | None:
        """The plan an existing index was built with, or None if there is no index at ``path``."""
        if not Path(path, "CURRENT").exists():
            return None
        with read_only(path) as db:
            raw = db.get(PLAN_KEY)
        return None if raw is None else Plan.from_json(bytes(raw).decode())

    def _shared(self) -> list[tuple[str, Rdict]]:
        return [(TABLES, self._tables_cf), (EXACT, self._exact_cf)]

    def _families(self) -> list[Rdict]:
        """Every open family once: a time bucket's keyspaces share one (by identity, in order)."""
        families = {id(cf): cf for cf in (self._records, self._tables_cf, self._exact_cf)}
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
        shared = sum(self._scan(Bucket(None, {kind: cf}, {}, {kind: b""}), kind) for kind, cf in self._shared())
        return shared + sum(self._scan(bucket, kind) for bucket in self._buckets.values() for kind in (ENTRIES, ONLY))

    def compact(self) -> None:
        """Flush and fully compact every keyspace (benchmarks measure the settled size)."""
        self._db.flush(True)  # ``default`` (watermark) too, or it pins every WAL file
        for cf in self._families():
            cf.flush(True)
            cf.compact_range(None, None)

    def counter(self, name: str) -> int:
        """One of RocksDB's statistics tickers, e.g. ``rocksdb.number.db.seek`` (needs ``statistics``)."""
        for line in (self._db_options.get_statistics() or "").splitlines():
            ticker, _, count = line.partition(" COUNT : ")
            if ticker == name:
                return int(count)
        raise KeyError(f"RocksDB reports no ticker {name!r} (was the index opened with statistics=True?)")

    def delete_keys(self, row: Callable[[int, int], bool], exact: Callable[[int], bool]) -> int:
        """Delete every table row whose table and block key ``row`` takes, every exact key
        ``exact`` takes, and those keys from the log rows naming them: one partition's part of a
        store that several share (:class:`worker.state.shared.SharedIndex`). Entries stay:
        another partition's rows may name them, and one nothing names is never read and goes
        with its bucket. A walk of the whole store, for a partition rebuilt from its changelog,
        never on a batch's path. Returns how many keys went."""
        if self._pending is not None:
            raise RuntimeError("BlockIndex.delete_keys inside a deferred block")
        batch, deleted = WriteBatch(raw_mode=True), 0
        for key, handle, kept in self._partition_keys(row, exact):
            batch.delete(key, handle)
            if kept:  # a log row of an add of several partitions' keys: the others' stay logged
                batch.put(key[:-EXACT_PREFIX] + kept[:EXACT_PREFIX], kept, handle)
            deleted += 1
            if deleted % 10_000 == 0:
                self._db.write(batch, self._write)
                batch = WriteBatch(raw_mode=True)
        self._db.write(batch, self._write)
        self._exact_read = {}
        return deleted

    def _partition_keys(
        self, row: Callable[[int, int], bool], exact: Callable[[int], bool]
    ) -> Iterator[tuple[bytes, ColumnFamily, bytes]]:
        """Keys to delete, with what a log row keeps of its keys (b"": nothing)."""
        tables, keys = (Bucket(None, {kind: cf}, {}, {kind: b""}) for kind, cf in self._shared())
        for key, _ in self._rows(tables, TABLES):
            if row(key[0], int.from_bytes(key[1:PREFIX], "big")):
                yield key, self._tables_handle, b""
        for key, _ in self._rows(keys, EXACT):
            if exact(int.from_bytes(key[:EXACT_PREFIX], "big")):
                yield key, self._exact_handle, b""
        for bucket in self._buckets.values():  # a log row: ref | its first key; its value: every key the add stored
            for key, value in self._rows(bucket, LOG, values=True):
                hashes = [value[at : at + EXACT_PREFIX] for at in range(0, len(value), EXACT_PREFIX)]
                kept = [h for h in hashes if not exact(int.from_bytes(h, "big"))]
                if len(kept) < len(hashes):
                    yield bucket.lead[LOG] + key, bucket.handle[LOG], b"".join(kept)

    def delete_record(self, key: str) -> None:
        """Delete a store-wide record (:meth:`put_record` without ``ts``)."""
        self._records.delete(key.encode(), self._write)

    def disk_bytes(self) -> int:
        """Bytes of every file in the index directory (SST, WAL, manifest)."""
        return sum(p.stat().st_size for p in self.path.rglob("*") if p.is_file())

    def close(self, keep: bool = True) -> None:
        """Release the database (idempotent); without a WAL, memtables are flushed first.
        ``keep=False``, for a store deleted next (a scan's temporary state), cancels the flush
        rocksdict makes on release (it sorts each hashed memtable); with a WAL nothing else flushes."""
        if self._closed:
            return
        self._closed = True
        if not keep:
            self._db.cancel_all_background(True)
        elif not self._wal:
            for cf in self._families():
                cf.flush(True)
            self._db.flush(True)
        # rocksdict keeps the DB lock while any column-family object is alive.
        for bucket in [*self._buckets.values(), *(purge.bucket for purge in self._retired)]:
            bucket.cf.clear()
            bucket.handle.clear()
        self._buckets.clear()
        self._newest_first.clear()
        self._retired.clear()
        del self._records, self._tables_cf, self._exact_cf, self._meta, self._tables_handle, self._exact_handle
        if keep:
            self._db.close()
        del self._db  # released without a close when cancelled: rocksdict's close would raise

    def __enter__(self) -> BlockIndex:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
