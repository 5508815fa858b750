"""What one write of the block index will hold, and, in a deferred block, what its reads must see.

Every :meth:`worker.state.writes.Writes.add_many` stages its entries here, then writes them
at once. In a *deferred* block (:meth:`worker.state.writes.Writes.deferred`) the write waits
for the block's end, so a batch of events pays one RocksDB write, and each exact key it appends
to is rewritten once, instead of once an event. Meanwhile the block's reads see the staged keys
as if written (read-your-writes): a query merges the staged table rows and exact records into
what it read from the store, and resolves every row and record to the entry staged last under
its key, the one the write will leave there. So a query inside a block answers exactly what it
would after adds written one by one (``tests/state/test_deferred.py``).
"""

from __future__ import annotations

from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

from rocksdict import WriteBatch

from worker.engine.match import Entry
from worker.state.layout import PREFIX, append_records


@dataclass
class Pending:
    """One write being staged: its RocksDB batch and bookkeeping, and with ``overlay`` the reads'
    view of its keys (``None`` stands for the one bucket of an index without retention)."""

    batch: WriteBatch
    overlay: bool = False
    stored: int = 0  # entries staged (an entry older than the window is not)
    kept: int = 0  # records staged
    fingerprints: dict[tuple[int | None, bytes], int] = field(default_factory=dict)  # (bucket, ref) -> staged fp
    exact: dict[bytes, list[bytes]] = field(default_factory=dict)  # exact key -> records to append to it
    added: list[tuple[int | None, bytes, Entry]] = field(default_factory=list)  # (bucket, entry key, entry)
    rows: dict[bytes, list[bytes]] = field(default_factory=dict)  # table | block key -> fp | ref | bucket
    entries: dict[tuple[int | None, bytes], Entry] = field(default_factory=dict)  # (bucket, entry key) -> entry
    records: dict[tuple[int | None, str], bytes] = field(default_factory=dict)  # (bucket, record key) -> value
    # exact key -> (the stored value merged onto, records of :attr:`exact` merged, the value made)
    merged: dict[bytes, tuple[bytes | None, int, bytes]] = field(default_factory=dict)

    def show(self, number: int | None, key: bytes, entry: Entry, rows: list[bytes]) -> None:
        """Make a staged entry (under ``key`` of bucket ``number``) and its table rows
        (prefix | tail) visible to the block's reads; its exact records are in :attr:`exact`."""
        self.added.append((number, key, entry))
        if not self.overlay:
            return
        self.entries[(number, key)] = entry
        for row in rows:
            self.rows.setdefault(row[:PREFIX], []).append(row[PREFIX:])

    def show_record(self, number: int | None, key: str, value: bytes) -> None:
        if self.overlay:
            self.records[(number, key)] = value

    def exact_value(self, key: bytes, stored: bytes | None, live: AbstractSet[bytes]) -> bytes:
        """The value the write will leave under exact ``key``, whose value in the store is
        ``stored``: its staged records appended, and records of buckets not in ``live`` cut as
        :func:`worker.state.layout.append_records` cuts them. Merged as they come, not again at
        each read: a template's keys take a record from most events of a batch, and every probe
        reads them. (Merged again from the start should the stored value have changed meanwhile.)"""
        records = self.exact[key]
        if stored is None and len(records) == 1:  # most keys of a block: new, and named by one of its events
            return records[0]
        base, done, value = self.merged.get(key, (stored, 0, stored or b""))
        if base != stored:
            done, value = 0, stored or b""
        if done < len(records):
            value = append_records(value, records[done:], live)
            self.merged[key] = (stored, len(records), value)
        return value
