"""The block index's reads: one seek per table and one multi-get of the exact keys, whatever the retention.

A probe reads the shared ``tables`` and ``exact`` families (:mod:`worker.state.layout`) and
looks up the entries their rows and records name in their buckets' families, newest bucket
first; rows and records of a bucket that is no longer live are skipped
(:mod:`worker.state.buckets`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import islice
from typing import cast

from rocksdict import ReadOptions

from worker.engine.blocks import Plan
from worker.engine.match import Candidate, Entry
from worker.state.buckets import TimeBuckets
from worker.state.layout import (
    ENTRIES,
    LAST_FP,
    ONLY,
    PREFIX,
    REF,
    SUFFIX,
    Bucket,
    decode_entry,
    exact_prefixes,
    exact_records,
)
from worker.state.pending import Pending

# A filter of stored entries by (event id, sketch), applied before an entry is built.
Keep = Callable[[str, bytes], bool]


class Reads(TimeBuckets):
    """Queries of :class:`worker.state.index.BlockIndex` (which sets these fields)."""

    plan: Plan
    _prefix_read: ReadOptions
    _pending: Pending | None  # the open deferred block's adds
    _recent_limit: int

    def _tables(self, tables: Sequence[int] | None) -> Sequence[int]:
        if tables is None:
            return range(len(self.plan.tables))
        for t in tables:
            if not 0 <= t < len(self.plan.tables):
                raise ValueError(f"table {t} is not in plan {self.plan.name}")
        return tables

    def query(
        self, fingerprint: int, max_distance: int, tables: Sequence[int] | None = None, order: int | None = None
    ) -> list[Candidate]:
        """Every stored entry in the window sharing a key with ``fingerprint`` and within ``max_distance``, each once;
        the window an event of arrival ``order`` sees (:meth:`horizon_before`).

        Completeness holds up to ``plan.k``; farther entries appear only if they share a key.
        """
        keys = self.plan.keys(fingerprint)
        prefixes = [bytes((t,)) + keys[t].to_bytes(4, "big") for t in self._tables(tables)]
        hits = self._scan_tables(prefixes, fingerprint, max_distance)
        if self._pending is not None:
            self._staged_rows(self._pending, hits, prefixes, fingerprint, max_distance)
        horizon = self.horizon_before(order)
        by_bucket: dict[bytes, list[bytes]] = {}
        for row in hits:
            by_bucket.setdefault(row[-SUFFIX:], []).append(row)
        out: dict[tuple[str, int], Candidate] = {}  # each event once: an id re-sent with another text is two
        for bucket in self._live() if hits else ():  # newest first
            rows = by_bucket.get(bucket.suffix)
            if not rows:
                continue
            for row, entry in self._entries(bucket, rows):
                if entry.fingerprint.to_bytes(8, "big") != row[:8]:
                    continue  # a stale row of an event since re-added with another fingerprint
                if horizon is not None and entry.ts < horizon:
                    continue
                out.setdefault((entry.event_id, entry.order), Candidate(entry, hits[row]))
        return list(out.values())

    @staticmethod
    def _staged_rows(
        pending: Pending, hits: dict[bytes, int], prefixes: list[bytes], fingerprint: int, max_distance: int
    ) -> None:
        """Add the open deferred block's rows under ``prefixes`` within ``max_distance`` to ``hits``."""
        for prefix in prefixes:
            for row in pending.rows.get(prefix, ()):
                distance = (int.from_bytes(row[:8], "big") ^ fingerprint).bit_count()
                if distance <= max_distance:
                    hits[row] = distance

    def _scan_tables(self, prefixes: list[bytes], fingerprint: int, max_distance: int) -> dict[bytes, int]:
        """``fingerprint | ref | bucket`` of every row under ``prefixes`` within ``max_distance``, with its distance."""
        hits: dict[bytes, int] = {}
        # Entries of one fingerprint share every table of the set they were added with
        # (an add writes them all at once; equal fingerprints give equal keys, hence equal
        # tables of a partition), so a fingerprint's rows read in one table are all of its
        # rows: later tables skip them with one seek. A story reposted N times then costs
        # N rows plus a seek per table, not N rows per table.
        read: set[bytes] = set()
        fp_at = slice(PREFIX, PREFIX + 8)
        it = self._tables_cf.iter(self._prefix_read)
        for prefix in prefixes:
            fresh: set[bytes] = set()
            it.seek(prefix)
            while it.valid():
                row = it.key()
                fp = row[fp_at]
                if fp in read:
                    if fp == LAST_FP:
                        break
                    it.seek(prefix + (int.from_bytes(fp, "big") + 1).to_bytes(8, "big"))
                    continue
                distance = (int.from_bytes(fp, "big") ^ fingerprint).bit_count()
                if distance <= max_distance:
                    hits[row[PREFIX:]] = distance
                fresh.add(fp)
                it.next()
            read |= fresh
        del it
        return hits

    def _entries(self, bucket: Bucket, rows: list[bytes]) -> list[tuple[bytes, Entry]]:
        """The stored entries of table rows (``fingerprint | ref | bucket``), from memory where recent."""
        entries = self._by_ref(bucket, ENTRIES, [row[8:-SUFFIX] for row in rows])
        return [(row, entry) for row, entry in zip(rows, entries, strict=True) if entry is not None]

    def _by_ref(self, bucket: Bucket, kind: str, refs: list[bytes], keep: Keep | None = None) -> list[Entry | None]:
        """The entries of keyspace ``kind`` of ``bucket`` named by ``refs`` (None where there is
        none, or ``keep`` refuses its event id and sketch), from memory where recent."""
        recent = self._recent
        lead = bucket.lead[kind]
        found: list[Entry | None] = []
        missing: list[int] = []
        staged = {} if self._pending is None else self._pending.entries
        number = bucket.number
        for i, ref in enumerate(refs):
            place = (number, lead + ref)
            entry = staged.get(place)
            if entry is not None:  # staged in the open deferred block: what its write leaves there
                found.append(entry if keep is None or keep(entry.event_id, entry.sketch) else None)
                continue
            cached = recent.get(place)
            if cached is None:
                found.append(None)
                missing.append(i)
            else:
                found.append(Entry.trusted(cached) if keep is None or keep(cached[0], cached[4]) else None)
        if missing:
            keys = [lead + refs[i] for i in missing]
            values = cast(list[bytes | None], bucket.cf[kind].get([*keys]))
            for i, key, value in zip(missing, keys, values, strict=True):
                if value is not None:
                    entry = decode_entry(value)
                    self._remember(bucket.number, key, entry)
                    found[i] = entry if keep is None or keep(entry.event_id, entry.sketch) else None
        return found

    def query_exact(self, h: int) -> list[Entry]:
        """Every entry in the window stored under exactly ``h``."""
        return self.query_exact_many([h])

    def query_exact_many(self, keys: Sequence[int], keep: Keep | None = None, order: int | None = None) -> list[Entry]:
        """Every entry in the window (as for :meth:`query`) stored under any of ``keys``, each
        event once: one multi-get for all of them, as a short text has a dozen keys. ``keep``
        (event id, sketch): entries it refuses are left out unbuilt."""
        if not keys:
            return []
        full = exact_prefixes(keys)
        if self._pending is None:
            self._exact_read = {}
        values = self._read_exact(full)
        pending = self._pending
        if pending is not None and not pending.exact.keys().isdisjoint(full):  # what the block's write will leave
            live = self._live_suffixes
            values = [
                pending.exact_value(k, v, live) if k in pending.exact else v for k, v in zip(full, values, strict=True)
            ]
        if not any(values):  # most probes: keys no event was stored under
            return []
        records: set[bytes] = set()  # an event found under several keys is read once
        # A story's keys often hold the very same records: split each distinct value once.
        for value in set(values):
            if value:
                records.update(exact_records(value))
        if not records:
            return []
        by_place: dict[tuple[bytes, bytes], list[bytes]] = {}  # (bucket, keyspace lead) -> refs
        for record in records:
            by_place.setdefault((record[REF : REF + SUFFIX], record[REF + SUFFIX :]), []).append(record[:REF])
        horizon = self.horizon_before(order)
        out: dict[tuple[str, int], Entry] = {}  # each event once, as for table rows
        for bucket in self._live():  # newest first
            for kind in (ENTRIES, ONLY):
                refs = by_place.get((bucket.suffix, bucket.lead[kind]))
                for entry in self._by_ref(bucket, kind, refs, keep) if refs else ():
                    if entry is not None and (horizon is None or entry.ts >= horizon):
                        out.setdefault((entry.event_id, entry.order), entry)
        return list(out.values())

    def _read_exact(self, full: list[bytes]) -> list[bytes | None]:
        """The stored values of exact keys; kept, as what the add that follows appends to, until
        a write. Inside a deferred block, where the store does not change until its end, a key
        read before is not read again."""
        read = self._exact_read
        try:  # inside a deferred block its keys were read up front
            return [read[key] for key in full]
        except KeyError:
            missing = [key for key in full if key not in read]
        read.update(zip(missing, cast(list[bytes | None], self._exact_cf.get([*missing])), strict=True))
        return [read[key] for key in full]

    def _remember(self, number: int | None, key: bytes, entry: Entry) -> None:
        """Keep a recently added or read entry decoded, by its bucket and key there: near-duplicates
        cluster in time, so the same few entries are candidates of every table of every copy,
        and reading and decoding one was most of a probe."""
        recent = self._recent
        if len(recent) >= self._recent_limit:
            for key_ in list(islice(recent, self._recent_limit // 4 or 1)):
                del recent[key_]
        recent[(number, key)] = entry.fields()
