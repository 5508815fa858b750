"""How the block index lays out its keys in RocksDB, and its time buckets.

Two families hold what a probe reads, for every time bucket at once, so that a probe costs
one seek per table and one per exact key however many buckets are live:

``tables``   one row per (table, stored fingerprint): ``table(1) | key(4) | fingerprint(8) | event id |
             bucket(2)``, empty value. The fixed 5-byte prefix (table | key) is one seek; a
             prefix bloom filter skips files without it. The fingerprint sits in the row key, so
             the distance is known without a read; the bucket tells where the entry lives.
``exact``    ``hash(16) | event id | bucket(2) -> entry``: texts too short for SimHash match on an
             exact hash, and the anchors.

and each time bucket keeps, in its own family ``bucket@n`` (dropped whole when it expires),
each key led by its keyspace's byte:

``entries``  ``e | event id -> fingerprint(8) | order(16) | ts(8) | sketch``, written once per event
             however many tables it is in, and read only for rows within ``max_distance``.
``log``      ``x | hash(16) | event id``: the exact rows this bucket wrote, so that its expiry can
             delete them (its table rows follow from its entries' fingerprints).
``records``  ``r | key -> bytes``: records that expire with the bucket (verdicts).

Store-wide: ``records`` (counters, checkpoints) and ``default`` (plan, bucket width,
watermark, layout version). Without retention there is one bucket, kept forever, whose
keyspaces are the families ``entries`` and ``records`` (no log: nothing expires). The bucket
field of a row is the bucket number modulo 2^16: live buckets are never that far apart.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from rocksdict import (
    AccessType,
    ColumnFamily,
    DBCompressionType,
    Options,
    Rdict,
)

from worker.engine.match import Entry

PLAN_KEY = b"neardup:plan"
LAYOUT_KEY = b"neardup:layout"
LAYOUT = b"2"  # shared table and exact families, one seek per table whatever the retention
BUCKET_KEY = b"neardup:bucket_ms"
WATERMARK_KEY = b"neardup:watermark"
RECORDS = "records"
TABLES, EXACT, ENTRIES, LOG = "tables", "exact", "entries", "log"
SHARED = (TABLES, EXACT)  # one family each, for every bucket
KINDS = (ENTRIES, LOG, RECORDS)  # a bucket's own keyspaces
BUCKET = "bucket"  # the one family of a time bucket: ``bucket@<n>``
# Each keyspace's leading byte inside a bucket's family.
KIND_BYTE = {ENTRIES: b"e", LOG: b"x", RECORDS: b"r"}
SUFFIX = 2  # bytes of a row's bucket field
MEMTABLE_BUDGET = 256 << 20
WAL_BUDGET = 256 << 20
PREFIX = 5  # table id (1 byte) + block key (4 bytes)
EXACT_PREFIX = 16
# Prefix extractor lengths of the families probes seek in; a bucket's family is read by
# point lookups and whole scans, and filters whole keys.
PREFIXES = {TABLES: PREFIX, EXACT: EXACT_PREFIX}
LAST_FP = b"\xff" * 8
RECENT_ENTRIES = 32_768  # decoded entries kept per index (~13 MB)
COMPRESSION = {
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


def encode_entry(entry: Entry) -> bytes:
    return (
        entry.fingerprint.to_bytes(8, "big")
        + entry.order.to_bytes(16, "big")
        + entry.ts.to_bytes(8, "big", signed=True)
        + entry.sketch
    )


def decode_entry(event_id: str, value: bytes) -> Entry:
    return Entry(
        event_id=event_id,
        fingerprint=int.from_bytes(value[0:8], "big"),
        order=int.from_bytes(value[8:24], "big"),
        ts=int.from_bytes(value[24:32], "big", signed=True),
        sketch=bytes(value[32:]),
    )


def exact_prefix(h: int) -> bytes:
    if not 0 <= h < 1 << (8 * EXACT_PREFIX):
        raise ValueError(f"exact hash {h!r} must be an unsigned integer below 2^128")
    return h.to_bytes(EXACT_PREFIX, "big")


def bucket_width(retention_ms: int | None, buckets: int) -> int:
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
class Bucket:
    """Where each keyspace of one time bucket (or of the whole store without retention) lives:
    its column family, and the bytes its keys start with there; ``suffix`` ends its rows in
    the shared families."""

    number: int | None
    cf: dict[str, Rdict]
    handle: dict[str, ColumnFamily]
    lead: dict[str, bytes]
    suffix: bytes = field(init=False)

    def __post_init__(self) -> None:
        self.suffix = bucket_suffix(self.number)


def bucket_suffix(number: int | None) -> bytes:
    """A row's bucket field: the bucket number modulo 2^16 (0 without retention)."""
    return ((number or 0) & 0xFFFF).to_bytes(SUFFIX, "big")


def bucket_family(number: int) -> str:
    """The name of time bucket ``number``'s column family."""
    return f"{BUCKET}@{number}"
