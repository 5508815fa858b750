"""A restore applies a flush's chunks only when every one of them is in the changelog.

The reassembly rules are pure; the last test replays a real topic on the broker into a
real verdict store, with a flush cut short as a kill between two chunks leaves it.
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.stream_helpers import producer
from topology import codec
from topology.topics import TopicSpec, create_topics
from worker.state.flushes import Reassembly, chunk_keys
from worker.state.replay import ChangelogReader
from worker.state.verdicts import VerdictPartition


def ops(*keys: str) -> list[Any]:
    return [[key, {"n": key}] for key in keys]


def test_a_whole_record_applies_at_once_and_chunks_once_all_are_in() -> None:
    whole = Reassembly("t")
    three = chunk_keys(3)
    assert len(set(three)) == 3 and len(chunk_keys(1)) == 1
    assert whole.feed(chunk_keys(1)[0], ops("a")) == [ops("a")]
    assert whole.feed(three[0], ops("b")) == []
    assert whole.feed(three[1], ops("c")) == []
    assert whole.feed(chunk_keys(1)[0], ops("t")) == [ops("t")]  # another producer's record in between
    assert whole.feed(three[2], ops("d")) == [ops("b"), ops("c"), ops("d")]
    assert whole.feed(uuid.uuid4().hex.encode(), ops("e")) == [ops("e")]  # a record written before chunk keys
    whole.finish()
    assert whole.dropped == 0


def test_a_flush_cut_short_is_left_out_wherever_the_log_goes_on() -> None:
    cut, next_flush = chunk_keys(3), chunk_keys(2)
    whole = Reassembly("t")
    assert whole.feed(cut[0], ops("a")) == [] and whole.feed(cut[1], ops("b")) == []
    assert whole.feed(next_flush[0], ops("c")) == []  # the next flush begins: the cut one never completes
    assert whole.feed(next_flush[1], ops("d")) == [ops("c"), ops("d")]
    assert whole.feed(cut[0], ops("x")) == []
    whole.finish()  # the log ends mid-flush
    assert whole.dropped == 3
    tail = Reassembly("t")  # a log whose start (retention) fell inside a flush
    assert tail.feed(cut[1], ops("b")) == [] and tail.feed(cut[2], ops("c")) == []
    assert tail.dropped == 2


@pytest.mark.kafka
def test_a_restore_leaves_out_a_flush_a_kill_cut_between_two_chunks(kafka_bootstrap: str, tmp_path: Path) -> None:
    topic = f"f{uuid.uuid4().hex[:8]}.verdict-changelog"
    create_topics(kafka_bootstrap, [TopicSpec(topic, partitions=1, role="changelog")])
    complete, cut = chunk_keys(2), chunk_keys(2)
    records = [
        (complete[0], ops("v:a")),
        (complete[1], [["o:1", {"outputs": [["unique", "a", None]]}]]),
        (cut[0], ops("v:b")),  # its outbox entry, in the second chunk, never reached the log
    ]
    with producer(kafka_bootstrap) as made:
        for key, value in records:
            made.send(topic, codec.dumps(value), key=key, partition=0)
        made.flush()
    store = VerdictPartition(tmp_path / "v")

    async def replay() -> int:
        reader = ChangelogReader({"bootstrap_servers": kafka_bootstrap})
        try:
            end = await reader.end_offset(topic, 0)
            return await reader.replay(topic, 0, 0, end, store.apply)
        finally:
            await reader.close()

    assert asyncio.run(replay()) == 3
    assert [key for key, _ in store.outbox()] == ["o:1"]
    assert store._get("v:a") is not None and store._get("v:b") is None
    store.close()
