"""A worker's index partitions in one store (worker/state/shared.py) answer and log as a store each.

The index stage handles an event's shares of the partitions that share a store as one. What
it sends on (answers, notes, intros) and what each partition logs to its changelog must be
what stores of one partition each give, on real text, replays included; and a partition of
the shared store must be one that can be emptied and rebuilt from its own log alone.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from bench import devset
from tests.stream_helpers import producer
from topology import codec
from topology.changelog import IndexOp, encode_ops
from topology.stages import EXACT as EXACT_KIND
from topology.stages import Share, slot_partition
from topology.topics import TopicSpec, create_topics
from worker.engine.match import Entry
from worker.settings import Settings
from worker.state.changelog import StoreSet, close_and_delete
from worker.state.index import BlockIndex
from worker.state.layout import CHECKPOINT_RECORD, DIRTY_RECORD, EXACT, LOG, Bucket, pack
from worker.state.partition import IndexPartition, open_index
from worker.state.replay import ChangelogReader
from worker.state.shared import SHARED_DIR, SharedIndex, discard
from worker.stream.fingerprint import FingerprintStage, ProbeMessage
from worker.stream.index import IndexStage

SETTINGS = Settings(partitions=3, topic_prefix="t")
TOPIC = "t.index-changelog"
NOW_S = 1_760_000_000.0
BATCH = 100


class Message:
    """An input record as the fingerprint stage reads it."""

    def __init__(self, value: bytes, offset: int) -> None:
        self.value, self.offset, self.partition, self.topic = value, offset, 0, "t.events"
        self.timestamp, self.key = NOW_S + offset / 1000, None


def shared_index(root: Path, topic: str = TOPIC) -> SharedIndex:
    plan, retention = SETTINGS.block_plan, SETTINGS.retention_ms
    return SharedIndex(root, SETTINGS.partitions, topic, lambda path: open_index(path, plan, retention))


def own_stores(root: Path) -> dict[int, IndexPartition]:
    plan, retention = SETTINGS.block_plan, SETTINGS.retention_ms
    return {p: IndexPartition(root / str(p), plan, retention) for p in range(SETTINGS.partitions)}


def batches(size: int) -> list[dict[int, list[ProbeMessage]]]:
    """The dev set's first ``size`` events (stories, their copies, hard negatives), fingerprinted
    in batches as the worker takes them: each batch's messages by index partition."""
    events, _ = devset.build()
    stage = FingerprintStage(SETTINGS)
    out = []
    for start in range(0, size, BATCH):
        chunk = [Message(json.dumps(e).encode(), start + i) for i, e in enumerate(events[start : start + BATCH])]
        fanout = stage.process(chunk)
        out.append({p: [(shares, list(fanout.intros[p].values()))] for p, shares in fanout.shares.items()})
    return out


def sent(replies: dict[int, list[dict[str, Any]]]) -> dict[int, set[bytes]]:
    """What a batch sends each verdict partition. A set: a later event matched in several
    partitions gets a note from each store of one, and one from a shared store."""
    return {p: {codec.dumps(item) for item in items} for p, items in replies.items() if items}


def logged(stores: dict[int, IndexPartition]) -> dict[int, set[tuple[Any, ...]]]:
    """Each partition's changelog ops since the last call."""
    return {p: {_op(op) for op in store.take_ops()} for p, store in stores.items()}


def _op(op: IndexOp) -> tuple[Any, ...]:
    return (
        op.event_id,
        op.order_high,
        op.order_low,
        op.ts,
        op.sketch,
        tuple(sorted(op.tables)),
        tuple(sorted(op.exact_keys)),
    )


def run_both(tmp_path: Path, messages: list[dict[int, list[ProbeMessage]]]) -> tuple[list[Any], list[Any]]:
    """Each batch through stores of one partition each and through one shared store: what
    each sends and logs, batch by batch."""
    results: list[list[Any]] = [[], []]
    shared = shared_index(tmp_path / "shared")
    kinds = (own_stores(tmp_path / "own"), {p: shared.partition(p) for p in range(SETTINGS.partitions)})
    for stores, result in zip(kinds, results, strict=True):
        stage = IndexStage(SETTINGS, "t.events")
        for batch in messages:
            out = stage.process(stores, batch)
            result.append((sent(out.replies), out.late, out.dead, logged(stores)))
    for store in kinds[0].values():
        store.close()
    shared.close()
    return results[0], results[1]


@pytest.fixture(scope="module")
def dev_batches() -> list[dict[int, list[ProbeMessage]]]:
    return batches(1_500)


