"""A worker's stores share one memtable budget and one block cache (worker/state/memory.py)."""

from __future__ import annotations

import random
from pathlib import Path

from worker.engine.blocks import plan_for
from worker.engine.match import Entry
from worker.state.index import BlockIndex
from worker.state.memory import SharedMemory
from worker.state.verdicts import VerdictPartition

PLAN = plan_for(k=3, expected=10_000_000)
DAY = 86_400_000
BUDGET_MB = 64  # above what the memtables of two stores reserve as they start (arena blocks, blooms)


def fill(index: BlockIndex, rng: random.Random, first: int, count: int) -> None:
    """Entries of 1 KB sketches, a write of a hundred at a time (about 150 KB of memtable)."""
    for start in range(first, first + count, 100):
        index.add_many(
            (Entry(f"ev-{i}", rng.getrandbits(64), i, i, rng.randbytes(1024)), None, [i])
            for i in range(start, start + 100)
        )


def test_stores_flush_when_their_memtables_together_pass_the_budget(tmp_path: Path) -> None:
    """Two stores written in turn, over twice a budget's worth: their memtables together stay near
    the budget (it is a soft bound: memtables being flushed still count), where each store alone
    would hold up to 256 MiB before it flushed anything. Flushes finish in the background, so
    the writes are well over the budget for what has left memory to pass it on a busy machine."""
    memory = SharedMemory.of(cache_mb=1, memtable_mb=BUDGET_MB)
    rng = random.Random(5)
    stores = [
        BlockIndex(tmp_path / f"ix{n}", PLAN, retention_ms=7 * DAY, memory=memory, statistics=True) for n in (0, 1)
    ]
    try:
        peak = 0
        for round_ in range(16):
            for store in stores:
                fill(store, rng, round_ * 8_000, 4_000)
                peak = max(peak, memory.usage()["memtables"])
        written = sum(store.counter("rocksdb.flush.write.bytes") for store in stores)
        assert all(store.counter("rocksdb.flush.write.bytes") > 0 for store in stores)
        assert written > BUDGET_MB << 20  # most of what was written has left memory
        assert peak < 2 * (BUDGET_MB << 20)
    finally:
        for store in stores:
            store.close()


def test_a_store_alone_keeps_its_own_budget(tmp_path: Path) -> None:
    """Without the shared budget (a scan's one store) a store's share of those writes stays in memory."""
    rng = random.Random(5)
    with BlockIndex(tmp_path / "ix", PLAN, retention_ms=7 * DAY, statistics=True) as store:
        fill(store, rng, 0, 16_000)
        assert store.counter("rocksdb.flush.write.bytes") == 0


def test_verdict_stores_count_in_the_same_budget(tmp_path: Path) -> None:
    memory = SharedMemory.of(cache_mb=1, memtable_mb=BUDGET_MB)
    before = memory.usage()["memtables"]
    store = VerdictPartition(tmp_path / "verdicts", 7 * DAY, memory)
    try:
        for i in range(2_000):
            store.put_record(f"r{i}", random.Random(i).randbytes(512))
        assert memory.usage()["memtables"] > before + (512 << 10)
    finally:
        store.close()
