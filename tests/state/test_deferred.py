"""A deferred block of adds (one RocksDB write at its end) answers every query as adds written one
by one would, on real databases in temporary directories."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rocksdict import WriteBatch

from worker.engine.blocks import parse_plan
from worker.engine.match import Entry
from worker.state.index import BlockIndex
from worker.state.layout import MAX_KEY_RECORDS, RECORD, append_records
from worker.state.pending import Pending

PLAN = parse_plan("10x25", k=3, expected=1_000_000)
RETENTION_MS = 8_000
CENTRES = (0, (1 << 64) - 1, 0x0123_4567_89AB_CDEF)

# One add: (id number, centre, flipped bits, ts, whether in the tables, exact keys).
Add = tuple[int, int, frozenset[int], int, bool, tuple[int, ...]]

adds = st.tuples(
    st.integers(0, 12),  # a small pool of ids, so some are sent again, with other text
    st.sampled_from(range(len(CENTRES))),
    st.frozensets(st.integers(0, 63), max_size=5),
    st.integers(0, 30_000),  # event times over several buckets and the horizon, out of order
    st.booleans(),
    st.lists(st.integers(1, 6), max_size=3, unique=True).map(tuple),
)


def _entry(add: Add, order: int) -> Entry:
    number, centre, flips, ts, _, _ = add
    fingerprint = CENTRES[centre] ^ sum(1 << bit for bit in flips)
    return Entry(f"ev-{number}", fingerprint, order, ts, order.to_bytes(4, "big"))


def _views(index: BlockIndex, entry: Entry) -> tuple[set[tuple[str, int, int]], set[tuple[str, int]]]:
    """What a probe with ``entry``'s fingerprint and exact keys 1-6 finds."""
    near = {(c.entry.event_id, c.entry.order, c.distance) for c in index.query(entry.fingerprint, 4)}
    exact = {(e.event_id, e.order) for e in index.query_exact_many(range(1, 7))}
    return near, exact


def _tables(fingerprint: int, in_tables: bool, share: int | None) -> tuple[int, ...] | None:
    """The tables an add stores: none, or the store's share of them: all (``neardup scan``'s
    one store), or those one of two partitions gets by the table's key, as the stream routes
    them. So equal fingerprints have equal tables in a store, which the table scan relies on."""
    if not in_tables:
        return ()
    if share is None:
        return None
    return tuple(t for t, key in enumerate(PLAN.keys(fingerprint)) if (key + t) % 2 == share)


def _add(index: BlockIndex, add: Add, order: int, share: int | None, one: bool = False) -> None:
    """Store ``add`` with its record: in one call, or (``one``) as the stream's index stage
    stores a share, :meth:`~BlockIndex.add_one`, and its record apart."""
    entry, keys = _entry(add, order), add[5]
    tables = _tables(entry.fingerprint, add[4], share)
    if tables == () and not keys:
        keys = (1,)
    record = (f"v:{order}", str(order).encode())
    if one:
        index.add_one(entry, tables, keys)
        index.put_record(*record, ts=entry.ts)
    else:
        index.add(entry, tables=tables, exact_keys=keys, record=record)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(stream=st.lists(adds, min_size=1, max_size=40), block=st.integers(1, 12), share=st.sampled_from([None, 0, 1]))
def test_deferred_blocks_answer_as_single_writes(
    tmp_path_factory: pytest.TempPathFactory, stream: list[Add], block: int, share: int | None
) -> None:
    base = tmp_path_factory.mktemp("deferred")
    with (
        BlockIndex(base / "one", PLAN, retention_ms=RETENTION_MS, buckets=4) as one_by_one,
        BlockIndex(base / "block", PLAN, retention_ms=RETENTION_MS, buckets=4) as deferred,
    ):
        for start in range(0, len(stream), block):
            with deferred.deferred():
                for order, add in enumerate(stream[start : start + block], start=start):
                    _add(one_by_one, add, order, share)
                    _add(deferred, add, order, share, one=order % 2 == 1)
                    probe = _entry(add, order)
                    assert _views(deferred, probe) == _views(one_by_one, probe)
                    assert deferred.get_record(f"v:{order}") == one_by_one.get_record(f"v:{order}")
                    assert deferred.horizon == one_by_one.horizon
            for order, add in enumerate(stream):  # after the write, every earlier probe as well
                probe = _entry(add, order)
                assert _views(deferred, probe) == _views(one_by_one, probe)


