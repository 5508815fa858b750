"""Shares that reach an index partition out of arrival order get the verdicts scan gives.

Events of several input partitions (and other workers' shares, through Kafka) reach an
index partition in the order their batches ran, not quite in arrival order. A backfill mixes
event times further apart than the retention window: an event eight days newer, stored a few
milliseconds before a copy that arrived earlier, must not move the copy's window past its
original. Real RocksDB stores, no Kafka.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.stream.test_stages import NOW_S, OTHER, SETTINGS, STORY, Message
from topology.records import Event
from worker.cli.deduplicator import Deduplicator
from worker.state.index import BlockIndex
from worker.state.partition import IndexPartition
from worker.stream.fingerprint import FingerprintStage
from worker.stream.index import IndexResult, IndexStage

DAY = 86_400_000
T0 = int(NOW_S * 1000) - 30 * DAY
NEWER = OTHER
# (id, text, event time, input partition); they arrive 10 ms apart in this order.
EVENTS = [
    ("story", STORY, T0, 0),
    ("copy", STORY + " Read more at example.com", T0 + 60_000, 1),
    ("newer", NEWER, T0 + 8 * DAY, 2),
    ("late-copy", STORY + " (updated)", T0 + 120_000, 0),
]


def _record(n: int) -> Message:
    """Event ``n`` of EVENTS as its input record, arriving 10 ms after the one before."""
    event_id, text, ts, partition = EVENTS[n]
    value = json.dumps({"id": event_id, "text": text, "ts": ts}).encode()
    return Message(value, n, partition, timestamp=NOW_S + n / 100)


def _index(stage: IndexStage, stores: dict[int, IndexPartition], n: int) -> IndexResult:
    out = FingerprintStage(SETTINGS).process([_record(n)])
    messages = {p: [(shares, list(out.intros[p].values()))] for p, shares in out.shares.items()}
    return stage.process(stores, messages)


def _earliest(result: IndexResult) -> set[Any]:
    return {
        ref["id"] for items in result.replies.values() for i in items if i["kind"] == "answer" for ref in i["earlier"]
    }


def test_a_copy_overtaken_by_a_much_newer_event_finds_its_original_as_in_scan(tmp_path: Path) -> None:
    with BlockIndex(tmp_path / "scan", SETTINGS.block_plan, retention_ms=SETTINGS.retention_ms) as store:
        dedup = Deduplicator(store, SETTINGS)
        scanned = {i: dedup.decide(Event(i, text, ts=ts)).duplicate_of for i, text, ts, _ in EVENTS}
    assert scanned == {"story": None, "copy": "story", "newer": None, "late-copy": None}

    stage = IndexStage(SETTINGS, "t.events")
    plan = SETTINGS.block_plan
    stores = {p: IndexPartition(tmp_path / f"index-{p}", plan, SETTINGS.retention_ms) for p in range(3)}
    try:
        results = {n: _index(stage, stores, n) for n in (0, 2, 1, 3)}  # "newer" overtakes "copy"
    finally:
        for s in stores.values():
            s.close()
    assert _earliest(results[1]) == {"story"} and results[1].late == 0
    assert _earliest(results[3]) == set(), "arrived after 'newer': its window is behind it, as in scan"
    assert results[3].late == 1


def test_no_note_tells_a_later_event_of_what_was_behind_its_window(tmp_path: Path) -> None:
    """The late copy, stored here before the newer event that arrived ahead of it, meets its
    original when that comes last: scan never lets it match (the newer event put the original
    behind its window), so no note may tell it otherwise."""
    stage = IndexStage(SETTINGS, "t.events")
    plan = SETTINGS.block_plan
    stores = {p: IndexPartition(tmp_path / f"index-{p}", plan, SETTINGS.retention_ms) for p in range(3)}
    try:
        results = {n: _index(stage, stores, n) for n in (3, 2, 0)}
    finally:
        for s in stores.values():
            s.close()
    notes = [i for items in results[0].replies.values() for i in items if i["kind"] == "earlier"]
    assert notes == []
