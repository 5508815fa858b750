"""How the block index lays out its keys in RocksDB, and its time buckets.

Two families hold what a probe reads, for every time bucket at once, so that a probe costs
one seek per table and one read of the exact keys however many buckets are live:

``tables``   one row per (table, stored fingerprint): ``table(1) | key(4) | fingerprint(8) | ref(8) |
             bucket(2)``, empty value. The fixed 5-byte prefix (table | key) is one seek; a
             prefix bloom filter skips files without it. The fingerprint sits in the row key, so
             the distance is known without a read; the bucket tells where the entry lives.
``exact``    ``hash(16) -> record*``: every event stored under an exact hash (texts too short
             for SimHash, short texts' bands, the anchors), a record ``ref(8) | bucket(2) |
             where(1)`` each, ``where`` the lead byte of the keyspace its entry is in. One
             read of a key returns them all: a short text's dozen keys each name the same few
             copies of a story, and a row each made a probe read and decode them a dozen times.
             An add appends its record (read, then write the value); an expired bucket's purge
             deletes the keys its log names that name no live event any more. Reads skip
             expired records; an append cuts them out (:func:`append_records`).

A *ref* is an 8-byte hash of the event id and its order (:func:`ref_of`): rows name their
event with it instead of repeating the id (ids are 15-40 bytes, and a fingerprint has ten
table rows). Being a function of the event it keeps a replayed add idempotent with no lookup;
of the order too, an id re-sent with another text (a new order) is a second entry, where a ref
of the id alone had the second text overwrite the first one's entry, and copies of the first
text stopped finding it.
Each time bucket keeps, in its own family ``bucket@n`` (dropped whole when it expires),
each key led by its keyspace's byte:

``entries``  ``e | ref -> fingerprint(8) | order(16) | ts(8) | id length(2) | event id | sketch``,
             written once per event however many tables and anchors it has, and read only for
             rows within ``max_distance``.
``only``     ``o | ref -> entry``, the same for a text stored under exact hashes only: its
             expiry has no table rows to delete, which it finds by walking ``entries``.
``log``      ``x | ref(8) | first hash(16) -> every hash(16)`` of one add: the exact keys this
             bucket wrote records to, so that its expiry can find them (its table rows follow
             from its entries' fingerprints). One row an add, not one a key: a short text has a dozen.
``records``  ``r | key -> bytes``: records that expire with the bucket (verdicts).

Store-wide: ``records`` (counters, checkpoints) and ``default`` (plan, bucket width,
fingerprint settings, watermark, layout version). Without retention there is one bucket, kept forever, whose
keyspaces are the families ``entries`` (``entries`` and ``only``, by their lead bytes) and
``records`` (no log: nothing expires). The bucket field of a row is the bucket number modulo
2^16: live buckets are never that far apart. Two events of one bucket whose refs collide (odds
about n^2 / 2^65 for n events a bucket) would share an entry: the later add replaces the
earlier, which stops being a candidate.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Container, Iterable, Iterator, Mapping
from collections.abc import Set as AbstractSet
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import NamedTuple

from rocksdict import (
    AccessType,
    ColumnFamily,
    DBCompressionType,
    Options,
    Rdict,
)

from worker.engine.blocks import MAX_TABLES, Plan
from worker.engine.match import Entry

PLAN_KEY = b"neardup:plan"
LAYOUT_KEY = b"neardup:layout"
LAYOUT = b"4"  # shared table and exact families (one seek per table whatever the retention), refs,
# an exact key's events packed in one value
BUCKET_KEY = b"neardup:bucket_ms"
# A worker's store records the changelog offset it is caught up to, and whose changelog it copies
# (a state directory can outlive its deployment): a store without them was made by a scan.
CHECKPOINT_RECORD = "changelog:next"
TOPIC_RECORD = "changelog:topic"
DIRTY_RECORD = "changelog:dirty"  # set while a batch's changes to the store are not in its changelog
FEATURES_KEY = b"neardup:features"  # the settings a text's stored fingerprint, sketch and keys depend on
WATERMARK_KEY = b"neardup:watermark"
RECORDS = "records"
TABLES, EXACT, ENTRIES, ONLY, LOG = "tables", "exact", "entries", "only", "log"
SHARED = (TABLES, EXACT)  # one family each, for every bucket
KINDS = (ENTRIES, ONLY, LOG, RECORDS)  # a bucket's own keyspaces
BUCKET = "bucket"  # the one family of a time bucket: ``bucket@<n>``
# Each keyspace's leading byte inside a bucket's family.
KIND_BYTE = {ENTRIES: b"e", ONLY: b"o", LOG: b"x", RECORDS: b"r"}
SUFFIX = 2  # bytes of a row's bucket field
MEMTABLE_BUDGET = 256 << 20
# Hash buckets of a shared family's memtable (8 bytes each, from the memtable's own budget):
# about ten exact keys, or table prefixes, a bucket in a full 64 MB memtable.
HASHED_MEMTABLE_BUCKETS = 1 << 16
WAL_BUDGET = 256 << 20
PREFIX = 5  # table id (1 byte) + block key (4 bytes)
EXACT_PREFIX = 16
# Prefix extractor lengths of the families probes seek in; a bucket's family is read by
# point lookups and whole scans, and filters whole keys.
PREFIXES = {TABLES: PREFIX, EXACT: EXACT_PREFIX}
LAST_FP = b"\xff" * 8
REF = 8  # bytes of a ref
RECORD = REF + SUFFIX + 1  # an exact key's record: ref, bucket, lead byte of the entry's keyspace
# An exact key names at most this many events, the first it was given. Every event a probe's
# keys name is a candidate to read and verify, so a key shared by a feed's template ("ALERT:
# disk usage on …") or by a post repeated a thousand times would make each probe cost as much
# as the events before it; a copy is decided against the earliest, which stay.
MAX_KEY_RECORDS = 32
RECENT_ENTRIES = 32_768  # decoded entries kept per index by default (a stream partition's)
COMPRESSION = {
    "none": DBCompressionType.none,
    "lz4": DBCompressionType.lz4,
    "zstd": DBCompressionType.zstd,
    "snappy": DBCompressionType.snappy,
}


def check_fits(plan: Plan, compression: str) -> None:
    """Refuse a plan whose keys this layout cannot hold, or an unknown compression, before
    any file of an index is made."""
    if plan.f > 64:
        raise ValueError(f"plan f={plan.f}: stored fingerprints are at most 64 bits")
    if len(plan.tables) > MAX_TABLES:
        raise ValueError(f"plan has {len(plan.tables)} tables; table ids are one byte (at most {MAX_TABLES})")
    if compression not in COMPRESSION:
        raise ValueError(f"compression {compression!r} is not one of {sorted(COMPRESSION)}")


def bound_info_log(options: Options) -> None:
    """A store's RocksDB info LOG kept small, with two old ones at most: every open rolls it to
    a LOG.old file, RocksDB keeps a thousand of them by default, and a store lives for months."""
    options.set_keep_log_file_num(2)
    options.set_max_log_file_size(4 << 20)


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


def ref_of(event_id: bytes, order: int) -> bytes:
    """The 8 bytes that name an event (an id at its order) in table rows and exact records and
    key its entry."""
    return hashlib.blake2b(order.to_bytes(16, "big") + event_id, digest_size=REF).digest()


class Packed(NamedTuple):
    """An entry with the bytes a store writes of it (its ref and its value), made once: a
    worker stores one event in each of its index partitions that the event's keys reach."""

    entry: Entry
    ref: bytes
    value: bytes