def test_a_block_is_one_write(tmp_path: Path) -> None:
    """The point of a block: its adds reach RocksDB as one write, not one an event."""
    with BlockIndex(tmp_path / "idx", PLAN, retention_ms=RETENTION_MS, statistics=True) as index:
        before = index.counter("rocksdb.write.self")
        with index.deferred():
            for i in range(50):
                index.add(Entry(f"ev-{i}", i * 7919, i, 1_000 + i, b"s"), exact_keys=[i % 5 + 1])
        assert index.counter("rocksdb.write.self") == before + 1
        assert {e.event_id for e in index.query_exact_many([1])} == {f"ev-{i}" for i in range(0, 50, 5)}


def test_a_key_a_block_fills_names_its_first_events_at_every_probe(tmp_path: Path) -> None:
    """A template's events share a key, probed before each add of a block: every probe sees the
    records staged before it, up to the key's first ``MAX_KEY_RECORDS``, as the write leaves them."""

    def order(event_id: str) -> int:
        return int(event_id[3:])

    with BlockIndex(tmp_path / "idx", PLAN, retention_ms=RETENTION_MS) as index:
        with index.deferred():
            for i in range(3 * MAX_KEY_RECORDS):
                named = sorted((e.event_id for e in index.query_exact_many([77])), key=order)
                assert named == [f"ev-{j}" for j in range(min(i, MAX_KEY_RECORDS))]
                index.add(Entry(f"ev-{i}", i * 7919, i, 1_000 + i, b"s"), tables=[], exact_keys=[77])
        named = sorted((e.event_id for e in index.query_exact_many([77])), key=order)
        assert named == [f"ev-{j}" for j in range(MAX_KEY_RECORDS)]


def test_a_refused_add_stages_nothing(tmp_path: Path) -> None:
    """An entry the index refuses (a table the plan lacks) fails alone; the block's other adds are written."""
    with BlockIndex(tmp_path / "idx", PLAN, retention_ms=RETENTION_MS) as index:
        with index.deferred():
            index.add(Entry("kept", 5, 0, 1_000, b"s"), exact_keys=[9])
            with pytest.raises(ValueError, match="table 99"):
                index.add(Entry("refused", 5, 1, 1_000, b"s"), tables=[99], exact_keys=[9])
        assert [e.event_id for e in index.query_exact_many([9])] == ["kept"]
        assert [c.entry.event_id for c in index.query(5, 0)] == ["kept"]


def test_blocks_do_not_nest(tmp_path: Path) -> None:
    with BlockIndex(tmp_path / "idx", PLAN) as index, index.deferred():
        with pytest.raises(RuntimeError, match="do not nest"):
            with index.deferred():
                pass


def test_a_keys_staged_value_is_its_records_on_the_stored_value_read_last() -> None:
    """Merged as records come, and again from the start if the stored value has changed."""
    pending = Pending(WriteBatch(raw_mode=True), overlay=True)
    record = [bytes([i]) * RECORD for i in range(1, 5)]
    live = {r[8:10] for r in record}
    pending.exact[b"k"] = [record[0], record[1]]
    assert pending.exact_value(b"k", None, live) == record[0] + record[1]
    pending.exact[b"k"].append(record[2])
    assert pending.exact_value(b"k", None, live) == record[0] + record[1] + record[2]
    assert pending.exact_value(b"k", record[3], live) == append_records(record[3], record[:3], live)
    pending.exact[b"new"] = [record[0]]
    assert pending.exact_value(b"new", None, live) == append_records(None, [record[0]], live) == record[0]
