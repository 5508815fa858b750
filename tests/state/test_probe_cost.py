"""Index layout 2: what a probe costs whatever the retention, and what expiry leaves behind."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rocksdict import Options, Rdict

from tests.state.test_retention import rows_on_disk
from worker.engine.blocks import hamming, plan_for
from worker.engine.match import Entry
from worker.state.buckets import PURGE_SLICE
from worker.state.index import BlockIndex
from worker.state.layout import (
    LAYOUT_KEY,
    MAX_KEY_RECORDS,
    RECORD,
    StoreLayoutError,
    any_live,
    append_records,
    live_records,
    read_only,
)
from worker.state.partition import IndexPartition

PLAN = plan_for(k=3, expected=10_000_000)
SECOND = 1_000
SEEKS = "rocksdb.number.db.seek"
MULTIGET_KEYS = "rocksdb.number.multiget.keys.read"


def entry(i: int, fp: int, ts: int) -> Entry:
    return Entry(event_id=f"ev-{i}", fingerprint=fp, order=i, ts=ts, sketch=random.Random(i).randbytes(130))


def seeks_of(index: BlockIndex, probe: Callable[[], object]) -> int:
    before = index.counter(SEEKS)
    probe()
    return index.counter(SEEKS) - before


def test_a_probe_seeks_once_per_table_and_reads_its_exact_keys_at_once_however_many_buckets_are_live(
    tmp_path: Path,
) -> None:
    rng = random.Random(1)
    with BlockIndex(tmp_path / "ix", PLAN, retention_ms=7 * SECOND, buckets=8, statistics=True) as index:
        for i in range(800):  # 8 s of event time: every one of the 8 buckets is live
            e = entry(i, rng.getrandbits(64), ts=i * 10)
            index.add(e, exact_keys=[i % 50])
        assert len(index.live_buckets) == 8
        probes = [rng.getrandbits(64) for _ in range(50)]
        per_probe = [seeks_of(index, lambda fp=fp: index.query(fp, 3)) for fp in probes]
        assert max(per_probe) == len(PLAN.tables), per_probe
        per_exact = [seeks_of(index, lambda k=k: index.query_exact(k)) for k in range(50)]
        assert set(per_exact) == {0}, per_exact
        keys_read = index.counter(MULTIGET_KEYS)
        index.query_exact_many(range(50))
        assert index.counter(MULTIGET_KEYS) - keys_read == 50, "one multi-get of the keys (entries are recent)"
        in_window = [i for i in range(7, 800, 50) if i * 10 >= (index.horizon or 0)]
        assert len(in_window) == 14
        found = sorted(int(e.event_id[3:]) for e in index.query_exact(7))
        assert found == in_window, "each exact key's records from every live bucket, in one read"


@given(
    st.lists(st.tuples(st.integers(0, 40 * SECOND), st.integers(0, 7)), min_size=1, max_size=60),
    st.integers(0, (1 << 64) - 1),
)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_with_retention_every_stored_fingerprint_within_k_in_the_window_is_found(
    tmp_path_factory: pytest.TempPathFactory, events: list[tuple[int, int]], probe: int
) -> None:
    """Events at random times (buckets come and expire as the watermark moves), each close to the
    probe or not: a query finds exactly those within k whose time is not before the horizon."""
    rng = random.Random(probe)
    path = tmp_path_factory.mktemp("ix")
    stored: dict[str, tuple[int, int]] = {}
    with BlockIndex(path, PLAN, retention_ms=10 * SECOND, buckets=5, lazy_drops=bool(probe & 1)) as index:
        for i, (ts, flips) in enumerate(events):
            fp = probe
            for bit in rng.sample(range(64), flips):
                fp ^= 1 << bit
            if index.add(entry(i, fp, ts)):
                stored[f"ev-{i}"] = (fp, ts)
            index.maintain()
            horizon = index.horizon
            found = {c.entry.event_id: c.distance for c in index.query(probe, 3)}
            must = {
                eid: hamming(fp, probe)
                for eid, (fp, t) in stored.items()
                if hamming(fp, probe) <= 3 and (horizon is None or t >= horizon)
            }
            assert found == must


def test_an_expired_bucket_is_purged_in_slices_and_leaves_no_row_behind(tmp_path: Path) -> None:
    path = tmp_path / "ix"
    rng = random.Random(2)
    with BlockIndex(path, PLAN, retention_ms=7 * SECOND, buckets=8, lazy_drops=True) as index:
        for i in range(10_000):  # 1 s of event time: bucket 0 alone
            keys = [i, 1_000_000 + i, 2_000_000 + i][: 1 + i % 3]  # one to three, as anchors and short texts
            index.add(entry(i, rng.getrandbits(64), ts=i // 10), tables=None if i % 4 else [], exact_keys=keys)
        assert [e.event_id for e in index.query_exact(2_000_002)] == ["ev-2"]
        index.add(entry(10_000, 5, ts=9 * SECOND))
        assert index.query_exact(3) == [], "out of every read at once"
        steps = 0
        while index.maintain():
            steps += 1
        assert steps >= (7_500 + 10_000) // PURGE_SLICE, "a slice at a time (entries, then a log row an add)"
    rows = rows_on_disk(path)
    assert {name for name in rows if name.endswith("@0")} == set(), rows


def test_an_id_stored_again_with_another_fingerprint_leaves_no_stale_row(tmp_path: Path) -> None:
    path = tmp_path / "ix"
    with BlockIndex(path, PLAN, retention_ms=7 * SECOND, buckets=8) as index:
        index.add(entry(1, 0xAAAA_AAAA_AAAA_AAAA, ts=100))
        index.add(entry(1, 0x5555_5555_5555_5555, ts=200))
        index.add_many([(entry(2, 1, ts=300), None, ()), (entry(2, 2 << 40, ts=300), None, ())])
        assert [c.entry.fingerprint for c in index.query(0x5555_5555_5555_5555, 0)] == [0x5555_5555_5555_5555]
        assert index.query(0xAAAA_AAAA_AAAA_AAAA, 3) == []
        index.add(entry(3, 9, ts=20 * SECOND))  # expire bucket 0 and purge it
    assert rows_on_disk(path).get("tables@0") is None


def _written_by_the_previous_layout(path: Path) -> None:
    """An index as layout 1 left it: no layout version, a table per time bucket."""
    with BlockIndex(path, PLAN, retention_ms=7 * SECOND) as index:
        index.add(entry(1, 0xAAAA, ts=500))
    db = Rdict(str(path), column_families={n: Options(raw_mode=True) for n in Rdict.list_cf(str(path))})
    db.delete(LAYOUT_KEY)
    db.close()


def test_an_index_in_the_previous_layout_is_refused_and_a_partition_rebuilt(tmp_path: Path) -> None:
    _written_by_the_previous_layout(tmp_path / "ix")
    with pytest.raises(StoreLayoutError, match=r"a table per time bucket, the layout of an older neardup; rebuild"):
        BlockIndex(tmp_path / "ix", PLAN, retention_ms=7 * SECOND)
    part = IndexPartition(tmp_path / "ix", PLAN, retention_ms=7 * SECOND)
    try:
        assert part.index.query(0xAAAA, 0) == [], "its entries come back from the changelog"
    finally:
        part.close()


def test_an_event_id_and_its_entry_are_stored_once_however_many_rows_name_them(tmp_path: Path) -> None:
    path = tmp_path / "ix"
    long_id = "https://news.example.com/2026/11/25/" + "x" * 60
    stored = Entry(event_id=long_id, fingerprint=0x1234_5678_9ABC_DEF0, order=1, ts=100, sketch=b"\x07" * 130)
    with BlockIndex(path, PLAN, retention_ms=7 * SECOND) as index:
        index.add(stored, exact_keys=[11, 12])
        assert [e.event_id for e in index.query_exact(12)] == [long_id], "an anchor row finds its entry"
    with read_only(path) as db:
        values = []
        for name in Rdict.list_cf(str(path)):
            cf = db.get_column_family(name)
            values += [bytes(k) + bytes(v) for k, v in cf.items()]
            del cf
    assert sum(v.count(long_id.encode()) for v in values) == 1, "ten table rows and two anchors, one id"
    assert sum(v.count(stored.sketch) for v in values) == 1, "and one sketch"


def test_a_short_text_keeps_one_entry_and_each_key_names_it_once_even_when_replayed(tmp_path: Path) -> None:
    """A short text has a dozen exact keys (bands and edges) and no table rows: one entry, and a
    record a key; adding it again (a changelog's replay) stores nothing more."""
    path = tmp_path / "ix"
    short = Entry(event_id="post-1", fingerprint=0xBEEF, order=1, ts=100, sketch=b"\x07" * 130)
    with BlockIndex(path, PLAN, retention_ms=7 * SECOND) as index:
        for _ in range(2):
            index.add(short, tables=[], exact_keys=range(12))
        index.add(entry(2, 0xCAFE, ts=200), tables=[], exact_keys=[5])
        assert sorted(e.event_id for e in index.query_exact_many(range(12))) == ["ev-2", "post-1"]
        assert index.entry_count == 2
    rows = rows_on_disk(path)
    assert (rows["only@0"], rows["exact@0"], rows.get("entries@0"), rows.get("tables@0")) == (2, 13, None, None)
    with read_only(path) as db:
        cf = db.get_column_family("bucket@0")
        assert sum(bytes(v).count(short.sketch) for v in cf.values()) == 1, "its sketch once, not once a key"
        del cf


def test_an_exact_records_match_counts_only_on_a_record_boundary() -> None:
    record = bytes(range(10)) + b"e"
    straddling = b"\xff" + record[:10]  # the same ref and bucket bytes, one byte into a record
    live = {straddling[8:10], record[8:10]}
    assert append_records(straddling, [record], live) == straddling + record
    assert append_records(straddling + record, [record[:10] + b"o"], live) == straddling + record[:10] + b"o"
    assert live_records(straddling + record, {record[8:10]}) == record


def test_a_key_lives_while_any_of_its_records_does() -> None:
    old, new = bytes(range(10)) + b"e", bytes(range(20, 28)) + b"\x00\x09e"
    assert any_live(old, {old[8:10]}) and not any_live(old, {b"\x00\x07"}), "its bucket expired: the key goes"
    assert any_live(old + new, {old[8:10]}), "the oldest record alone is live"
    assert any_live(old + new, {new[8:10]}) and not any_live(old + new, {b"\x00\x07"})


def test_an_append_cuts_expired_records_when_the_oldest_is_one_or_the_key_is_full() -> None:
    def record(i: int, bucket: int) -> bytes:
        return i.to_bytes(8, "big") + bucket.to_bytes(2, "big") + b"e"

    live = {b"\x00\x02", b"\x00\x03"}
    assert append_records(record(1, 1) + record(2, 2), [record(3, 3)], live) == record(2, 2) + record(3, 3)
    out_of_order = record(2, 2) + record(1, 1)  # an older event added later: left until the key is full
    assert append_records(out_of_order, [record(3, 3)], live) == out_of_order + record(3, 3)
    full = record(0, 2) + record(1, 1) + b"".join(record(i, 3) for i in range(2, MAX_KEY_RECORDS))
    assert append_records(full, [record(99, 3)], live) == record(0, 2) + full[2 * RECORD :] + record(99, 3)
    assert append_records(full.replace(record(1, 1), record(1, 2)), [record(99, 3)], live) == full.replace(
        record(1, 1), record(1, 2)
    ), "full of live events: the new one is dropped"


def test_a_purge_deletes_the_keys_left_with_no_live_event_and_reads_skip_the_rest(tmp_path: Path) -> None:
    """An expired bucket's purge deletes each exact key none of whose events is live any more; a
    key shared with a later event keeps its expired record (no rewrite at the purge) until that
    key's next append, and no read returns it meanwhile."""
    path = tmp_path / "ix"
    with BlockIndex(path, PLAN, retention_ms=7 * SECOND, buckets=8) as index:
        index.add(entry(1, 0x1, ts=0), tables=[], exact_keys=[10, 11])
        index.add(entry(2, 0x2, ts=5 * SECOND), tables=[], exact_keys=[11])
        index.add(entry(3, 0x3, ts=9 * SECOND), tables=[], exact_keys=[12])  # bucket 0 expires and is purged
        assert index.query_exact(10) == [] and [e.event_id for e in index.query_exact(11)] == ["ev-2"]
    with read_only(path) as db:
        exact = db.get_column_family("exact")
        stored = {int.from_bytes(bytes(k), "big"): bytes(v) for k, v in exact.items()}
        del exact
    assert sorted(stored) == [11, 12], "key 10 named ev-1 alone and is gone"
    assert len(stored[11]) == 2 * RECORD, "key 11 still names ev-2, and keeps ev-1's record for now"
    with BlockIndex(path, PLAN, retention_ms=7 * SECOND, buckets=8) as index:
        index.add(entry(4, 0x4, ts=9 * SECOND), tables=[], exact_keys=[11])
        assert sorted(e.event_id for e in index.query_exact(11)) == ["ev-2", "ev-4"]
    with read_only(path) as db:
        exact = db.get_column_family("exact")
        assert len(bytes(exact[(11).to_bytes(16, "big")])) == 2 * RECORD, "the append cut ev-1's record"
        del exact


def test_a_key_names_its_first_events_only_so_a_template_costs_a_probe_no_more(tmp_path: Path) -> None:
    """A feed's template (or a post repeated a thousand times) shares keys across all its
    events: each key keeps the first ``MAX_KEY_RECORDS``, so a probe reads and verifies as many,
    not every event before it; an event named already is still re-stored in place."""
    with BlockIndex(tmp_path / "ix", PLAN, retention_ms=7 * SECOND) as index:
        for i in range(3 * MAX_KEY_RECORDS):
            index.add(entry(i, 0x1234 + i, ts=500), tables=[], exact_keys=[77, 1000 + i])
        named = [e.event_id for e in index.query_exact_many([77])]
        assert sorted(named, key=lambda eid: int(eid[3:])) == [f"ev-{i}" for i in range(MAX_KEY_RECORDS)]
        assert [e.event_id for e in index.query_exact_many([1000 + 2 * MAX_KEY_RECORDS])] == [
            f"ev-{2 * MAX_KEY_RECORDS}"
        ]  # its own key still finds an event the full key dropped
        index.add(Entry("ev-3", 0x9999, 3, 600, b"again"), tables=[], exact_keys=[77])
        again = {e.event_id: e for e in index.query_exact_many([77])}
        assert len(again) == MAX_KEY_RECORDS and again["ev-3"].sketch == b"again"


def test_an_index_with_event_ids_in_its_rows_is_refused(tmp_path: Path) -> None:
    with BlockIndex(tmp_path / "ix", PLAN, retention_ms=7 * SECOND) as index:
        index.add(entry(1, 0xAAAA, ts=500))
    db = Rdict(
        str(tmp_path / "ix"), column_families={n: Options(raw_mode=True) for n in Rdict.list_cf(str(tmp_path / "ix"))}
    )
    db.put(LAYOUT_KEY, b"2")
    db.close()
    with pytest.raises(StoreLayoutError, match=r"has layout b'2', not b'4'; rebuild it"):
        BlockIndex(tmp_path / "ix", PLAN, retention_ms=7 * SECOND)


def test_an_expired_bucket_is_dropped_without_writing_its_memtable_to_disk(tmp_path: Path) -> None:
    """Its rows leave every read at expiry: writing them out to files first is work for nothing."""
    rng = random.Random(3)
    with BlockIndex(tmp_path / "ix", PLAN, retention_ms=7 * SECOND, buckets=8, statistics=True) as index:
        for i in range(2_000):  # bucket 0 alone, still in the memtables
            index.add(entry(i, rng.getrandbits(64), ts=i // 2), exact_keys=[i])
        index.add(entry(2_000, 5, ts=9 * SECOND))  # expires bucket 0, purged and dropped in this write
        assert 0 not in index.live_buckets and not index.purging
        assert index.counter("rocksdb.flush.write.bytes") == 0