def pack(entry: Entry) -> Packed:
    return Packed(entry, ref_of(entry.event_id.encode(), entry.order), encode_entry(entry))


def encode_entry(entry: Entry) -> bytes:
    eid = entry.event_id.encode()
    if len(eid) >= 1 << 16:
        raise ValueError(f"event id of {len(eid)} bytes: at most 65535 are stored")
    return b"".join(
        (
            entry.fingerprint.to_bytes(8, "big"),
            entry.order.to_bytes(16, "big"),
            entry.ts.to_bytes(8, "big", signed=True),
            len(eid).to_bytes(2, "big"),
            eid,
            entry.sketch,
        )
    )


def decode_entry(value: bytes) -> Entry:
    end = 34 + int.from_bytes(value[32:34], "big")
    return Entry(
        event_id=bytes(value[34:end]).decode(),
        fingerprint=int.from_bytes(value[0:8], "big"),
        order=int.from_bytes(value[8:24], "big"),
        ts=int.from_bytes(value[24:32], "big", signed=True),
        sketch=bytes(value[end:]),
    )


def exact_prefixes(keys: Iterable[int]) -> list[bytes]:
    """Exact keys' bytes. Made again at each use: ``to_bytes`` costs less than a cache's hit,
    and one call a list less than one a key (a batch's shares make ten of them a share)."""
    try:
        return [h.to_bytes(EXACT_PREFIX, "big") for h in keys]
    except OverflowError as exc:  # negative, or 2^128 and over
        raise ValueError(f"exact hashes must be unsigned integers below 2^128 ({exc})") from None


