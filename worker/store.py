"""RocksDB adapter (rocksdict) holding the permuted-block tables of :mod:`worker.blocks`.

Column families:

``tables``   one row per (table, stored fingerprint): ``table(1) | key(4) | fingerprint(8) | event id``,
             empty value. The fixed 5-byte prefix (table | key) is the bucket, so a probe of one
             table is ONE prefix scan; a prefix bloom filter skips files without the bucket.
             The fingerprint sits in the row key, so the distance is known without a read.
``entries``  ``event id -> fingerprint(8) | order(16) | ts(8) | sketch``, written once per event
             however many tables it is in, and read only for rows within ``max_distance``.
``exact``    ``hash(16) | event id -> entry``: texts too short for SimHash match on an exact hash.
``records``  small per-event records (seen ids, counters), ``str -> bytes``.
``default``  the persisted plan.

Every :meth:`BlockIndex.add` is one atomic ``WriteBatch`` written straight into the memtable,
so a query sees every entry added before it (read-your-writes) with no side buffer: measured,
buffering 1000 adds per batch saved only ~10-15 % of an add, less than a buffer that queries
must also consult would cost back.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Sequence

from rocksdict import (
    AccessType,
    BlockBasedOptions,
    Cache,
    DBCompressionType,
    Options,
    ReadOptions,
    Rdict,
    SliceTransform,
    WriteBatch,
    WriteOptions,
)

from worker.blocks import MAX_TABLES, Plan

_PLAN_KEY = b"neardup:plan"
_PREFIX = 5  # table id (1 byte) + block key (4 bytes)
_EXACT_PREFIX = 16
_FP = slice(_PREFIX, _PREFIX + 8)
_MAX_ORDER = 1 << 128
_COMPRESSION = {
    "none": DBCompressionType.none,
    "lz4": DBCompressionType.lz4,
    "zstd": DBCompressionType.zstd,
    "snappy": DBCompressionType.snappy,
}


@dataclass(frozen=True)
class Entry:
    """One stored event: where it is in the arrival order, its event time and verification sketch."""

    event_id: str
    fingerprint: int
    order: int
    ts: int
    sketch: bytes

    def __post_init__(self) -> None:
        if not 0 <= self.fingerprint < 1 << 64:
            raise ValueError(f"fingerprint {self.fingerprint!r} is not a 64-bit unsigned integer")
        if not 0 <= self.order < _MAX_ORDER:
            raise ValueError(f"order {self.order!r} must be in [0, 2^128)")
        if not -(1 << 63) <= self.ts < 1 << 63:
            raise ValueError(f"ts {self.ts!r} does not fit a signed 64-bit integer")


@dataclass(frozen=True)
class Candidate:
    """A stored entry sharing a table key with the probe, and its Hamming distance to it."""

    entry: Entry
    distance: int


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


class BlockIndex:
    """Near-duplicate candidate index: the plan's tables, an exact-hash keyspace and records.

    ``wal=False`` skips RocksDB's write-ahead log (faster adds); then :meth:`flush` and
    :meth:`close` write the memtables to disk and a crash loses what was added since.
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
    ) -> None:
        if plan.f > 64:
            raise ValueError(f"plan f={plan.f}: stored fingerprints are at most 64 bits")
        if len(plan.tables) > MAX_TABLES:
            raise ValueError(f"plan has {len(plan.tables)} tables; table ids are one byte (at most {MAX_TABLES})")
        if compression not in _COMPRESSION:
            raise ValueError(f"compression {compression!r} is not one of {sorted(_COMPRESSION)}")
        self.plan = plan
        self.path = Path(path)
        self._wal = wal
        cache = Cache(cache_bytes)
        codec = _COMPRESSION[compression]()

        def cf_options(prefix: int | None) -> Options:
            opts = Options(raw_mode=True)
            opts.create_if_missing(True)
            opts.create_missing_column_families(True)
            table = BlockBasedOptions()
            table.set_block_cache(cache)
            table.set_block_size(block_size)
            # Full (prefix) bloom filters held by the table readers, not in the block cache:
            # measured, a multi-MB filter block in a sharded 64 MB cache was evicted and re-read
            # on every seek (400 us per seek instead of 2 us).
            table.set_bloom_filter(10, False)
            opts.set_block_based_table_factory(table)
            opts.set_compression_type(codec)
            if prefix is not None:
                opts.set_prefix_extractor(SliceTransform.create_fixed_prefix(prefix))
                opts.set_memtable_prefix_bloom_ratio(0.1)
            return opts

        self._db = Rdict(
            str(self.path),
            cf_options(None),
            column_families={
                "tables": cf_options(_PREFIX),
                "entries": cf_options(None),
                "exact": cf_options(_EXACT_PREFIX),
                "records": cf_options(None),
            },
        )
        self._cf = {name: self._db.get_column_family(name) for name in ("tables", "entries", "exact", "records")}
        self._handle = {name: self._db.get_column_family_handle(name) for name in ("tables", "entries", "exact")}
        self._write = WriteOptions()
        self._write.disable_wal = not wal
        self._prefix_read = ReadOptions()
        self._prefix_read.set_prefix_same_as_start(True)
        self._closed = False
        try:
            self._check_plan()
        except BaseException:
            self.close()
            raise

    def _check_plan(self) -> None:
        stored = self._db.get(_PLAN_KEY)
        if stored is None:
            self._db.put(_PLAN_KEY, self.plan.to_json().encode(), self._write)
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
        names = [n for n in Rdict.list_cf(str(path)) if n != "default"]
        db = Rdict(
            str(path),
            Options(raw_mode=True),
            column_families={n: Options(raw_mode=True) for n in names},
            access_type=AccessType.read_only(False),
        )
        try:
            raw = db.get(_PLAN_KEY)
        finally:
            db.close()
        return None if raw is None else Plan.from_json(bytes(raw).decode())

    def _tables(self, tables: Sequence[int] | None) -> Sequence[int]:
        if tables is None:
            return range(len(self.plan.tables))
        for t in tables:
            if not 0 <= t < len(self.plan.tables):
                raise ValueError(f"table {t} is not in plan {self.plan.name}")
        return tables

    def add(self, entry: Entry, tables: Sequence[int] | None = None) -> None:
        """Store ``entry`` in the given tables (default all); visible to the next query at once."""
        keys = self.plan.keys(entry.fingerprint)
        eid = entry.event_id.encode()
        tail = entry.fingerprint.to_bytes(8, "big") + eid
        batch = WriteBatch(raw_mode=True)
        handle = self._handle["tables"]
        for t in self._tables(tables):
            batch.put(bytes((t,)) + keys[t].to_bytes(4, "big") + tail, b"", handle)
        batch.put(eid, _encode(entry), self._handle["entries"])
        self._db.write(batch, self._write)

    def remove(self, entry: Entry) -> None:
        """Delete ``entry`` from every table and the entry store (retention)."""
        keys = self.plan.keys(entry.fingerprint)
        eid = entry.event_id.encode()
        tail = entry.fingerprint.to_bytes(8, "big") + eid
        batch = WriteBatch(raw_mode=True)
        handle = self._handle["tables"]
        for t, key in enumerate(keys):
            batch.delete(bytes((t,)) + key.to_bytes(4, "big") + tail, handle)
        batch.delete(eid, self._handle["entries"])
        self._db.write(batch, self._write)

    def query(
        self, fingerprint: int, max_distance: int, tables: Sequence[int] | None = None
    ) -> list[Candidate]:
        """Every stored entry sharing a key with ``fingerprint`` and within ``max_distance``, each once.

        Completeness holds up to ``plan.k``; farther entries appear only if they share a key.
        """
        keys = self.plan.keys(fingerprint)
        hits: dict[bytes, int] = {}
        it = self._cf["tables"].iter(self._prefix_read)
        for t in self._tables(tables):
            prefix = bytes((t,)) + keys[t].to_bytes(4, "big")
            it.seek(prefix)
            while it.valid():
                row = it.key()
                stored = int.from_bytes(row[_FP], "big")
                distance = (stored ^ fingerprint).bit_count()
                if distance <= max_distance:
                    hits[row[_PREFIX:]] = distance
                it.next()
        del it
        if not hits:
            return []
        rows = list(hits)
        values = self._cf["entries"].get([row[8:] for row in rows])
        out: list[Candidate] = []
        for row, value in zip(rows, values):
            if value is None:
                continue
            entry = _decode(row[8:].decode(), value)
            if entry.fingerprint.to_bytes(8, "big") != row[:8]:
                continue  # a stale row of an event since re-added with another fingerprint
            out.append(Candidate(entry, hits[row]))
        return out

    def add_exact(self, h: int, entry: Entry) -> None:
        """Store ``entry`` under the exact hash ``h`` (texts too short for a meaningful SimHash)."""
        self._cf["exact"].put(_exact_prefix(h) + entry.event_id.encode(), _encode(entry), self._write)

    def query_exact(self, h: int) -> list[Entry]:
        """Every entry stored under exactly ``h``."""
        prefix = _exact_prefix(h)
        out: list[Entry] = []
        it = self._cf["exact"].iter(self._prefix_read)
        it.seek(prefix)
        while it.valid():
            key = it.key()
            if key[:_EXACT_PREFIX] != prefix:
                break
            out.append(_decode(key[_EXACT_PREFIX:].decode(), it.value()))
            it.next()
        del it
        return out

    def get_record(self, key: str) -> bytes | None:
        value = self._cf["records"].get(key.encode())
        return None if value is None else bytes(value)

    def put_record(self, key: str, value: bytes) -> None:
        self._cf["records"].put(key.encode(), bytes(value), self._write)

    def flush(self) -> None:
        """Make everything added so far durable (sync the WAL, or write memtables without one)."""
        if self._wal:
            self._db.flush_wal(True)
        else:
            for cf in self._cf.values():
                cf.flush(True)
            self._db.flush(True)

    def compact(self) -> None:
        """Flush and fully compact every keyspace (benchmarks measure the settled size)."""
        for cf in self._cf.values():
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
            for cf in self._cf.values():
                cf.flush(True)
            self._db.flush(True)
        # rocksdict keeps the DB lock while any column-family object is alive.
        self._cf.clear()
        self._handle.clear()
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