def test_a_shared_store_sends_and_logs_what_a_store_a_partition_does(
    tmp_path: Path, dev_batches: list[dict[int, list[ProbeMessage]]]
) -> None:
    own, shared = run_both(tmp_path, dev_batches)
    answers = [item for replies, *_ in shared for items in replies.values() for item in items]
    assert sum(b'"earlier":[{' in item for item in answers) > 100, "the dev events match each other"
    for n, (mine, theirs) in enumerate(zip(own, shared, strict=True)):
        assert mine == theirs, f"batch {n}"


def test_a_replayed_batch_is_stored_where_it_was_not_and_logged_as_a_store_a_partition_does(
    tmp_path: Path, dev_batches: list[dict[int, list[ProbeMessage]]]
) -> None:
    """A batch read again after a crash, first in part (some partitions' messages only), then
    whole: its events are found stored under some of their partitions' slots and not others."""
    first, second = dev_batches[0], dev_batches[1]
    part = {p: second[p] for p in sorted(second)[:1]}
    own, shared = run_both(tmp_path, [first, part, second, second])
    assert own == shared
    *_, again_logged = shared[2]
    assert any(again_logged.values()), "the whole batch stored what the part did not"
    *_, replay_logged = shared[3]
    assert not any(replay_logged.values()), "a batch replayed whole stores and logs nothing again"


def _probes(messages: dict[int, list[ProbeMessage]]) -> dict[int, list[Share]]:
    return {p: [share for shares, _ in batch for share in shares] for p, batch in messages.items()}


def test_a_partition_emptied_finds_nothing_and_its_own_log_rebuilds_it(
    tmp_path: Path, dev_batches: list[dict[int, list[ProbeMessage]]]
) -> None:
    shared = shared_index(tmp_path)
    stores = {p: shared.partition(p) for p in range(SETTINGS.partitions)}
    stage = IndexStage(SETTINGS, "t.events")
    for batch in dev_batches[:-1]:
        stage.process(stores, batch)
    ops = {p: store.take_ops() for p, store in stores.items()}
    probes = _probes(dev_batches[-1])

    def checked(p: int) -> list[Any]:
        return [stage.check(stores[p], share) for share in probes[p]]

    before = {p: checked(p) for p in stores}
    assert sum(len(found) for p in stores for _, found in before[p]) > 50
    discard(stores[1], tmp_path / "1")
    assert all(not found for _, found in checked(1)), "partition 1 holds nothing"
    assert {p: checked(p) for p in (0, 2)} == {p: before[p] for p in (0, 2)}
    stores[1].apply(ops[1])
    assert checked(1) == before[1]
    shared.close()


def _logged_keys(index: BlockIndex) -> tuple[set[int], set[int]]:
    """The exact keys a store holds, and those its buckets' logs name (what expiry deletes)."""
    held = {
        int.from_bytes(key[:16], "big")
        for key, _ in index._rows(Bucket(None, {EXACT: index._exact_cf}, {}, {EXACT: b""}), EXACT)
    }
    named = set()
    for bucket in index._buckets.values():
        for _, value in index._rows(bucket, LOG, values=True):
            named |= {int.from_bytes(value[at : at + 16], "big") for at in range(0, len(value), 16)}
    return held, named


def test_a_partition_emptied_leaves_the_others_keys_logged_for_their_expiry(
    tmp_path: Path, dev_batches: list[dict[int, list[ProbeMessage]]]
) -> None:
    """An add of several partitions' keys logs them in one row: emptying one partition must
    keep the others' keys in it, or their bucket's purge would never delete them."""
    shared = shared_index(tmp_path)
    stores = {p: shared.partition(p) for p in range(SETTINGS.partitions)}
    stage = IndexStage(SETTINGS, "t.events")
    for batch in dev_batches[:5]:
        stage.process(stores, batch)
    held, named = _logged_keys(shared.index)
    assert held and held <= named

    def of(part: int) -> set[int]:
        return {key for key in held if slot_partition((0, key, EXACT_KIND), SETTINGS.partitions) == part}

    assert all(of(p) for p in stores)
    stores[0].clear()
    after, named = _logged_keys(shared.index)
    assert after == held - of(0)
    assert after <= named and not named & of(0)
    shared.close()


