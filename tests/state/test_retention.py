"""Retention by event time in the RocksDB index: time buckets filtered, then dropped whole, disk flat."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from rocksdict import Options, Rdict

from topology.records import Event
from worker.cli.deduplicator import Deduplicator
from worker.engine.blocks import plan_for
from worker.engine.match import Entry
from worker.settings import Settings
from worker.state.index import BlockIndex
from worker.state.layout import CHECKPOINT_RECORD as CHECKPOINT
from worker.state.layout import REF, SUFFIX, StoreLayoutError, exact_records, read_only
from worker.state.partition import IndexPartition

PLAN = plan_for(k=3, expected=10_000_000)
SECOND = 1_000


def entry(i: int, fp: int, ts: int) -> Entry:
    return Entry(event_id=f"ev-{i}", fingerprint=fp, order=i, ts=ts, sketch=random.Random(i).randbytes(130))


KIND_OF = {b"e": "entries", b"o": "only", b"x": "log", b"r": "records"}


def rows_on_disk(path: Path) -> dict[str, int]:
    """Rows per keyspace and bucket (``entries@4``) of a closed index, read with plain rocksdict
    (what is really stored): a bucket's family ``bucket@n`` leads each key with its keyspace's
    byte; the shared ``tables`` family ends each row with its bucket's number (modulo 2^16),
    and the ``exact`` family's values are records that each name their bucket (counted one a
    record)."""
    with read_only(path) as db:
        counts: dict[str, int] = {}
        for name in Rdict.list_cf(str(path)):
            if name == "default":
                continue
            cf = db.get_column_family(name)
            for key, value in cf.items():
                if "@" in name:
                    labels = [f"{KIND_OF[key[:1]]}@{name.partition('@')[2]}"]
                elif name == "tables":
                    labels = [f"tables@{int.from_bytes(key[-2:], 'big')}"]
                elif name == "exact":
                    labels = [f"exact@{int.from_bytes(r[REF : REF + SUFFIX], 'big')}" for r in exact_records(value)]
                else:
                    labels = [name]
                for label in labels:
                    counts[label] = counts.get(label, 0) + 1
            del cf
        return counts


def test_entries_older_than_the_window_stop_being_candidates_before_any_drop(tmp_path: Path) -> None:
    with BlockIndex(tmp_path / "ix", PLAN, retention_ms=10 * SECOND) as index:
        old = entry(1, 0xABCDEF, ts=0)
        index.add(old)
        index.add(old, tables=[], exact_keys=[7])
        index.add(entry(2, 0x111111 << 30, ts=10 * SECOND))
        assert [c.entry.event_id for c in index.query(0xABCDEF, 3)] == ["ev-1"], "exactly at the horizon: kept"
        assert index.query_exact(7) == [old]
        index.add(entry(3, 0x222222 << 30, ts=10 * SECOND + 1))
        assert index.query(0xABCDEF, 3) == []
        assert index.query_exact(7) == []
        assert 0 in index.live_buckets, "filtered although its bucket is not dropped yet"


def test_buckets_are_dropped_whole_and_their_rows_are_gone(tmp_path: Path) -> None:
    retention = 7 * SECOND
    rng = random.Random(3)
    with BlockIndex(tmp_path / "ix", PLAN, retention_ms=retention, buckets=8) as index:
        assert index.bucket_ms == SECOND
        stamps = [i * 50 for i in range(240)]  # 12 s of event time, 20 events a second
        for i, ts in enumerate(stamps):
            index.add(entry(i, rng.getrandbits(64), ts))
            index.add(entry(i, 0, ts), tables=[], exact_keys=[i])
            index.put_record(f"v:ev-{i}", b"verdict", ts=ts)
            assert len(index.live_buckets) <= 8
        assert index.watermark == stamps[-1]
        assert index.live_buckets == tuple(range(4, 12))
    kept = [ts for ts in stamps if ts >= 4 * SECOND]
    rows = rows_on_disk(tmp_path / "ix")
    assert {n for n in rows if n.startswith("entries")} == {f"entries@{n}" for n in range(4, 12)}
    assert sum(v for n, v in rows.items() if n.startswith("entries@")) == len(kept)
    assert sum(v for n, v in rows.items() if n.startswith("tables@")) == len(kept) * len(PLAN.tables)
    assert sum(v for n, v in rows.items() if n.startswith("exact@")) == len(kept)
    assert sum(v for n, v in rows.items() if n.startswith("log@")) == len(kept), "the exact rows' deletion log"
    assert sum(v for n, v in rows.items() if n.startswith("records@")) == len(kept)
    live = {f"{kind}@{n}" for kind in ("tables", "exact") for n in range(4, 12)}
    assert {n for n in rows if n.startswith(("tables@", "exact@"))} == live, "expired buckets' rows are deleted"


def families(path: Path) -> set[str]:
    return set(Rdict.list_cf(str(path)))


def test_maintain_creates_the_next_bucket_before_its_first_event(tmp_path: Path) -> None:
    path = tmp_path / "ix"
    with BlockIndex(path, PLAN, retention_ms=7 * SECOND, buckets=8) as index:
        assert not index.maintain(), "no watermark yet: nothing to prepare"
        index.add(entry(1, 0xAAAA, ts=500))
        steps = 0
        while index.maintain():
            steps += 1
        assert steps == 1, "a bucket is one column family"
        assert "bucket@1" in families(path)
        assert index.live_buckets == (0,), "prepared, not live: reads do not consult it yet"
        before = families(path)
        assert index.add(entry(2, 0xBBBB, ts=1500))
        assert families(path) == before, "the first event of bucket 1 created no family"
        assert index.live_buckets == (0, 1)
        assert [c.entry.event_id for c in index.query(0xBBBB, 0)] == ["ev-2"]
        assert index.maintain(), "and bucket 2 is prepared next"
    with BlockIndex(path, PLAN, retention_ms=7 * SECOND, buckets=8) as index:
        assert [c.entry.event_id for c in index.query(0xAAAA, 0)] == ["ev-1"]
        assert index.add(entry(3, 0xCCCC, ts=2500)), "a partly prepared bucket is completed when written"
        assert [c.entry.event_id for c in index.query(0xCCCC, 0)] == ["ev-3"]


def test_lazy_drops_leave_reads_at_once_and_the_disk_at_maintain(tmp_path: Path) -> None:
    path = tmp_path / "ix"
    with BlockIndex(path, PLAN, retention_ms=7 * SECOND, buckets=8, lazy_drops=True) as index:
        index.add(entry(1, 0xAAAA, ts=500))
        index.add(entry(2, 0xBBBB, ts=1500))
        index.add(entry(3, 0xCCCC, ts=8 * SECOND))
        assert index.live_buckets == (1, 8)
        assert index.query(0xAAAA, 0) == []
        assert "bucket@0" in families(path), "dropping waits for maintain"
        while index.maintain():
            pass
        assert not any(name.endswith("@0") for name in families(path))
        index.add(entry(4, 0xDDDD, ts=9 * SECOND))
        assert index.query(0xBBBB, 0) == []
        assert "bucket@1" in families(path), "expired, not dropped yet when the index closes"
    with BlockIndex(path, PLAN, retention_ms=7 * SECOND, buckets=8, lazy_drops=True) as index:
        assert not any(name.endswith("@1") for name in families(path)), "dropped on opening"
        assert [c.entry.event_id for c in index.query(0xDDDD, 0)] == ["ev-4"]


def test_records_with_an_event_time_expire_and_store_wide_records_stay(tmp_path: Path) -> None:
    with BlockIndex(tmp_path / "ix", PLAN, retention_ms=10 * SECOND) as index:
        assert index.put_record("v:old", b"first", ts=0)
        assert index.put_record("v:recent", b"second", ts=8 * SECOND)
        index.put_record("meta:next_order", b"42")
        assert index.get_record("v:old") == b"first"
        index.add(entry(1, 5, ts=40 * SECOND))
        assert index.get_record("v:old") is None
        assert index.get_record("v:recent") is None
        assert index.get_record("meta:next_order") == b"42"
        assert index.put_record("v:new", b"third", ts=39 * SECOND)
        assert index.get_record("v:new") == b"third"
        assert not index.put_record("v:late", b"late", ts=1 * SECOND)
        assert index.get_record("v:late") is None


def test_a_record_added_with_its_entry_expires_with_it_and_a_late_one_is_not_kept(tmp_path: Path) -> None:
    with BlockIndex(tmp_path / "ix", PLAN, retention_ms=10 * SECOND) as index:
        assert index.add(entry(1, 5, ts=0), record=("v:ev-1", b"unique"))
        assert index.get_record("v:ev-1") == b"unique"
        assert [c.entry.event_id for c in index.query(5, 0)] == ["ev-1"]
        index.add(entry(2, 6, ts=40 * SECOND), record=("v:ev-2", b"unique"))
        assert index.get_record("v:ev-1") is None and index.query(5, 0) == []
        assert not index.add(entry(3, 7, ts=1 * SECOND), record=("v:ev-3", b"late"))
        assert index.get_record("v:ev-3") is None
    with BlockIndex(tmp_path / "ix", PLAN, retention_ms=10 * SECOND) as index:
        assert index.get_record("v:ev-2") == b"unique", "written in the same batch as its entry"


def test_late_events_are_not_indexed_and_do_not_resurrect_a_bucket(tmp_path: Path) -> None:
    with BlockIndex(tmp_path / "ix", PLAN, retention_ms=10 * SECOND) as index:
        index.add(entry(1, 1, ts=0))
        index.add(entry(2, 2, ts=60 * SECOND))
        before = index.live_buckets
        assert 0 not in before
        assert not index.add(entry(3, 3, ts=5 * SECOND))
        assert not index.add(entry(3, 3, ts=5 * SECOND), tables=[], exact_keys=[9])
        assert index.live_buckets == before
        assert index.query(3, 0) == [] and index.query_exact(9) == []
        assert index.add(entry(4, 4, ts=55 * SECOND)), "out of order but inside the window: indexed"
        assert [c.entry.event_id for c in index.query(4, 0)] == ["ev-4"]
        assert index.watermark == 60 * SECOND
    assert not any(name.endswith("@0") for name in Rdict.list_cf(str(tmp_path / "ix")))


def test_reopen_keeps_window_and_refuses_another_bucket_width(tmp_path: Path) -> None:
    path = tmp_path / "ix"
    with BlockIndex(path, PLAN, retention_ms=10 * SECOND) as index:
        index.add(entry(1, 0xF0F0, ts=30 * SECOND))
        index.put_record("v:ev-1", b"unique", ts=30 * SECOND)
        index.add(entry(2, 0x0F0F, ts=50 * SECOND))
    with BlockIndex(path, PLAN, retention_ms=10 * SECOND) as index:
        assert index.watermark == 50 * SECOND
        assert index.query(0xF0F0, 0) == [], "still out of the window after reopening"
        assert [c.entry.event_id for c in index.query(0x0F0F, 0)] == ["ev-2"]
        assert not index.add(entry(3, 3, ts=39 * SECOND)), "late relative to the persisted watermark"
        index.add(entry(4, 0xFF, ts=52 * SECOND))
        assert [c.entry.event_id for c in index.query(0xFF, 0)] == ["ev-4"]
    with pytest.raises(
        ValueError, match=r"built with time buckets of 1429 ms but is opened with time buckets of 2858 ms"
    ):
        BlockIndex(path, PLAN, retention_ms=20 * SECOND)
    with pytest.raises(ValueError, match=r"opened with no retention"):
        BlockIndex(path, PLAN)
    with BlockIndex(path, PLAN, retention_ms=20 * SECOND, buckets=15) as index:
        assert index.bucket_ms == 1429, "another retention with the same bucket width is compatible"
        assert [c.entry.event_id for c in index.query(0x0F0F, 0)] == ["ev-2"]


def test_a_store_without_retention_cannot_be_reopened_with_it(tmp_path: Path) -> None:
    with BlockIndex(tmp_path / "ix", PLAN) as index:
        index.add(entry(1, 1, ts=0))
        index.add(entry(2, 2, ts=10**12))
        assert [c.entry.event_id for c in index.query(1, 0)] == ["ev-1"], "without retention nothing expires"
    with pytest.raises(ValueError, match=r"built with no retention .* opened with time buckets"):
        BlockIndex(tmp_path / "ix", PLAN, retention_ms=SECOND)
    assert set(Rdict.list_cf(str(tmp_path / "ix"))) == {"default", "tables", "entries", "exact", "records"}


STORY = (
    "The city council approved the new budget on Tuesday after a long debate about road repairs, "
    "school funding and the future of the public library, which had faced closure for two years."
)


def test_deduplicator_forgets_originals_and_verdicts_after_the_window(tmp_path: Path) -> None:
    settings = Settings(retention_days=60 / 86_400)  # one "day" of 60 s event time
    with BlockIndex(tmp_path / "ix", PLAN, retention_ms=60 * SECOND) as index:
        dedup = Deduplicator(index, settings)
        assert dedup.decide(Event("orig", STORY, ts=0)).verdict == "unique"
        repost = dedup.decide(Event("repost", STORY + " (Reuters)", ts=30 * SECOND))
        assert (repost.verdict, repost.duplicate_of) == ("duplicate", "orig")
        assert dedup.decide(Event("orig", "anything", ts=45 * SECOND)).verdict == "unique", "replay: first verdict"
        later = dedup.decide(Event("later", STORY, ts=80 * SECOND))
        assert (later.verdict, later.duplicate_of) == ("duplicate", "repost"), "orig is out of the window"
        late = dedup.decide(Event("late", STORY, ts=5 * SECOND))
        assert (late.verdict, late.duplicate_of) == ("duplicate", "repost"), "a late event still gets a verdict"
        assert index.get_record("v:late") is None, "but leaves no trace"
        assert index.get_record("v:orig") is None, "the first verdict expired with its bucket"
        assert dedup.decide(Event("orig", STORY, ts=81 * SECOND)).duplicate_of == "repost"


def stream_disk(path: Path, retention_ms: int | None, events: int, step_ms: int, checkpoint: int) -> list[int]:
    """Disk bytes (after a full compaction) every ``checkpoint`` events of a steady synthetic stream."""
    rng = random.Random(1)
    sizes = []
    with BlockIndex(path, PLAN, retention_ms=retention_ms, wal=False) as index:
        for i in range(events):
            index.add(Entry(f"event-{i:09d}", rng.getrandbits(64), i, i * step_ms, rng.randbytes(130)))
            if (i + 1) % checkpoint == 0:
                index.compact()
                sizes.append(index.disk_bytes())
        assert retention_ms is None or len(index.live_buckets) <= 8
    return sizes


def test_disk_stays_flat_under_a_steady_stream(tmp_path: Path) -> None:
    """Compressed clock: a 60 s window filled by 15k events, then 2 more windows' worth."""
    window, step = 60 * SECOND, 4
    per_window = window // step
    flat = stream_disk(tmp_path / "ret", window, 3 * per_window, step, per_window // 3)
    grows = stream_disk(tmp_path / "all", None, 3 * per_window, step, per_window // 3)
    after_fill = flat[3:]  # checkpoints once a whole window plus one bucket is stored
    assert max(after_fill) <= 1.3 * after_fill[0], flat
    assert flat[-1] <= 1.3 * flat[2], flat
    assert grows[-1] >= 2.5 * grows[2], grows


@pytest.mark.soak
def test_soak_disk_flat_through_the_deduplicator(tmp_path: Path) -> None:
    """60k real-ish events (texts, reposts, 130-byte sketches) over 2 windows of 60 s, WAL on, as scan runs."""
    words = [f"w{n}" for n in range(5000)]
    rng = random.Random(9)
    settings = Settings(retention_days=60 / 86_400)
    sizes: dict[str, list[int]] = {}
    for label, retention in (("ret", 60 * SECOND), ("all", None)):
        texts: list[str] = []
        sizes[label] = []
        with BlockIndex(tmp_path / label, PLAN, retention_ms=retention) as index:
            dedup = Deduplicator(index, settings)
            for i in range(60_000):
                if texts and rng.random() < 0.2:
                    text = rng.choice(texts[-500:]) + " via @wire"
                else:
                    text = " ".join(rng.choices(words, k=40))
                    texts.append(text)
                dedup.decide(Event(f"e{i}", text, ts=i * 2))
                if (i + 1) % 6_000 == 0:
                    dedup.flush()
                    index.compact()
                    sizes[label].append(index.disk_bytes())
    print("disk bytes per 6k events:", sizes)
    after_fill = sizes["ret"][5:]
    assert max(after_fill) <= 1.3 * after_fill[0], sizes
    assert sizes["all"][-1] >= 1.8 * sizes["all"][4], sizes


def _with_an_old_bucket_family(path: Path) -> None:
    """An index whose time buckets are one family per keyspace, as neardup wrote them before."""
    with BlockIndex(path, PLAN, retention_ms=7 * SECOND) as index:
        index.add(entry(1, 0xAAAA, ts=500))
        index.put_record(CHECKPOINT, b"5")
    db = Rdict(str(path), column_families={n: Options(raw_mode=True) for n in Rdict.list_cf(str(path))})
    db.create_column_family("tables@0", Options(raw_mode=True))
    db.close()


def test_an_index_in_the_old_bucket_layout_is_refused_by_name(tmp_path: Path) -> None:
    _with_an_old_bucket_family(tmp_path / "ix")
    with pytest.raises(StoreLayoutError, match=r"one column family per keyspace \(tables@0\.\.\.\).*rebuild it"):
        BlockIndex(tmp_path / "ix", PLAN, retention_ms=7 * SECOND)


def test_a_streaming_index_partition_in_the_old_layout_starts_empty_to_be_replayed(tmp_path: Path) -> None:
    _with_an_old_bucket_family(tmp_path / "ix")
    part = IndexPartition(tmp_path / "ix", PLAN, retention_ms=7 * SECOND)
    try:
        assert part.index.query(0xAAAA, 0) == [], "its entries come back from the changelog, not the old files"
        assert part.get_record(CHECKPOINT) is None, "so the whole changelog is replayed"
        assert "tables@0" not in families(tmp_path / "ix")
    finally:
        part.close()


def test_add_many_stores_exactly_what_the_same_adds_one_by_one_store(tmp_path: Path) -> None:
    """Restore writes a changelog record as one batch: the result must not depend on it.

    The events' times cross buckets and the window (the later ones push the earlier ones
    out), ids repeat with new fingerprints, and some adds are exact keys only.
    """
    rng = random.Random(5)
    items: list[tuple[Entry, list[int] | None, list[int]]] = []
    for i in range(300):
        late = 10 * SECOND if i % 11 == 5 else 0  # behind the window once the stream is 17 s in
        e = entry(i % 250, rng.getrandbits(64), ts=max(0, i * SECOND // 10 + rng.randrange(3 * SECOND) - late))
        tables = None if i % 7 else []
        exact = [rng.getrandbits(64)] if tables == [] or i % 3 == 0 else []
        items.append((e, tables, exact))
    one_by_one, batched = tmp_path / "one", tmp_path / "many"
    with BlockIndex(one_by_one, PLAN, retention_ms=7 * SECOND, buckets=8) as index:
        stored = sum(index.add(e, tables, exact) for e, tables, exact in items)
        answers = [index.query(e.fingerprint, 3) for e, _, _ in items]
        exact_answers = [index.query_exact(k) for _, _, exact in items for k in exact]
    with BlockIndex(batched, PLAN, retention_ms=7 * SECOND, buckets=8) as index:
        assert index.add_many(items[:100]) + index.add_many(items[100:]) == stored
        assert [index.query(e.fingerprint, 3) for e, _, _ in items] == answers
        assert [index.query_exact(k) for _, _, exact in items for k in exact] == exact_answers
    assert 0 < stored < len(items), "the case must include adds older than the window"
    assert rows_on_disk(batched) == rows_on_disk(one_by_one)


def test_entry_count_follows_adds_reopens_and_dropped_buckets(tmp_path: Path) -> None:
    """What ``neardup_index_entries`` reports: events stored, not rows, and none past the window."""
    path = tmp_path / "ix"
    rng = random.Random(3)
    with BlockIndex(path, PLAN, retention_ms=7 * SECOND, buckets=7) as index:
        for i in range(20):
            index.add(entry(i, rng.getrandbits(64), ts=i * 100))
        index.add(entry(5, rng.getrandbits(64), ts=500), exact_keys=[9])  # the same event again
        assert index.entry_count == 20
    with BlockIndex(path, PLAN, retention_ms=7 * SECOND, buckets=7) as index:
        assert index.entry_count == 20  # counted on disk when it opens
        index.add(entry(20, rng.getrandbits(64), ts=30 * SECOND))  # every earlier bucket expires
        assert index.entry_count == 1
    with BlockIndex(tmp_path / "plain", PLAN) as index:
        index.add_many((entry(i, rng.getrandbits(64), ts=0), None, ()) for i in range(5))
        assert index.entry_count == 5


def test_a_short_post_is_stored_without_table_rows_and_its_slipped_copy_found(tmp_path: Path) -> None:
    settings = Settings()
    with BlockIndex(tmp_path, settings.block_plan, retention_ms=settings.retention_ms) as index:
        dedup = Deduplicator(index, settings)
        first = dedup.decide(Event("a", "The council approved the new bridge today", 1_000))
        copy = dedup.decide(Event("b", "The councl approved the new bridge today", 2_000))
        other = dedup.decide(Event("c", "Flood warning for the river valley tonight", 3_000))
    assert (first.verdict, copy.verdict, copy.duplicate_of, other.verdict) == ("unique", "duplicate", "a", "unique")
    rows = rows_on_disk(tmp_path)
    assert not any(label.startswith("tables") for label in rows), rows
    assert sum(n for label, n in rows.items() if label.startswith("exact")) > 0
