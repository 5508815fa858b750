"""The worker's consumer hands fetched records to its streams in append time across partitions."""

from __future__ import annotations

from typing import NamedTuple

from faust.types import TP

from worker.stream.scheduling import AppendTimeOrder


class Record(NamedTuple):
    offset: int
    timestamp: int | None


def test_partitions_are_merged_by_append_time_each_in_its_own_order() -> None:
    slow, fast = TP("t.events", 0), TP("t.events", 1)
    records = {
        slow: [Record(0, 100), Record(1, 400), Record(2, 900)],
        fast: [Record(0, 110), Record(1, 120), Record(2, 130), Record(3, 800)],
        TP("t.events", 2): [Record(0, 50), Record(1, 40)],  # a producer's clock went back: kept as read
    }
    read = [(tp.partition, r.offset) for tp, r in AppendTimeOrder().iterate(records)]
    assert read == [(2, 0), (2, 1), (0, 0), (1, 0), (1, 1), (1, 2), (0, 1), (1, 3), (0, 2)]


def test_a_record_without_a_timestamp_is_read_not_a_crash() -> None:
    records = {TP("t.events", 0): [Record(0, 5), Record(1, None)], TP("t.events", 1): [Record(0, None)]}
    read = [(tp.partition, r.offset) for tp, r in AppendTimeOrder().iterate(records)]
    assert sorted(read) == [(0, 0), (0, 1), (1, 0)] and read.index((0, 0)) < read.index((0, 1))