def test_a_shared_store_left_mid_batch_is_rebuilt_whole_and_numbered_stores_go(tmp_path: Path) -> None:
    """A partition dirty at start may hold a batch its log has not: the whole store is emptied
    (every partition then replays its log). Stores of one partition each, as earlier workers
    kept them beside it, are removed."""
    old = tmp_path / "0"
    BlockIndex(old, SETTINGS.block_plan, retention_ms=SETTINGS.retention_ms).close()
    shared = shared_index(tmp_path)
    store = shared.partition(2)
    store.put_record("changelog:next", b"42")
    assert not old.exists()
    shared.close()
    shared = shared_index(tmp_path)
    assert shared.partition(2).get_record("changelog:next") == b"42", "a clean store is kept"
    shared.partition(1).put_record(DIRTY_RECORD, b"1")
    shared.close()
    shared = shared_index(tmp_path)
    assert shared.partition(2).get_record("changelog:next") is None
    assert [p.name for p in tmp_path.iterdir()] == [SHARED_DIR]
    shared.close()


def test_a_store_its_changelog_refuses_goes_whole(tmp_path: Path) -> None:
    """A worker of other settings stamps the store it opens with them; once its changelog
    refuses them, none of it may stay for the right settings to find."""
    shared = shared_index(tmp_path)
    discard(shared.partition(0), tmp_path / "0", stamped=True)
    assert not (tmp_path / SHARED_DIR).exists()


def test_a_store_of_its_own_is_deleted_with_its_directory(tmp_path: Path) -> None:
    store = IndexPartition(tmp_path / "0", SETTINGS.block_plan, SETTINGS.retention_ms)
    close_and_delete(store, tmp_path / "0")
    assert not (tmp_path / "0").exists()
    with pytest.raises(TypeError, match="not a partition of a shared index"):
        discard(IndexPartition(tmp_path / "1", SETTINGS.block_plan, SETTINGS.retention_ms), tmp_path / "1")


def owned(stores: StoreSet[IndexPartition], partition: int) -> IndexPartition:
    store = stores.owned_store(partition)
    assert store is not None, f"partition {partition} is not restored"
    return store


@pytest.mark.kafka
def test_a_partition_past_its_log_is_rebuilt_from_it_and_the_others_keep_theirs(
    kafka_bootstrap: str, tmp_path: Path, dev_batches: list[dict[int, list[ProbeMessage]]]
) -> None:
    """Restored through the worker's store set from a real changelog: a partition whose
    checkpoint is past its log's end (the log was deleted or cut) loses what its log lacks, an
    event stored there and never logged, and is rebuilt from its log alone."""
    topic = f"s{uuid.uuid4().hex[:8]}.index-changelog"
    create_topics(kafka_bootstrap, [TopicSpec(topic, partitions=SETTINGS.partitions, role="changelog")])
    live = shared_index(tmp_path / "live")
    stores = {p: live.partition(p) for p in range(SETTINGS.partitions)}
    stage = IndexStage(SETTINGS, "t.events")
    with producer(kafka_bootstrap) as made:
        for batch in dev_batches[:-1]:
            stage.process(stores, batch)
            for p, store in stores.items():
                for record in encode_ops(store.take_ops()):
                    made.send(topic, record, key=uuid.uuid4().hex.encode(), partition=p)
        made.flush()
    probes = _probes(dev_batches[-1])
    expected = {p: [stage.check(stores[p], share) for share in probes[p]] for p in stores}
    live.close()

    shared = shared_index(tmp_path / "worker", topic)

    async def restore_all(reader: ChangelogReader) -> StoreSet[IndexPartition]:
        restored: StoreSet[IndexPartition] = StoreSet(
            shared.root, topic, lambda path: shared.partition(int(path.name)), reader, discard=discard
        )
        for p in range(SETTINGS.partitions):
            await restored.restore(p)
        return restored

    async def run() -> dict[int, list[Any]]:
        reader = ChangelogReader({"bootstrap_servers": kafka_bootstrap})
        try:
            restored = await restore_all(reader)
            views = {p: owned(restored, p) for p in range(SETTINGS.partitions)}
            assert {p: [stage.check(v, share) for share in probes[p]] for p, v in views.items()} == expected
            # A copy of one of partition 1's events, stored there and never logged, and a
            # checkpoint past the log's end.
            probe = next(share for share in probes[1] if share.kinds().stored)
            kinds = probe.kinds()
            copy = pack(Entry("unlogged", probe.fingerprint, probe.order - 1, probe.ts, probe.sketch))
            views[1].store(copy, kinds.tables, kinds.stored)
            assert any(c["id"] == "unlogged" for c in stage.check(views[1], probe)[1])
            views[1].put_record(CHECKPOINT_RECORD, b"1000000")
            restored.forget([1])
            await restored.restore(1)
            return {p: [stage.check(owned(restored, p), share) for share in probes[p]] for p in views}
        finally:
            await reader.close()

    assert asyncio.run(run()) == expected
    shared.close()
