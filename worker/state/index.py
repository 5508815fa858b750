"""The block index: the permuted-block tables of :mod:`worker.engine.blocks` in RocksDB (rocksdict).

A probe of one table is one prefix scan of its bucket (:mod:`worker.state.layout`); with
retention, one per live time bucket (:mod:`worker.state.buckets`). Every :meth:`BlockIndex.add`
is one atomic ``WriteBatch`` written straight into the memtable, so a query sees every entry
added before it (read-your-writes) with no side buffer that queries would also have to consult.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from itertools import islice
from pathlib import Path
from types import TracebackType
from typing import cast

from rocksdict import (
    Cache,
    Rdict,
    ReadOptions,
    WriteBatch,
    WriteOptions,
)

from worker.engine.blocks import MAX_TABLES, Plan
from worker.engine.match import Candidate, Entry
from worker.state.buckets import TimeBuckets
from worker.state.layout import (
    BUCKET_KEY,
    COMPRESSION,
    LAST_FP,
    MEMTABLE_BUDGET,
    PLAN_KEY,
    PREFIX,
    RECENT_ENTRIES,
    RECORDS,
    WAL_BUDGET,
    WATERMARK_KEY,
    Bucket,
    bucket_width,
    decode_entry,
    encode_entry,
    exact_prefix,
    read_only,
)


class BlockIndex(TimeBuckets):
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
        if compression not in COMPRESSION:
            raise ValueError(f"compression {compression!r} is not one of {sorted(COMPRESSION)}")
        self.plan = plan
        self.path = Path(path)
        self.retention_ms = retention_ms
        self.bucket_ms = bucket_width(retention_ms, buckets)
        self._wal = wal
        self._cache = Cache(cache_bytes)
        self._codec = COMPRESSION[compression]()
        self._block_size = block_size
        existing = Rdict.list_cf(str(self.path)) if Path(self.path, "CURRENT").exists() else []
        families = {name: self._options(name) for name in existing if name != "default"}
        families.setdefault(RECORDS, self._options(RECORDS))
        db_options = self._options("default")
        # A bounded info LOG and MANIFEST: with buckets created and dropped forever, both
        # would otherwise be the only files that keep growing.
        db_options.set_keep_log_file_num(2)
        db_options.set_max_log_file_size(4 << 20)
        db_options.set_max_manifest_file_size(16 << 20)
        # One memory budget for every family's memtables: without it each family may hold two
        # 64 MB memtables, and a scan measured 700 MB peak RSS. (A 64 MB budget made the
        # retention soak grow: flushes outpaced compaction of the live buckets.)
        db_options.set_db_write_buffer_size(MEMTABLE_BUDGET)
        if self.bucket_ms:
            # A WAL bound, so idle buckets (and the watermark in ``default``) get flushed:
            # RocksDB keeps a WAL file until every family with data in it is flushed, and its
            # default bound grows with the number of families.
            db_options.set_max_total_wal_size(WAL_BUDGET)
        self._db = Rdict(str(self.path), db_options, column_families=families)
        self._records = self._db.get_column_family(RECORDS)
        self._meta = self._db.get_column_family_handle("default")
        self._names = set(existing) | {RECORDS}
        self._lazy_drops = lazy_drops
        self._retired: list[str] = []  # families of expired buckets, not dropped yet
        self._buckets: dict[int | None, Bucket] = {}
        self._newest_first: list[Bucket] = []
        self._drop_at: int | None = None
        self._write = WriteOptions()
        # rocksdict's stub declares a method; at run time disable_wal is a property.
        self._write.disable_wal = not wal  # type: ignore[method-assign, assignment]
        self._prefix_read = ReadOptions()
        self._prefix_read.set_prefix_same_as_start(True)
        self._watermark: int | None = None
        self._recent: dict[tuple[int | None, bytes], tuple[Entry, bytes]] = {}
        self._entry_counts: dict[int | None, int] = {}
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
                raw = self._db.get(WATERMARK_KEY)
                if raw is not None:
                    self._watermark = int(bytes(raw))
                self._expire()
                self._drop_retired()
        except BaseException:
            self.close()
            raise

    def _check_plan(self) -> None:
        stored = self._db.get(PLAN_KEY)
        if stored is None:
            self._db.put(PLAN_KEY, self.plan.to_json().encode(), self._write)
            self._db.put(BUCKET_KEY, str(self.bucket_ms).encode(), self._write)
            return
        existing = Plan.from_json(bytes(stored).decode())
        if existing != self.plan:
            raise ValueError(
                f"index at {self.path} was built with plan {existing.name} (f={existing.f}, k={existing.k}) "
                f"but is opened with plan {self.plan.name} (f={self.plan.f}, k={self.plan.k}); "
                "its keys would not match: open it with the stored plan or rebuild it"
            )

    @staticmethod
    def stored_plan(path: str | os.PathLike[str]) -> Plan | None:
        """The plan an existing index was built with, or None if there is no index at ``path``."""
        if not Path(path, "CURRENT").exists():
            return None
        with read_only(path) as db:
            raw = db.get(PLAN_KEY)
        return None if raw is None else Plan.from_json(bytes(raw).decode())

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
        instead of one an event (docs/benchmarks.md, "Restoring an index partition").
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
            value = encode_entry(entry)
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
                batch.put(lead["exact"] + exact_prefix(h) + eid, value, bucket.handle["exact"])
        if not stored:
            return 0
        self._commit(batch)
        for number, eid, entry, value in added:
            if number in self._entry_counts:  # its bucket outlived this very write
                self._entry_counts[number] += (number, eid) not in self._recent
            self._remember(number, eid, entry, value)
        return stored

    def _remember(self, number: int | None, eid: bytes, entry: Entry, value: bytes) -> None:
        """Keep a recently added or read entry decoded: near-duplicates cluster in time, so the
        same few entries are candidates of every table of every copy, and reading and decoding
        one was most of a probe. Its stored value comes along, so an exact-key row can tell
        at a glance whether it holds the same.

        Only what the ``entries`` family holds is remembered: an exact-only add of an id stored
        before with another text must not shadow its table rows' entry."""
        recent = self._recent
        if len(recent) >= RECENT_ENTRIES:
            for key in list(islice(recent, RECENT_ENTRIES // 4)):
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
        self._entry_counts[bucket.number] = max(0, self._entry_counts[bucket.number] - 1)

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
            start = len(lead) + PREFIX  # where a row's fingerprint starts
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
                        if fp == LAST_FP:
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

    def _entries(self, bucket: Bucket, rows: list[bytes]) -> list[tuple[bytes, Entry]]:
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
                    entry = decode_entry(row[8:].decode(), value)
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
        prefix = exact_prefix(h)
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
                entry = cached[0] if cached is not None and cached[1] == value else decode_entry(eid.decode(), value)
                if horizon is None or entry.ts >= horizon:
                    out.setdefault(entry.event_id, entry)
        return list(out.values())

    def get_record(self, key: str) -> bytes | None:
        """The record ``key``: a store-wide one, else the newest kept in a live time bucket."""
        raw = key.encode()
        value = self._records.get(raw)
        if value is None and self.bucket_ms:
            for bucket in self._live():
                value = bucket.cf[RECORDS].get(bucket.lead[RECORDS] + raw)
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
        batch.put(bucket.lead[RECORDS] + key.encode(), bytes(value), bucket.handle[RECORDS])
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
        return sum(
            self._scan(bucket, kind) for bucket in self._buckets.values() for kind in ("tables", "entries", "exact")
        )

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