def exact_records(value: bytes) -> list[bytes]:
    """The records of one exact key's value."""
    return [value[at : at + RECORD] for at in range(0, len(value), RECORD)]


def append_records(old: bytes | None, new: Iterable[bytes], live: AbstractSet[bytes]) -> bytes:
    """An exact key's value after an add of ``new`` records: each event (ref and bucket) once,
    a record of an event already there replaced, a new one dropped once the key names
    ``MAX_KEY_RECORDS`` live events. Records of buckets not in ``live`` are cut out when the
    oldest record is one of them or the key is full; until then reads skip them, and a purge
    deletes a key only once none of its records lives (:func:`any_live`)."""
    value = old or b""
    if value and value[REF : REF + SUFFIX] not in live:
        value = live_records(value, live)
    for record in new:
        at = value.find(record[: REF + SUFFIX])
        while at != -1 and at % RECORD:  # a match across two records is no match
            at = value.find(record[: REF + SUFFIX], at + 1)
        if at != -1:
            value = value[:at] + record + value[at + RECORD :]
            continue
        if len(value) >= MAX_KEY_RECORDS * RECORD and not _all_live(value, live):
            value = live_records(value, live)
        if len(value) < MAX_KEY_RECORDS * RECORD:
            value = value + record
    return value


def live_records(value: bytes, live: Container[bytes]) -> bytes:
    """An exact key's value without the records of buckets not in ``live``."""
    return b"".join(
        value[at : at + RECORD] for at in range(0, len(value), RECORD) if value[at + REF : at + REF + SUFFIX] in live
    )


def _all_live(value: bytes, live: AbstractSet[bytes]) -> bool:
    """Whether every record of an exact key's value is of a bucket in ``live``: asked at each
    append to a full key (a template's), where most keys are full of live events and a
    set of their buckets costs half of cutting nothing out."""
    return {value[at + REF : at + REF + SUFFIX] for at in range(0, len(value), RECORD)} <= live


def any_live(value: bytes, live: Container[bytes]) -> bool:
    """Whether an exact key's value names an event of a bucket in ``live``. The newest record,
    appended last, is looked at first: a key the purge of its oldest bucket reads mostly
    still names a later event."""
    if value[-RECORD + REF : -1] in live:
        return True
    return any(value[at + REF : at + REF + SUFFIX] in live for at in range(0, len(value) - RECORD, RECORD))


BUCKETS = 8  # time buckets of a retention window (one more fills while the oldest expires)


