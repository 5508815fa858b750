"""The index stage's store for one ``{p}.probes`` partition: a :class:`BlockIndex` plus its changelog ops.

Each probe touches only its own table (``tables=[t]``) or the exact keyspace, so a partition
holds exactly the buckets routed to it, each bucket one RocksDB prefix scan, each stored
event's entry (fingerprint, order, ts, sketch) once however many of its tables landed here.

Every add is also recorded as a logical operation; the stage writes a batch's operations as
one changelog record (:mod:`worker.changelog`). Operations of one event within a batch are
merged into one ``[id, fingerprint, order, ts, sketch_b64, tables, exact_keys]``, so the
sketch travels once per event and partition, not once per table.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

from worker.blocks import Plan, hamming
from worker.store import BlockIndex, Candidate, Entry


class IndexPartition:
    """One partition's buckets, with the operations added since the last :meth:`take_ops`."""

    def __init__(self, path: Path, plan: Plan, retention_ms: int | None = None) -> None:
        self.index = BlockIndex(path, plan, retention_ms=retention_ms)
        self._ops: dict[tuple[str, int], list[Any]] = {}

    def candidates(self, fingerprint: int, table: int, max_distance: int) -> list[Candidate]:
        """Entries sharing ``fingerprint``'s key in block table ``table``, within ``max_distance``."""
        return self.index.query(fingerprint, max_distance, tables=[table])

    def exact_candidates(self, fingerprint: int, key: int) -> list[Candidate]:
        """Entries stored under exact key ``key`` (no distance bound, as in batch mode)."""
        return [Candidate(e, hamming(fingerprint, e.fingerprint)) for e in self.index.query_exact(key)]

    def add(self, entry: Entry, table: int | None = None, exact_key: int | None = None) -> None:
        """Store ``entry`` in one block table or under one exact key, and log it."""
        if exact_key is not None:
            self.index.add_exact(exact_key, entry)
        elif table is not None:
            self.index.add(entry, tables=[table])
        else:
            raise ValueError("add needs a table or an exact key")
        op = self._ops.get((entry.event_id, entry.order))
        if op is None:
            sketch = base64.b64encode(entry.sketch).decode("ascii")
            op = [entry.event_id, entry.fingerprint, entry.order, entry.ts, sketch, [], []]
            self._ops[(entry.event_id, entry.order)] = op
        if exact_key is not None:
            op[6].append(exact_key)
        else:
            op[5].append(table)

    def take_ops(self) -> list[Any]:
        ops = list(self._ops.values())
        self._ops.clear()
        return ops

    def apply(self, ops: list[Any]) -> None:
        """Re-add logged entries (restore); adding an entry again changes nothing."""
        for event_id, fp, order, ts, sketch, tables, exact_keys in ops:
            entry = Entry(str(event_id), int(fp), int(order), int(ts), base64.b64decode(sketch))
            if tables:
                self.index.add(entry, tables=[int(t) for t in tables])
            for key in exact_keys:
                self.index.add_exact(int(key), entry)

    def get_record(self, key: str) -> bytes | None:
        return self.index.get_record(key)

    def put_record(self, key: str, value: bytes) -> None:
        self.index.put_record(key, value)

    def close(self) -> None:
        self.index.close()
