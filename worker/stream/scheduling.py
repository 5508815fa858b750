"""The order the worker's consumer hands records to its streams: by append time across partitions.

A fetch brings each partition's records in a chunk, and Faust hands a chunk set to the streams
round-robin, one record of each partition in turn. That keeps partitions level by count, not by
time: in a backlog, a partition with fewer records an hour runs ahead in append time, and a
copy it holds was decided, and published unique, before the original still waiting in a slower
partition was read (a correction followed; docs/reliability.md). Merged by timestamp, one
worker reads a fetched backlog in the total order, as ``neardup scan`` reads a file; each
partition keeps its own order.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator, Mapping
from typing import Any

from faust.transport.utils import DefaultSchedulingStrategy
from faust.types import TP


class AppendTimeOrder(DefaultSchedulingStrategy):
    """Records of every partition fetched, merged by timestamp (then partition, as the total
    order breaks ties); each partition's records stay in offset order."""

    def iterate(self, records: Mapping[TP, list[Any]]) -> Iterator[tuple[TP, Any]]:
        runs = [
            [(_stamp(record), tp.partition, n, tp, record) for n, record in enumerate(buffer)]
            for tp, buffer in records.items()
        ]
        for _, _, _, tp, record in heapq.merge(*runs, key=lambda item: item[:2]):
            yield tp, record


def _stamp(record: Any) -> int:
    """A record's timestamp (ms); one without (an old message format) sorts first."""
    stamp = getattr(record, "timestamp", None)
    return stamp if isinstance(stamp, int) else -1
