"""An index partition's changelog records, on real RocksDB stores: what a restore rebuilds from them.

The records are :mod:`topology.changelog`'s msgpack; records written before it were JSON and
must still restore a partition, since a changelog keeps the retention window and a day.
"""

from __future__ import annotations

import base64
import json
import random
from pathlib import Path

import pytest

from topology.changelog import IndexOp, decode_ops, encode_ops
from topology.stages import total_order
from worker.engine.match import Entry
from worker.settings import Settings
from worker.state.partition import IndexPartition

SETTINGS = Settings()
PLAN = SETTINGS.block_plan
NOW_MS = 1_780_000_000_000


def _entries(n: int, seed: int = 7) -> list[tuple[Entry, list[int], list[int]]]:
    """Entries as the index stage adds them: some in tables, some under exact keys only, with
    orders past 64 bits (append time, partition, offset) and sketches of real lengths."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        order = total_order(NOW_MS + i, i % 4, 1_000 + i)
        sketch = rng.randbytes(rng.choice((130, 300, 460)))
        entry = Entry(f"ev-{i}", rng.getrandbits(64), order, NOW_MS + i, sketch)
        tables = [] if i % 3 == 0 else rng.sample(range(len(PLAN.tables)), 3)
        out.append((entry, tables, [rng.getrandbits(64) for _ in range(rng.randrange(1, 13))]))
    return out


def _live(tmp_path: Path, entries: list[tuple[Entry, list[int], list[int]]]) -> IndexPartition:
    live = IndexPartition(tmp_path / "live", PLAN, SETTINGS.retention_ms)
    for entry, tables, keys in entries:
        live.add(entry, tables=tables, exact_keys=keys)
    return live


def _found(store: IndexPartition, entry: Entry, tables: list[int], keys: list[int]) -> list[Entry]:
    near = store.candidates(entry.fingerprint, tables, 0) + store.exact_candidates(entry.fingerprint, keys)
    return sorted({c.entry.event_id: c.entry for c in near}.values(), key=lambda e: e.event_id)


def _json_before(ops: list[IndexOp]) -> bytes:
    """A record as the changelog was written before msgpack: ``[id, fp, order, ts, sketch in
    base64, tables, exact_keys]`` in a JSON array."""
    rows = [
        [op.event_id, op.fingerprint, op.order, op.ts, base64.b64encode(op.sketch).decode(), op.tables, op.exact_keys]
        for op in ops
    ]
    return json.dumps(rows, separators=(",", ":")).encode()


def test_a_partition_restored_from_its_records_finds_what_the_live_one_found(tmp_path: Path) -> None:
    entries = _entries(60)
    live = _live(tmp_path, entries)
    records = encode_ops(live.take_ops())
    restored = IndexPartition(tmp_path / "restored", PLAN, SETTINGS.retention_ms)
    for record in records:
        restored.apply(decode_ops(record))
    for entry, tables, keys in entries:
        found = _found(restored, entry, tables, keys)
        assert entry in found, entry.event_id  # id, fingerprint, 128-bit order, ts and sketch
        assert found == _found(live, entry, tables, keys)
    live.close()
    restored.close()


def test_a_record_carries_sketches_as_bytes_in_less_room_than_json() -> None:
    entries = _entries(200)
    ops = [IndexOp.of(e.event_id, e.fingerprint, e.order, e.ts, e.sketch) for e, _, _ in entries]
    for op, (_, tables, keys) in zip(ops, entries, strict=True):
        op.tables.extend(tables)
        op.exact_keys.extend(keys)
    (record,) = encode_ops(ops)
    assert all(e.sketch in record for e, _, _ in entries)
    before = _json_before(ops)
    assert len(record) < 0.8 * len(before), (len(record), len(before))


def test_a_json_record_written_before_still_restores(tmp_path: Path) -> None:
    entries = _entries(30)
    live = _live(tmp_path, entries)
    record = _json_before(live.take_ops())
    restored = IndexPartition(tmp_path / "restored", PLAN, SETTINGS.retention_ms)
    restored.apply(decode_ops(record))
    for entry, tables, keys in entries:
        assert entry in _found(restored, entry, tables, keys)
    live.close()
    restored.close()


def test_a_large_batch_goes_in_records_under_the_limit_and_in_order(tmp_path: Path) -> None:
    entries = _entries(300)
    live = _live(tmp_path, entries)
    ops = live.take_ops()
    records = encode_ops(ops, max_bytes=16_384)
    assert len(records) > 4 and all(len(r) <= 16_384 for r in records)
    assert [op for record in records for op in decode_ops(record)] == ops
    big = IndexOp.of("big", 1, 2, 3, bytes(20_000))
    assert encode_ops([big], max_bytes=16_384) == encode_ops([big])  # an op over the limit goes alone
    live.close()


@pytest.mark.parametrize(
    "record",
    [b"\x00\x01garbage", b"\x91\x93\xa1a\x01\x02", b"[1, 2", b'{"not": "a list"}'],
    ids=["bytes", "msgpack of another shape", "cut json", "json object"],
)
def test_a_record_of_neither_format_is_refused_with_a_reason(record: bytes) -> None:
    with pytest.raises(ValueError, match="changelog record|JSON|malformed|truncated"):
        decode_ops(record)
