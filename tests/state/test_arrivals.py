"""The newest event time by arrival order (worker.state.arrivals): what each event would have
seen of the window had the store received everything in arrival order, as scan does."""

from __future__ import annotations

from pathlib import Path

from topology.stages import total_order
from worker.engine.blocks import plan_for
from worker.engine.match import Entry
from worker.state.arrivals import Arrivals
from worker.state.index import BlockIndex

DAY = 86_400_000
T0 = 1_780_000_000_000  # an arrival time, ms


def at(ms: int, offset: int = 0) -> int:
    """The total order of a record that arrived ``ms`` after T0."""
    return total_order(T0 + ms, 0, offset)


def test_in_arrival_order_the_newest_before_an_event_is_the_newest_so_far() -> None:
    arrivals = Arrivals(window_ms=60_000)
    for n, ts in enumerate([5, 9, 7, 12]):
        assert arrivals.before(at(n)) == (max([5, 9, 7, 12][:n]) if n else None)
        arrivals.add(at(n), ts)
    assert arrivals.before(at(10)) == arrivals.before(None) == 12


def test_an_event_stored_early_is_not_seen_by_those_that_arrived_before_it() -> None:
    arrivals = Arrivals(window_ms=60_000)
    arrivals.add(at(0), 100)
    arrivals.add(at(20), 100 + 8 * DAY)  # arrived last, stored first
    assert arrivals.before(at(10)) == 100
    assert arrivals.before(at(30)) == 100 + 8 * DAY
    arrivals.add(at(10), 160)
    assert arrivals.before(at(15)) == 160
    assert arrivals.before(at(30)) == 100 + 8 * DAY
    assert arrivals.settled is None, "nothing is settled while an earlier arrival can still come"


def test_events_of_one_millisecond_do_not_see_each_other() -> None:
    arrivals = Arrivals(window_ms=60_000)
    arrivals.add(at(5, 0), 10)
    arrivals.add(at(5, 1), 50)
    assert arrivals.before(at(5, 2)) is None
    assert arrivals.before(at(6)) == 50


def test_what_left_the_window_is_settled_and_forgotten() -> None:
    arrivals = Arrivals(window_ms=1_000)
    for n in range(100):
        arrivals.add(at(n * 100), n)
    assert arrivals.settled is not None and 80 <= arrivals.settled < 90
    assert arrivals.before(at(0)) == arrivals.settled, "an arrival older than the window sees what settled"
    assert arrivals.before(at(99 * 100)) == 98


def test_once_every_earlier_arrival_is_stored_it_settles_without_the_window() -> None:
    arrivals = Arrivals(window_ms=60_000)
    for n, ts in enumerate([5, 9, 7, 12]):
        arrivals.add(at(n * 10), ts)
    assert arrivals.settled is None, "all four inside the window"
    assert arrivals.settle_before(T0 + 25)
    assert arrivals.settled == 9, "the newest of the three that arrived before 25 ms"
    assert arrivals.before(at(30)) == 9 and arrivals.before(at(35)) == 12, "later arrivals see what they saw"
    assert not arrivals.settle_before(T0 + 25), "nothing new to fold"
    assert not arrivals.settle_before(T0), "an arrival time already passed moves nothing"
    assert arrivals.settled == 9


def test_without_a_window_everything_is_settled_at_once() -> None:
    arrivals = Arrivals()
    arrivals.add(at(20), 500)
    arrivals.add(at(10), 300)
    assert arrivals.settled == 500 and arrivals.before(at(0)) == 500


def test_a_bucket_outlives_its_horizon_until_no_earlier_arrival_can_come(tmp_path: Path) -> None:
    """An index that takes adds out of arrival order keeps the oldest bucket readable for the
    events that arrived before the one that moved the window past it, and drops it once no
    such event can still come."""
    plan = plan_for(k=3, expected=1_000_000)
    with BlockIndex(tmp_path / "ix", plan, retention_ms=7 * DAY, reorder_ms=60_000) as index:
        story = Entry("story", 0x0123_4567_89AB_CDEF, at(0), T0, b"s" * 130)
        index.add(story)
        index.add(Entry("newer", 0x7EDC_BA98_7654_3210, at(20), T0 + 8 * DAY, b"n" * 130))
        assert T0 // index.bucket_ms in index.live_buckets
        late_copy = index.query(story.fingerprint, 3, order=at(30))
        early_copy = index.query(story.fingerprint, 3, order=at(10))
        assert late_copy == [], "behind the window of an event that arrived after the newer one"
        assert [c.entry.event_id for c in early_copy] == ["story"]
        assert index.add(Entry("copy", story.fingerprint, at(10), T0 + 60_000, b"s" * 130)), "stored: not late"
        for n in range(3):  # arrivals go on well past the reorder window
            index.add(Entry(f"later{n}", 0x1111_2222_3333_4444 + n, at(90_000 * (n + 1)), T0 + 8 * DAY + n, b"x"))
        assert index.query(story.fingerprint, 3, order=at(10)) == []
        assert T0 // index.bucket_ms not in index.live_buckets


def test_a_bucket_expires_as_soon_as_every_earlier_arrival_is_stored(tmp_path: Path) -> None:
    """A lone worker knows when every earlier arrival is stored: a backfill, whose event time
    races, then keeps one window live, not the weeks a minute of its arrivals spans."""
    plan = plan_for(k=3, expected=1_000_000)
    with BlockIndex(tmp_path / "ix", plan, retention_ms=7 * DAY, reorder_ms=60_000) as index:
        story = Entry("story", 0x0123_4567_89AB_CDEF, at(0), T0, b"s" * 130)
        index.add(story)
        index.add(Entry("newer", 0x7EDC_BA98_7654_3210, at(20), T0 + 8 * DAY, b"n" * 130))
        index.settle_before(T0 + 20)
        assert T0 // index.bucket_ms in index.live_buckets, "an event that arrived before the newer may still come"
        index.settle_before(T0 + 21)
        assert T0 // index.bucket_ms not in index.live_buckets, "dropped 21 ms of arrivals on, not 60 s"
        assert index.query(story.fingerprint, 3, order=at(30)) == []
        assert [c.entry.event_id for c in index.query(0x7EDC_BA98_7654_3210, 3, order=at(30))] == ["newer"]
