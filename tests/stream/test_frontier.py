"""The frontier: how far every input partition is applied, counted only in batch order and only alone."""

from __future__ import annotations

from dataclasses import dataclass

from worker.stream.frontier import Frontier, appended


@dataclass
class _Msg:
    partition: int
    timestamp: float
    topic: str = "t"
    offset: int = 0
    key: bytes | None = None
    value: bytes | None = None


def test_every_partition_must_be_past_an_event_and_a_batch_counts_after_those_before_it() -> None:
    frontier = Frontier(partitions=2)
    frontier.reset(sole=True)
    first = frontier.begin({0: 100, 1: 90})
    second = frontier.begin({0: 130})
    third = frontier.begin({1: 140})
    assert frontier.caught_up_ms() is None
    assert not frontier.finish(second, applied=True)  # the batch before it may still bring notes
    assert frontier.caught_up_ms() is None
    assert frontier.finish(first, applied=True)
    assert frontier.caught_up_ms() == 90  # partition 1 only as far as the first batch
    assert frontier.finish(third, applied=True)
    assert frontier.caught_up_ms() == 130


def test_a_partition_never_seen_leaves_it_unknown() -> None:
    frontier = Frontier(partitions=3)
    frontier.reset(sole=True)
    frontier.finish(frontier.begin({0: 100, 1: 100}), applied=True)
    assert frontier.caught_up_ms() is None


def test_not_alone_a_failed_batch_or_a_new_assignment_stop_early_releases() -> None:
    frontier = Frontier(partitions=1)
    frontier.finish(frontier.begin({0: 100}), applied=True)
    assert frontier.caught_up_ms() is None  # no assignment yet said this worker owns everything

    frontier.reset(sole=True)
    frontier.finish(frontier.begin({0: 100}), applied=True)
    assert frontier.caught_up_ms() == 100
    frontier.finish(frontier.begin({0: 200}), applied=False)
    assert frontier.caught_up_ms() is None
    frontier.finish(frontier.begin({0: 300}), applied=True)
    assert frontier.caught_up_ms() is None  # until the next assignment


def test_a_batch_from_before_an_assignment_counts_for_nothing_and_holds_back_later_ones() -> None:
    frontier = Frontier(partitions=1)
    frontier.reset(sole=True)
    before = frontier.begin({0: 400})
    frontier.reset(sole=True)  # a rebalance while it ran: what it applied says nothing now
    after = frontier.begin({0: 500})
    assert not frontier.finish(after, applied=True)  # the batch before it may still bring notes
    assert frontier.caught_up_ms() is None
    assert frontier.finish(before, applied=True)
    assert frontier.caught_up_ms() == 500


def test_the_index_expires_by_it_only_once_alone_for_the_reorder_window() -> None:
    """Shares sent through Kafka before an assignment may still be on their way: an expired
    bucket cannot be corrected, so the index waits the reorder window out after each one."""
    now = [0.0]
    frontier = Frontier(partitions=1, settle_after_s=60, clock=lambda: now[0])
    frontier.reset(sole=True)
    frontier.finish(frontier.begin({0: 100}), applied=True)
    assert frontier.caught_up_ms() == 100, "held verdicts go early at once"
    assert frontier.settled_ms() is None
    now[0] = 60.0
    assert frontier.settled_ms() == 100
    frontier.reset(sole=True)
    frontier.finish(frontier.begin({0: 200}), applied=True)
    now[0] = 119.0
    assert frontier.settled_ms() is None
    now[0] = 120.0
    assert frontier.settled_ms() == 200
    frontier.reset(sole=False)
    now[0] = 500.0
    assert frontier.settled_ms() is None, "not alone"


def test_appended_takes_each_partitions_latest_time_in_ms() -> None:
    messages = [_Msg(0, 1.0004), _Msg(1, 2.0), _Msg(0, 1.5), _Msg(0, 1.2)]
    assert appended(messages)[0] == {0: 1500, 1: 2000}


def test_appended_takes_the_offset_after_each_partitions_last_record() -> None:
    messages = [_Msg(0, 1.0, offset=7), _Msg(1, 2.0, offset=3), _Msg(0, 1.5, offset=9)]
    assert appended(messages)[1] == {0: 10, 1: 4}


def test_a_partition_whose_log_reaches_past_what_was_applied_lags_at_its_applied_time() -> None:
    """A lone worker's backlog: partition 1's chunk ended at 90 while its log goes on."""
    frontier = Frontier(partitions=2)
    frontier.reset(sole=True)
    frontier.finish(frontier.begin({0: 300, 1: 90}, {0: 50, 1: 20}), applied=True)
    highwater = {0: 50, 1: 40}
    assert frontier.lagging_ms(lambda: highwater) == 90
    highwater[1] = 20  # read to its end: an idle partition holds nothing back
    assert frontier.lagging_ms(lambda: highwater) is None
    highwater[0] = 80
    assert frontier.lagging_ms(lambda: highwater) == 300
    assert frontier.lagging_ms(dict) is None, "no highwater known yet"
    frontier.reset(sole=False)
    frontier.finish(frontier.begin({0: 400, 1: 400}, {0: 60, 1: 30}), applied=True)
    assert frontier.lagging_ms(lambda: {0: 80, 1: 40}) is None, "not alone: other workers' notes come at any time"


def test_a_partition_with_nothing_applied_is_not_known_to_lag() -> None:
    frontier = Frontier(partitions=2)
    frontier.reset(sole=True)
    under_way = frontier.begin({0: 100, 1: 100}, {0: 5, 1: 5})
    assert frontier.lagging_ms(lambda: {0: 9, 1: 9}) is None  # the batch is not applied yet
    frontier.finish(under_way, applied=True)
    assert frontier.lagging_ms(lambda: {0: 9, 1: 5}) == 100


def test_an_events_topic_of_its_own_count_is_waited_for_partition_by_partition() -> None:
    """The input may have more partitions than the internal topics (only those are routed over
    NEARDUP_PARTITIONS): every one of them must be past an event."""
    frontier = Frontier(partitions=2)
    frontier.reset(sole=True, partitions=3)
    frontier.finish(frontier.begin({0: 100, 1: 100}), applied=True)
    assert frontier.caught_up_ms() is None, "partition 2 may still bring an earlier event"
    frontier.finish(frontier.begin({2: 90}), applied=True)
    assert frontier.caught_up_ms() == 90
