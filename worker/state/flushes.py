"""A store set's flush is one changelog record per partition, or several when it is large.

Kafka refuses records over 1 MiB, so a partition's operations of one flush are split into
chunks of at most 512 KiB (:func:`topology.codec.encode_chunks`). A worker killed between
two chunks leaves the first ones in the log without the rest, and a restore that applied
them would hold half a batch: a verdict stored without the outbox entry that publishes it,
whose input, replayed, would then count as answered and never be published. So each chunk's
record key names its flush and its place in it (:func:`chunk_keys`), and a restore applies a
flush's chunks only once all of them are in (:class:`Reassembly`); a flush is known to be cut
short when the next one begins, or the log ends, before its last chunk. A record whose key
names no place (a flush of one record, or a record written before this) is whole.
"""

from __future__ import annotations

import logging
import uuid
from typing import Any

log = logging.getLogger("neardup.worker")


def chunk_keys(count: int) -> list[bytes]:
    """Record keys for the ``count`` chunks of one flush: unique (compaction must keep every
    record), and for more than one chunk, ``<flush>:<i>/<count>``."""
    flush = uuid.uuid4().hex
    if count == 1:
        return [flush.encode()]
    return [f"{flush}:{i}/{count}".encode() for i in range(1, count + 1)]


def _place(key: bytes | None) -> tuple[str, int, int] | None:
    """``(flush, i, count)`` of a chunk's key, or None for a whole record."""
    text = (key or b"").decode("ascii", "replace")
    flush, _, place = text.rpartition(":")
    index, slash, count = place.partition("/")
    if not flush or not slash or not index.isdigit() or not count.isdigit():
        return None
    return flush, int(index), int(count)


class Reassembly:
    """Feeds a restore the operations of whole flushes only, in log order."""

    def __init__(self, where: str) -> None:
        self._where = where
        self._flush: str | None = None
        self._held: list[list[Any]] = []
        self.dropped = 0  # chunks of flushes that never completed

    def feed(self, key: bytes | None, ops: list[Any]) -> list[list[Any]]:
        """The operation lists to apply now, given one record (its key and decoded operations)."""
        place = _place(key)
        if place is None:  # whole; with exactly-once outputs another producer's records may
            return [ops]  # come between two chunks (outbox deletions, never the same keys)
        flush, index, count = place
        if index == 1 or flush != self._flush or index != len(self._held) + 1:
            self._drop()
            if index != 1:  # the rest of a flush whose start is not in the log: never whole
                self.dropped += 1
                return []
            self._flush = flush
        self._held.append(ops)
        if index < count:
            return []
        whole, self._held, self._flush = self._held, [], None
        return whole

    def finish(self) -> None:
        """The end of the replay: a flush still incomplete is left out."""
        self._drop()

    def _drop(self) -> None:
        if self._held:
            log.warning("%s: left out %d chunk(s) of a flush that never completed", self._where, len(self._held))
            self.dropped += len(self._held)
        self._held, self._flush = [], None
