"""An expired bucket's purge deletes the exact keys its log names unread, but those a later
bucket may still hold a record in (its ``renewed`` keyspace), and leaves the same store as a
purge that reads every key."""

from __future__ import annotations

import random
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rocksdict import Options, Rdict

from worker.engine.blocks import plan_for
from worker.engine.match import Entry
from worker.state.buckets import PURGE_SLICE
from worker.state.index import BlockIndex
from worker.state.layout import MAX_KEY_RECORDS, RENEWED_FROM_KEY, read_only

PLAN = plan_for(k=3, expected=10_000_000)
SECOND = 1_000
MULTIGET_KEYS = "rocksdb.number.multiget.keys.read"
KEYS = [*range(24), 99]  # the stream's exact keys; the last one a template's, in half its adds


def entry(i: int, ts: int) -> Entry:
    return Entry(event_id=f"ev-{i}", fingerprint=i, order=i, ts=ts, sketch=random.Random(i).randbytes(40))


def exact_family(path: Path) -> dict[bytes, bytes]:
    with read_only(path) as db:
        exact = db.get_column_family("exact")
        stored = {bytes(k): bytes(v) for k, v in exact.items()}
        del exact
    return stored


def reading_every_key(path: Path) -> None:
    """Make the store at ``path`` one whose buckets all come from before the ``renewed`` keyspace,
    as a store of an older neardup opened again: its purges read every key (the reference)."""
    BlockIndex(path, PLAN, retention_ms=7 * SECOND).close()
    names = [name for name in Rdict.list_cf(str(path)) if name != "default"]
    db = Rdict(str(path), Options(raw_mode=True), column_families={n: Options(raw_mode=True) for n in names})
    db[RENEWED_FROM_KEY] = str(1 << 60).encode()
    db.close()


def test_a_purge_reads_only_the_keys_a_later_bucket_appended_to(tmp_path: Path) -> None:
    """A hundred events of bucket 0 with keys of their own, two of whose keys a bucket-5 event
    shares: the purge of bucket 0 deletes 98 keys unread, reads the two, and keeps them."""
    path = tmp_path / "ix"
    with BlockIndex(path, PLAN, retention_ms=7 * SECOND, statistics=True) as index:
        for i in range(100):
            index.add(entry(i, ts=i), tables=[], exact_keys=[1000 + i])
        index.add(entry(100, ts=5 * SECOND), tables=[], exact_keys=[1003, 1042])
        read = index.counter(MULTIGET_KEYS)
        index.add(entry(101, ts=9 * SECOND), tables=[], exact_keys=[5])  # bucket 0 expires and is purged
        assert index.live_buckets == (5, 9)
        assert index.counter(MULTIGET_KEYS) - read == 1 + 2, "the add's own key, then the two shared ones"
        assert [e.event_id for e in index.query_exact_many([1003, 1042, 1050])] == ["ev-100"]
    assert sorted(int.from_bytes(k, "big") for k in exact_family(path)) == [5, 1003, 1042]


def test_a_key_a_full_append_left_out_stays_for_the_bucket_that_fills_it_later(tmp_path: Path) -> None:
    """Key 7 full of bucket 0's events refuses bucket 1's event. Once bucket 0 expires, an
    event of bucket 6 is appended to it; bucket 1's purge, whose log names key 7, must not
    delete it: ev-late is live."""
    path = tmp_path / "ix"
    with BlockIndex(path, PLAN, retention_ms=7 * SECOND, buckets=8) as index:
        for i in range(MAX_KEY_RECORDS):
            index.add(entry(i, ts=i), tables=[], exact_keys=[7])
        index.add(entry(100, ts=1 * SECOND), tables=[], exact_keys=[7])  # refused: full of live events
        index.add(entry(101, ts=8 * SECOND), tables=[], exact_keys=[8])  # bucket 0 expires
        index.add(entry(102, ts=8 * SECOND + 1), tables=[], exact_keys=[7])  # the key takes it
        index.add(entry(103, ts=9 * SECOND), tables=[], exact_keys=[9])  # bucket 1 expires
        assert index.live_buckets == (8, 9)
        assert [e.event_id for e in index.query_exact(7)] == ["ev-102"]