def bucket_width(retention_ms: int | None, buckets: int) -> int:
    """Width of one time bucket; 0 means unbucketed (no retention)."""
    if retention_ms is None:
        return 0
    if retention_ms <= 0:
        raise ValueError(f"retention_ms {retention_ms!r} must be positive")
    if buckets < 2:
        raise ValueError(f"buckets {buckets!r} must be at least 2 (one filling, one expiring)")
    return -(-retention_ms // (buckets - 1))


def _retention(retention_ms: float, digits: int) -> str:
    """A retention as a person sets it, in days to ``digits`` significant digits."""
    return f"a retention of {retention_ms / 86_400_000:.{digits}g} days" if retention_ms else "no retention"


class StoreLayoutError(ValueError):
    """The index on disk was written in a layout this version does not read."""


class StoreMismatch(ValueError):
    """A store, or the changelog it is restored from, was written with another plan or time
    buckets than the settings that open it: no event can be decided right until they agree."""


def misfit(
    path: str | os.PathLike[str], plan: Plan, retention_ms: int, features: Mapping[str, object] | None = None
) -> str | None:
    """Why the index store at ``path`` does not fit ``plan``, ``retention_ms``'s time buckets and
    ``features`` (None: it does, or there is none), read without opening it for writing: a
    worker asks before it joins its group, a scan before it opens its output."""
    if not os.path.exists(os.path.join(path, "CURRENT")):
        return None
    with read_only(path) as db:
        return misfit_of(db, path, plan, retention_ms, features)


def misfit_of(
    db: Rdict,
    path: str | os.PathLike[str],
    plan: Plan,
    retention_ms: int,
    features: Mapping[str, object] | None = None,
) -> str | None:
    """:func:`misfit` of the store at ``path``, opened (read-only) as ``db``."""
    bucket_ms = bucket_width(retention_ms, BUCKETS)
    raw_plan, raw_buckets, raw_features = db.get(PLAN_KEY), db.get(BUCKET_KEY), db.get(FEATURES_KEY)
    stored = None if raw_plan is None else Plan.from_json(bytes(raw_plan).decode())
    width = 0 if raw_buckets is None else int(bytes(raw_buckets))
    why = [] if stored is None else plan_differs(stored, plan)
    if stored is not None and width != bucket_ms:
        # The store's read back from its bucket width, to six digits (a width is the retention
        # divided and rounded up: 3 days came back as 3.000000046); the one asked for as given,
        # to ten (7 days and 7.0000001 are two stores).
        built = _retention(width * (BUCKETS - 1), 6)
        asked = _retention(retention_ms if bucket_ms else 0, 10)
        why.append(f"{built} (time buckets of {width} ms), not {asked} (buckets of {bucket_ms} ms)")
    why.extend(features_differ(None if raw_features is None else json.loads(bytes(raw_features)), features))
    return f"{path} was built with {' and '.join(why)}" if why else None


def plan_differs(stored: Plan, plan: Plan) -> list[str]:
    """``plan`` against the one a store or deployment was made with, as ``plan A (k=..), not B (k=..)``."""
    return [] if stored == plan else [f"plan {stored.name} (k={stored.k}), not {plan.name} (k={plan.k})"]


# A feature setting added after stores and deployments began to record theirs: what every one
# recorded before it was made with.
RECORDED_BEFORE: dict[str, object] = {"NEARDUP_FOLD_WORDS": False}


def features_differ(kept: Mapping[str, object] | None, features: Mapping[str, object] | None) -> list[str]:
    """Each setting whose ``kept`` value ``features`` changes, as ``NAME=kept, not given``; a
    store from before the record, or a caller that gives none, differs in nothing. A setting
    the record does not name was made with its value in :data:`RECORDED_BEFORE`, else any."""
    if kept is None or features is None:
        return []
    was = {name: kept.get(name, RECORDED_BEFORE.get(name, value)) for name, value in features.items()}
    return [f"{name}={was[name]}, not {value}" for name, value in features.items() if was[name] != value]


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
