"""Shares racing to the index partitions, in any order Kafka allows, end in scan's verdicts.

Events of several input partitions reach each index partition in whatever order their
batches ran there: one input partition's batches stay in order, but how they interleave with
the others' differs from one index partition to the next (two workers, a slow fetch). A later
copy indexed before its original learns of it by a note, which revises its verdict. Whatever
the interleaving, each id must end pointing where `neardup scan` points it, reading the events
in their total order. The shipped sample (200 events of zh and en news and posts, 48 copies)
runs through the three stages' ``process`` over real RocksDB stores, no Kafka; each seed is
one draw of partitions, batch cuts and interleavings.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from tests.stream.test_stages import SETTINGS, Message, RecordingSends
from topology.records import Event
from topology.stages import answer_partition, total_order
from worker.cli.deduplicator import Deduplicator
from worker.cli.inputs import default_sample
from worker.state.changelog import StoreSet
from worker.state.index import BlockIndex
from worker.state.partition import IndexPartition
from worker.state.verdicts import VerdictPartition
from worker.stream.fingerprint import FingerprintStage, ProbeMessage
from worker.stream.index import IndexStage
from worker.stream.verdict import VerdictStage

SAMPLE = [json.loads(line) for line in Path(default_sample()).read_text(encoding="utf-8").splitlines() if line]
T0_S = 1_760_000_000.0


def _records(rng: random.Random, skew_ms: int) -> list[Message]:
    """The sample in its file order, each to a random input partition, some in one millisecond;
    with ``skew_ms``, each event's own time up to that far from its arrival, either way."""
    offsets = [0] * 3
    ms = 0
    records = []
    for event in SAMPLE:
        ms += rng.choice((0, 1, 1, 3))
        partition = rng.randrange(3)
        fields = {"id": event["id"], "text": event["text"]}
        if skew_ms:
            fields["ts"] = int(T0_S * 1000) + ms + rng.randint(-skew_ms, skew_ms)
        records.append(Message(json.dumps(fields).encode(), offsets[partition], partition, timestamp=T0_S + ms / 1000))
        offsets[partition] += 1
    return records


def _scan(records: list[Message], path: Path) -> dict[str, str | None]:
    ordered = sorted(records, key=lambda r: total_order(int(r.timestamp * 1000), r.partition, r.offset))
    with BlockIndex(path, SETTINGS.block_plan, retention_ms=SETTINGS.retention_ms) as store:
        dedup = Deduplicator(store, SETTINGS)
        decided = {}
        for r in ordered:
            event = json.loads(r.value)
            ts = event.get("ts", int(r.timestamp * 1000))
            decided[event["id"]] = dedup.decide(Event(event["id"], event["text"], ts=ts))
    return {i: v.duplicate_of for i, v in decided.items()}


def _racing_messages(records: list[Message], rng: random.Random) -> list[tuple[int, ProbeMessage]]:
    """Each input partition's records cut into batches and fanned out; what each index partition
    receives, as (index partition, message), in a random interleaving of the input partitions
    that keeps each one's batches in order, drawn anew for every index partition."""
    stage = FingerprintStage(SETTINGS)
    queues: dict[int, dict[int, list[ProbeMessage]]] = {p: {} for p in range(SETTINGS.partitions)}
    for source in range(3):
        mine = [r for r in records if r.partition == source]
        while mine:
            cut = rng.randint(1, 12)
            out = stage.process(mine[:cut])
            mine = mine[cut:]
            for part in range(SETTINGS.partitions):
                shares, intros = out.shares.get(part, []), list(out.intros.get(part, {}).values())
                if shares or intros:
                    queues[part].setdefault(source, []).append((shares, intros))
    lines = {part: _interleaved(by_source, rng) for part, by_source in queues.items()}
    merged = []  # the index partitions run independently of one another
    while any(lines.values()):
        part = rng.choice([p for p, line in lines.items() if line])
        merged.append((part, lines[part].pop(0)))
    return merged


def _interleaved(by_source: dict[int, list[ProbeMessage]], rng: random.Random) -> list[ProbeMessage]:
    line = []
    while any(by_source.values()):
        source = rng.choice([s for s, queue in by_source.items() if queue])
        line.append(by_source[source].pop(0))
    return line


# Event times: the append time, or a producer's clock up to 6 hours off it either way (a feed's
# times jitter; none jumps by the retention window, where each partition's cut can differ from
# scan's: docs/architecture.md, "Known limits").
@pytest.mark.parametrize("skew_ms", [0, 6 * 3_600_000], ids=["append-time", "skewed"])
@pytest.mark.parametrize("seed", range(5))
def test_racing_shares_end_in_the_verdicts_scan_gives(seed: int, skew_ms: int, tmp_path: Path) -> None:
    rng = random.Random(seed)
    records = _records(rng, skew_ms)
    expected = _scan(records, tmp_path / "scan")
    plan = SETTINGS.block_plan
    istores = {p: IndexPartition(tmp_path / f"i{p}", plan, SETTINGS.retention_ms) for p in range(SETTINGS.partitions)}
    vstores = {p: VerdictPartition(tmp_path / f"v{p}", SETTINGS.retention_ms) for p in range(SETTINGS.partitions)}
    index = IndexStage(SETTINGS, "t.events")
    # Nothing here is acknowledged: held verdicts stay held (a note revises them), nothing is sent.
    sends = RecordingSends()
    verdict = VerdictStage(SETTINGS, StoreSet(tmp_path / "unused", "t.vc", VerdictPartition, None), sends, None)
    try:
        for part, message in _racing_messages(records, rng):
            result = index.process(istores, {part: [message]})
            assert result.dead == []
            verdict.process(vstores, dict(result.replies), now=int(T0_S * 1000))
        final = {}
        for event_id in expected:
            published = vstores[answer_partition(event_id, SETTINGS.partitions)].verdict(event_id)
            assert published is not None, f"{event_id} has no verdict"
            final[event_id] = None if published.current is None else published.current.id
    finally:
        for store in [*istores.values(), *vstores.values()]:
            store.close()
    assert sum(v is not None for v in expected.values()) > 30, "the sample has copies to race"
    assert final == expected
    assert sends.sent == []
