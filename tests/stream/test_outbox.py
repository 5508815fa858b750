"""The order and acknowledgement rules of the outbox and of changelog settling (pure asyncio).

No Kafka here: ``send`` hands back futures the test resolves in the order it likes, which is
what a producer's acknowledgements may do across partitions. The real-broker side is in
``tests/faults/test_refused_changelog.py`` and the kill test.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from topology.verdicts import Output
from worker.state.changelog import StoreSet
from worker.state.replay import ChangelogReader
from worker.stream.outbox import Outbox, encode


class Acks:
    """A stand-in producer: records each send and returns a future the test resolves."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, bytes, bytes]] = []
        self.futures: list[asyncio.Future[Any]] = []

    async def send(self, role: str, key: bytes, value: bytes) -> asyncio.Future[Any]:
        self.sent.append((role, key, value))
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.futures.append(future)
        return future


def verdict(event_id: str, original: str | None = None) -> Output:
    topic = "unique" if original is None else "duplicates"
    return (topic, event_id, {"id": event_id, "verdict": topic, "duplicate_of": original})


def test_entries_go_out_in_emit_order_and_count_as_acked_only_when_every_record_is() -> None:
    async def run() -> None:
        acks = Acks()
        failures: list[BaseException] = []
        outbox = Outbox(acks.send, failures.append)
        outbox.emit(0, "o:1", [verdict("a"), verdict("b", "a")])
        outbox.emit(1, "o:2", [verdict("c")])
        outbox.emit(0, "o:3", [("corrections", "b", {"id": "b", "duplicate_of": "z"})])
        await asyncio.sleep(0.01)
        assert [(role, key) for role, key, _ in acks.sent] == [
            ("unique", b"a"),
            ("duplicates", b"b"),
            ("unique", b"c"),
            ("corrections", b"b"),
        ]
        acks.futures[3].set_result(None)  # the last entry is acknowledged first
        acks.futures[2].set_result(None)
        acks.futures[0].set_result(None)  # o:1 has one of its two records acknowledged
        await asyncio.sleep(0.01)
        assert outbox.take_acked(0) == ["o:3"]
        assert outbox.take_acked(1) == ["o:2"]
        assert outbox.acked_partitions() == set()
        acks.futures[1].set_result(None)
        await outbox.settled()
        assert outbox.take_acked(0) == ["o:1"]
        assert outbox.take_acked(0) == []
        assert failures == []
        await outbox.close()

    asyncio.run(run())


def test_a_lost_record_stops_the_outbox_and_acks_nothing_of_its_entry() -> None:
    async def run() -> None:
        acks = Acks()
        failures: list[BaseException] = []
        outbox = Outbox(acks.send, failures.append)
        outbox.emit(0, "o:1", [verdict("a"), verdict("b")])
        await asyncio.sleep(0.01)
        acks.futures[0].set_result(None)
        acks.futures[1].set_exception(RuntimeError("not leader"))
        await outbox.settled()
        assert [str(f) for f in failures] == ["not leader"]
        assert outbox.take_acked(0) == []
        outbox.emit(0, "o:2", [verdict("c")])  # the worker is stopping: left in the store
        await asyncio.sleep(0.01)
        assert len(acks.sent) == 2
        await outbox.close()

    asyncio.run(run())


def test_the_same_output_always_encodes_to_the_same_bytes() -> None:
    output = ("unique", "新闻-1", {"id": "新闻-1", "text": "上海 news", "similarity": 0.1 + 0.2})
    assert encode(output) == encode(("unique", "新闻-1", dict(output[2])))
    assert encode(output)[0] == "新闻-1".encode()


def never_opened(path: Path) -> Any:
    raise AssertionError("committing must not open a store")


@pytest.mark.parametrize("first_ack_last", [True, False])
def test_changelog_batches_become_durable_in_commit_order(tmp_path: Path, first_ack_last: bool) -> None:
    """The verdict stage publishes in ``on_durable``: a later flush acknowledged first must wait."""

    async def run() -> None:
        acks = Acks()
        stores: StoreSet[Any] = StoreSet(
            tmp_path, "t.verdict-changelog", never_opened, ChangelogReader({"bootstrap_servers": "-"})
        )
        durable: list[int] = []
        failures: list[BaseException] = []

        async def send(key: bytes, value: bytes, partition: int) -> asyncio.Future[Any]:
            return await acks.send(str(partition), key, value)

        for batch in range(3):
            await stores.commit({batch % 2: [["k", batch]]}, send, lambda b=batch: durable.append(b), failures.append)
        assert len(acks.futures) == 3
        order = [2, 1, 0] if first_ack_last else [0, 1, 2]
        for n, i in enumerate(order):
            acks.futures[i].set_result(type("Meta", (), {"offset": n})())
            await asyncio.sleep(0.01)
        await stores.drain()
        assert durable == [0, 1, 2]
        assert failures == []

    asyncio.run(run())


def test_settled_waits_until_every_record_is_taken_and_acknowledged() -> None:
    async def run() -> None:
        acks = Acks()
        producer_full = asyncio.Event()

        async def slow_send(role: str, key: bytes, value: bytes) -> asyncio.Future[Any]:
            await producer_full.wait()  # a full producer batch makes send() wait
            return await acks.send(role, key, value)

        outbox = Outbox(slow_send, lambda exc: None)
        await asyncio.wait_for(outbox.settled(), 1)  # nothing queued
        outbox.emit(0, "o:1", [verdict("a"), verdict("b")])
        waiter = asyncio.ensure_future(outbox.settled())
        await asyncio.sleep(0.01)
        assert not waiter.done()
        producer_full.set()
        await asyncio.sleep(0.01)
        assert len(acks.sent) == 2 and not waiter.done()
        acks.futures[0].set_result(None)
        await asyncio.sleep(0.01)
        assert not waiter.done()
        acks.futures[1].set_result(None)
        await asyncio.wait_for(waiter, 1)
        await outbox.close()

    asyncio.run(run())


def test_grouped_batches_wait_and_an_urgent_one_takes_them_along(tmp_path: Path) -> None:
    """A batch that only gathered waits for the group window; one with outputs waiting flushes at once."""

    async def run() -> None:
        acks = Acks()
        stores: StoreSet[Any] = StoreSet(
            tmp_path, "t.verdict-changelog", never_opened, ChangelogReader({"bootstrap_servers": "-"}), 0.5
        )
        durable: list[str] = []

        async def send(key: bytes, value: bytes, partition: int) -> asyncio.Future[Any]:
            return await acks.send(str(partition), key, value)

        await stores.commit({0: [["a", 1]]}, send, lambda: durable.append("first"), print)  # flushes: none before
        await stores.commit({0: [["b", 2]]}, send, lambda: durable.append("gathered"), print)
        await stores.commit({1: [["c", 3]]}, send, lambda: durable.append("gathered 2"), print)
        await asyncio.sleep(0.05)
        assert len(acks.sent) == 1  # the two gathering batches wait for company
        await stores.commit({0: [["d", 4]]}, send, lambda: durable.append("outputs"), print, urgent=True)
        assert sorted(role for role, _, _ in acks.sent[1:]) == ["0", "1"]  # one record per partition
        assert json.loads(acks.sent[1][2]) == [["b", 2], ["d", 4]]
        for n, future in enumerate(acks.futures):
            future.set_result(type("Meta", (), {"offset": n})())
        await stores.drain()
        assert durable == ["first", "gathered", "gathered 2", "outputs"]

    asyncio.run(run())
