"""Expiry keeps pace with a worker at full load: the purge after each batch is sized to it.

A worker draining a backlog takes batches of hundreds of events, and each stores an entry in
most of its index partitions. A fixed slice of a purge after each batch kept pace with small
batches only; at full load expired buckets piled up, out of every read but on disk.
"""

from __future__ import annotations

import random
from pathlib import Path

from topology.stages import total_order
from worker.engine.blocks import plan_for
from worker.engine.match import Entry
from worker.settings import Settings
from worker.state.buckets import PURGE_SLICE
from worker.state.partition import IndexPartition
from worker.stream.index import IndexStage

PLAN = plan_for(k=3, expected=1_000_000)
SECOND = 1_000
RETENTION_MS = 7 * SECOND  # buckets of one second
BATCH = 200  # entries a batch adds to each partition
STEP_MS = 250  # event time a batch covers: four batches a bucket


def test_expired_buckets_do_not_pile_up_under_full_batches(tmp_path: Path) -> None:
    rows_a_batch = 2 * 2 * BATCH  # two partitions, an entry row and a log row an entry
    assert rows_a_batch > PURGE_SLICE, "a batch adds more than one fixed slice purges"
    rng = random.Random(3)
    prints = [rng.getrandbits(64) for _ in range(500)]  # their block keys computed once
    stage = IndexStage(Settings(), "events")
    # Expiry waits out the reorder window of arrival time (worker.state.arrivals): a batch's here.
    stores = [IndexPartition(tmp_path / f"index-{p}", PLAN, RETENTION_MS, reorder_ms=STEP_MS) for p in range(2)]
    pending = []
    try:
        for batch in range(2 * RETENTION_MS // STEP_MS):  # two windows
            for store in stores:
                with store.deferred():  # a batch's adds in one write, as the index stage writes them
                    for n in range(BATCH):
                        ts = batch * STEP_MS + n * STEP_MS // BATCH
                        order = total_order(ts, 0, batch * BATCH + n)  # arrived as it happened
                        entry = Entry(f"e{batch}-{n}", rng.choice(prints), order, ts, b"s" * 130)
                        store.add(entry, tables=[0, 1], exact_keys=[rng.getrandbits(128)])
            stage.upkeep(stores)
            pending.append(max(store.purges_pending for store in stores))
        assert max(pending) <= 2, pending
        assert sum(pending[-16:]) > 0, "buckets did expire and were purged along the way"
    finally:
        for store in stores:
            store.close()


def _backfill(tmp_path: Path, lone: bool) -> list[int]:
    """Batches 10 ms of arrival apart, each a second of event time (a backfill), through the
    index stage with the default reorder window: the live buckets of a store after each."""
    rng = random.Random(5)
    stage = IndexStage(Settings(), "events")
    store = IndexPartition(tmp_path / f"index-{lone}", PLAN, RETENTION_MS)
    live = []
    try:
        for batch in range(3 * RETENTION_MS // SECOND):  # three windows of event time
            arrived = batch * 10
            with store.deferred():
                for n in range(20):
                    ts = batch * SECOND + n * SECOND // 20
                    entry = Entry(
                        f"e{batch}-{n}", rng.getrandbits(64), total_order(arrived, 0, batch * 20 + n), ts, b"s"
                    )
                    store.add(entry, tables=[0])
            stage.upkeep([store], arrived + 1 if lone else None)  # the frontier: this batch is in
            live.append(len(store.index.live_buckets))
    finally:
        store.close()
    return live


def test_a_lone_worker_keeps_one_window_live_in_a_backfill(tmp_path: Path) -> None:
    """Expiry waits out a reorder window of arrival time for events that may still come; a lone
    worker knows when none can (its frontier), so a backfill keeps one window, not the weeks of
    event time that a minute of its arrivals spans."""
    window = RETENTION_MS // SECOND + 1  # a bucket a second, and the one the newest events fill
    alone, unknown = _backfill(tmp_path, lone=True), _backfill(tmp_path, lone=False)
    assert max(alone) <= window, alone
    assert unknown[-1] > 2 * window, "without the frontier nothing expired"