def test_a_key_appended_to_while_its_old_bucket_is_purged_stays(tmp_path: Path) -> None:
    """Bucket 0's purge, a slice at a time between batches (lazy drops), has read its marks when
    an event of a live bucket appends to a key its log still names: that key stays. (Its events
    are stored under exact keys only, so the purge walks its log from the first slice.)"""
    events = 3 * PURGE_SLICE
    with BlockIndex(tmp_path / "ix", PLAN, retention_ms=7 * SECOND, lazy_drops=True) as index:
        index.add_many((entry(i, ts=i % SECOND), [], [10_000 + i]) for i in range(events))
        index.add(entry(events, ts=8 * SECOND), tables=[], exact_keys=[1])  # bucket 0 expires
        appended = []
        while index.maintain():  # its entries' rows, then its log, a slice each
            key = 10_000 + len(appended) * 97 % events
            index.add(entry(events + 1 + len(appended), ts=8 * SECOND), tables=[], exact_keys=[key])
            appended.append(key)
        assert len(appended) >= 5 and index.live_buckets == (8,)
        assert [[e.event_id for e in index.query_exact(key)] for key in appended] == [
            [f"ev-{events + 1 + n}"] for n in range(len(appended))
        ]


@st.composite
def streams(draw: st.DrawFn) -> list[tuple[str, int, int, list[int]]]:
    """Adds (``add``, ts step, reorder, keys) and upkeep steps (``maintain``, rows) of a stream
    whose keys are shared across buckets, out of order within a second, and some of them full."""
    steps = []
    for _ in range(draw(st.integers(20, 120))):
        if draw(st.integers(0, 5)) == 0:
            steps.append(("maintain", draw(st.integers(1, 4)), 0, []))
            continue
        keys = draw(st.lists(st.sampled_from(KEYS[:-1]), min_size=1, max_size=4))
        hot = KEYS[-1:] if draw(st.booleans()) else []  # a template's key, full within a bucket or two
        steps.append(("add", draw(st.integers(0, 80)), draw(st.integers(0, 900)), keys + hot))
    return steps


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=streams(), lazy=st.booleans(), reopen=st.integers(0, 200))
def test_the_purge_leaves_the_store_a_purge_reading_every_key_leaves(
    tmp_path_factory: object, steps: list[tuple[str, int, int, list[int]]], lazy: bool, reopen: int
) -> None:
    """The same stream into a store that marks renewed keys and one whose purges read every key:
    every exact read answers the same after each step, and the exact keys left on disk are the
    same keys with the same values (none deleted that a live event needs, none kept that the
    reading purge deletes)."""
    base = Path(str(tmp_path_factory.mktemp("renewed")))  # type: ignore[attr-defined]
    marked, reference = base / "marked", base / "reference"
    reading_every_key(reference)

    def open_both() -> list[BlockIndex]:
        kw = {"retention_ms": 7 * SECOND, "buckets": 8, "lazy_drops": lazy, "reorder_ms": SECOND}
        return [BlockIndex(path, PLAN, **kw) for path in (marked, reference)]  # type: ignore[arg-type]

    indexes, ts = open_both(), 0
    for n, (kind, step, back, keys) in enumerate(steps):
        if n == reopen:
            for index in indexes:
                index.close()
            indexes = open_both()
        if kind == "maintain":
            for index in indexes:
                for _ in range(step):
                    index.maintain(rows=1)
            continue
        ts += step * 10
        for index in indexes:
            index.add(entry(n, ts=max(0, ts - back)), tables=[], exact_keys=keys)
        answers = [[sorted(e.event_id for e in index.query_exact(k)) for k in KEYS] for index in indexes]
        assert answers[0] == answers[1]
    for index in indexes:
        index.close()
    assert exact_family(marked) == exact_family(reference)
