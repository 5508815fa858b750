"""The verdict store keeps every verdict through reopenings and compactions, and expires by arrival.

Gather states that never complete expire the same way.

A kill test once caught a worker deciding an event a second time, differently: RocksDB's TTL
through rocksdict wrapped its compaction filter once more at every reopening of a store in
a process, and with the filter nested three deep a compaction read bytes of the values as
timestamps and dropped most verdicts. The store no longer uses RocksDB's TTL.
"""

from __future__ import annotations

from pathlib import Path

from rocksdict import AccessType, Options, Rdict

from topology.stages import answer_item, total_order
from topology.verdicts import Intro, Published
from worker.state.verdicts import VerdictPartition
from worker.stream import gather
from worker.stream.hold import Hold
from worker.stream.metrics import Metrics
from worker.stream.verdict import expiry_slice
from worker.stream.verdict_batch import VerdictBatch

DAY_MS = 86_400_000
RETENTION_MS = 7 * DAY_MS


def decided(event_id: str, arrived_ms: int, ts: int | None = None) -> Published:
    """A first verdict of an input appended at ``arrived_ms`` (its event time ``ts``, default the same)."""
    order = total_order(arrived_ms, 0, 0)
    event = {"id": event_id, "text": f"text of {event_id}"}
    intro = Intro(event_id, order, arrived_ms if ts is None else ts, "00ff", 1, event)
    return gather.decide(gather.add_answer(gather.add_intro(None, intro), order, [0], []))


def test_verdicts_survive_many_reopenings_and_a_full_compaction(tmp_path: Path) -> None:
    path = tmp_path / "v"
    now = 1_795_000_000_000
    ids = []
    for opening in range(6):  # a worker restoring a partition again reopens its store
        store = VerdictPartition(path, RETENTION_MS)
        for n in range(200):
            event_id = f"k-{opening}-{n:04d}"
            store.set_verdict(event_id, decided(event_id, now + n))
            ids.append(event_id)
        store.close()
    store = VerdictPartition(path, RETENTION_MS)
    store._db.compact_range(None, None)
    missing = [event_id for event_id in ids if store.verdict(event_id) is None]
    store.close()
    assert missing == []


def test_verdicts_expire_a_window_after_they_arrived_whatever_their_event_time(tmp_path: Path) -> None:
    store = VerdictPartition(tmp_path / "v", RETENTION_MS)
    start = 1_795_000_000_000
    for day in range(10):
        store.set_verdict(f"day-{day}", decided(f"day-{day}", start + day * DAY_MS))
    stamped_last_year = decided("old-news", start + 9 * DAY_MS, ts=start - 365 * DAY_MS)
    store.set_verdict("old-news", stamped_last_year)  # arrived with day 9: a copy re-sent now must find it
    store.put_outbox([("unique", "day-0", {}), ("unique", "day-9", {})])
    while store.expire(limit=3):  # a slice at a time, as the stage calls it
        pass
    kept = [day for day in range(10) if store.verdict(f"day-{day}") is not None]
    # The newest arrival is day 9: days 2..9 lie within 7 days of it (plus at most one bucket).
    assert kept[0] in (1, 2) and kept[1:] == list(range(kept[0] + 1, 10))
    assert store.verdict("old-news") == stamped_last_year
    newest = store.verdict("day-9")
    assert newest is not None
    assert store.outbox()[0][1] == [("unique", "day-9", newest.value)]  # an expired id's output is left out
    store.close()
    reopened = VerdictPartition(tmp_path / "v", RETENTION_MS)  # expiry resumes from what is stored
    reopened.set_verdict("late", decided("late", start + 20 * DAY_MS))
    while reopened.expire(limit=100):
        pass
    assert [day for day in range(10) if reopened.verdict(f"day-{day}") is not None] == []
    assert reopened.verdict("old-news") is None
    assert reopened.verdict("late") is not None
    reopened.close()


def test_a_store_written_with_rocksdb_ttl_is_emptied_for_a_rebuild(tmp_path: Path) -> None:
    path = tmp_path / "v"
    options = Options(raw_mode=True)
    options.create_if_missing(True)
    old = Rdict(str(path), options, access_type=AccessType.with_ttl(3600))
    old.put(b"v:a", b'{"old": true}')
    old.put(b"r:changelog:next", b"12")
    old.close()
    store = VerdictPartition(path, RETENTION_MS)
    assert store.get_record("changelog:next") is None  # so the restore replays the changelog from its start
    assert store.verdict("a") is None
    store.close()


def test_a_gather_that_never_completes_leaves_with_its_window(tmp_path: Path) -> None:
    store = VerdictPartition(tmp_path / "v", RETENTION_MS)
    start = 1_795_000_000_000
    order = total_order(start, 0, 7)
    stuck = Intro("stuck", order, start, "00ff", 2, {"id": "stuck", "text": "two answers expected"}).to_dict()
    batch = VerdictBatch(store, Metrics(), Hold(), 20, start, "t.events")
    batch.run([stuck, answer_item("stuck", order, [0], [])])  # the second answer never comes
    ops = store.take_ops()
    assert store.pending("stuck") is not None
    assert sum(str(key).startswith("e:") for key, _ in ops) == 1  # filed under its arrival once
    store.set_verdict("late", decided("late", start + 10 * DAY_MS))
    while store.expire(limit=100):
        pass
    assert store.pending("stuck") is None and store._get("p:stuck") is None
    assert store.verdict("late") is not None
    store.close()


def test_expiry_keeps_pace_with_a_partition_taking_more_than_a_fixed_slice(tmp_path: Path) -> None:
    """The stage deletes a slice a second sized to the ids filed since the last
    (``worker/stream/verdict.py:VerdictStage.expire``); a fixed 500 fell behind a busier partition."""
    store = VerdictPartition(tmp_path / "v", RETENTION_MS)
    start, step, filed = 1_795_000_000_000, DAY_MS // 2, 1_000  # a slice every half day of arrivals
    assert filed > expiry_slice(0), "more is filed between two slices than a fixed slice deletes"
    for second in range(2 * 14):  # two windows
        for n in range(filed):
            event_id = f"s{second}-{n}"
            store.set_verdict(event_id, decided(event_id, start + second * step + n))
        store.expire(expiry_slice(store.take_filed()))
    still_due = store.expire(limit=10**9)
    store.close()
    assert still_due <= 2 * filed, "at most the day-bucket that came due last"
