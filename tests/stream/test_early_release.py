"""A lone worker sends a held verdict once no earlier event can still come, not when its hold ends.

The argument is in ``worker/stream/frontier.py``; here it is checked on the broker, with a
hold long enough (3 s) that a verdict sent early cannot be mistaken for one sent on time.
Copies race their originals through the other input partition, so a verdict sent too early
would have to be corrected: the outputs must hold no correction and scan's verdicts.
"""

from __future__ import annotations

import json
import random
import statistics
import time
import uuid
from dataclasses import replace
from pathlib import Path

import pytest

from tests.stream.test_stream import _scan_reference
from tests.stream.web_helpers import free_port, scrape, total
from tests.stream_helpers import SAMPLE, OutputReader, WorkerProcess, input_orders, producer, worker_env
from topology.stages import Topics, order_time
from topology.topics import create_topics, topics
from worker.settings import Settings

pytestmark = pytest.mark.kafka

HOLD_MS = 3000


def _send(bootstrap: str, topic: str, placed: list[tuple[int, bytes]], rate: float) -> None:
    """Each line to its own partition, keyed by its id, at ``rate`` lines a second."""
    with producer(bootstrap) as out:
        for i, (partition, line) in enumerate(placed):
            out.send(topic, key=json.loads(line)["id"].encode(), value=line, partition=partition)
            if i % 2:
                out.flush()
                time.sleep(2 / rate)


def _latencies(reader: OutputReader, orders: dict[str, int], ids: set[str]) -> list[int]:
    """Per id, from its input's append time to its verdict record's time (ms)."""
    return [reader.stamped[i] - order_time(orders[i]) for i in ids]


@pytest.mark.parametrize("inputs", [2, 3])
def test_held_verdicts_leave_early_only_when_every_partition_is_past_them(
    kafka_bootstrap: str, tmp_path: Path, inputs: int
) -> None:
    """With ``inputs`` partitions of the events topic: 3 is a count of its own beside the internal
    topics' 2 (only those are routed over NEARDUP_PARTITIONS), where a lone worker did not count
    itself alone and every verdict waited out its hold."""
    prefix = f"er{uuid.uuid4().hex[:8]}"
    port = free_port()
    env = worker_env(kafka_bootstrap, prefix, 2, tmp_path / "state", lateness_ms=HOLD_MS, web_port=port)
    names = Topics(prefix)
    declared = topics(prefix, 2, 1)
    create_topics(kafka_bootstrap, [replace(t, partitions=inputs) if t.name == names.events else t for t in declared])
    # The sample in each partition in turn, every third story's copy sent at once to the next.
    busy: list[tuple[int, bytes]] = []
    for i, line in enumerate(SAMPLE):
        busy.append((i % inputs, line))
        if i % 3 == 0:
            event = json.loads(line)
            copy = json.dumps({**event, "id": f"{event['id']}-copy"}).encode()
            busy.append(((i + 1) % inputs, copy))
    # Then stories in partition 0 alone: the others might still bring an earlier one.
    lone = [
        (0, json.dumps({"id": f"lone-{i}", "text": f"Harbour notice {i}: berth {i * 7} closes for dredging."}).encode())
        for i in range(12)
    ]
    worker = WorkerProcess.start(env, "lone", tmp_path)
    reader = OutputReader(kafka_bootstrap, names)
    try:
        worker.wait_ready()
        busy_ids = {json.loads(line)["id"] for _, line in busy}
        _send(kafka_bootstrap, names.events, busy, rate=100)
        reader.wait_for(busy_ids, timeout=90)
        lone_ids = {json.loads(line)["id"] for _, line in lone}
        _send(kafka_bootstrap, names.events, lone, rate=20)
        reader.wait_for(lone_ids, timeout=90)
        reader.settle()
        samples = scrape(f"http://127.0.0.1:{port}")
    finally:
        worker.stop()
        reader.close()
    orders = input_orders(kafka_bootstrap, names.events)

    # Most busy verdicts went long before the hold ended; the last ones of each burst wait it out.
    busy_ms = _latencies(reader, orders, busy_ids)
    assert statistics.median(busy_ms) < HOLD_MS / 3, sorted(busy_ms)
    # With the other partitions quiet, nothing says an earlier event cannot come: the whole hold.
    assert min(_latencies(reader, orders, lone_ids)) >= HOLD_MS * 0.95
    # An operator sees both on /metrics.
    assert total(samples, "neardup_holds_ended_total", by="early") > 0
    assert total(samples, "neardup_holds_ended_total", by="due") > 0

    # Early, and still right: one verdict an id, none corrected, each as scan decides in the total order.
    assert not [r for r in reader.records if r.topic == names.corrections]
    verdicts: dict[str, list[dict[str, object]]] = {}
    for r in reader.records:
        if r.topic in (names.unique, names.duplicates):
            verdicts.setdefault(str(r.key), []).append(r.value)
    assert set(verdicts) == busy_ids | lone_ids and all(len(v) == 1 for v in verdicts.values())
    in_order = sorted(busy + lone, key=lambda placed: orders[json.loads(placed[1])["id"]])
    settings = Settings.from_env(env)
    reference = _scan_reference([line for _, line in in_order], settings, tmp_path)
    got = {i: (v[0]["verdict"], v[0].get("duplicate_of")) for i, v in verdicts.items()}
    assert got == {i: (r["verdict"], r.get("duplicate_of")) for i, r in reference.items()}
    assert sum(1 for verdict, _ in got.values() if verdict == "duplicate") >= len(SAMPLE) // 3


def _stories(count: int, words: int, seed: int) -> list[dict[str, str]]:
    """Stories of their own: words of the sample drawn at random."""
    vocabulary = sorted({w for line in SAMPLE for w in json.loads(line)["text"].split() if w.isalpha()})
    draw = random.Random(seed)
    return [{"id": f"story-{i}", "text": " ".join(draw.choices(vocabulary, k=words)) + "."} for i in range(count)]


def _drained_backlog(bootstrap: str, tmp_path: Path, placed: list[tuple[int, bytes]]) -> tuple[int, int, float]:
    """``placed`` sent as a backlog to 2 input partitions, then one worker drains it: its
    verdicts must be scan's of the input in its total order. Returns how many it called
    duplicates, how many corrections it published, and how many held batches it kept past
    their due time for a lagging partition (``/metrics``)."""
    prefix = f"bl{uuid.uuid4().hex[:8]}"
    port = free_port()
    env = worker_env(bootstrap, prefix, 2, tmp_path / "state", lateness_ms=20, web_port=port)
    names = Topics(prefix)
    create_topics(bootstrap, topics(prefix, 2, 1))
    _send(bootstrap, names.events, placed, rate=4000)
    ids = {json.loads(line)["id"] for _, line in placed}
    worker = WorkerProcess.start(env, "backlog", tmp_path)
    reader = OutputReader(bootstrap, names)
    try:
        worker.wait_ready()
        reader.wait_for(ids, timeout=90)
        reader.settle()
        lagged = total(scrape(f"http://127.0.0.1:{port}"), "neardup_holds_ended_total", by="lag")
    finally:
        worker.stop()
        reader.close()
    orders = input_orders(bootstrap, names.events)
    in_order = sorted(placed, key=lambda item: orders[json.loads(item[1])["id"]])
    reference = _scan_reference([line for _, line in in_order], Settings.from_env(env), tmp_path)
    got = {
        str(r.key): (r.value["verdict"], r.value.get("duplicate_of"))
        for r in reader.records
        if r.topic in (names.unique, names.duplicates)
    }
    assert got == {i: (r["verdict"], r.get("duplicate_of")) for i, r in reference.items()}
    duplicates = sum(1 for verdict, _ in got.values() if verdict == "duplicate")
    return duplicates, sum(1 for r in reader.records if r.topic == names.corrections), lagged


def test_a_lone_worker_reads_a_backlog_in_append_time_and_corrects_nothing(
    kafka_bootstrap: str, tmp_path: Path
) -> None:
    """A backlog, then one worker: every original in partition 0, a copy of every tenth in
    partition 1 right after it. Read one record of each partition in turn (Faust's own order),
    the m-th copy came with the m-th original, before its own (the 10m-th): published unique,
    then corrected. Read in append time, each copy comes after its original."""
    placed: list[tuple[int, bytes]] = []
    for i, event in enumerate(_stories(1200, words=24, seed=7)):
        placed.append((0, json.dumps(event).encode()))
        if i % 10 == 9:
            placed.append((1, json.dumps({"id": f"{event['id']}-copy", "text": event["text"] + " (update)"}).encode()))
    assert _drained_backlog(kafka_bootstrap, tmp_path, placed)[:2] == (120, 0)


def test_a_lone_worker_waits_for_a_partition_whose_next_chunk_is_not_fetched_yet(
    kafka_bootstrap: str, tmp_path: Path
) -> None:
    """Long originals in partition 0 (a fetch brings a MiB of a partition: a quarter of them),
    copies of every fifth in partition 1 right after each. The first fetch holds every
    copy but only the first originals; merged in append time, the later copies still came
    before their originals, which were on the broker, not fetched: published unique, then
    corrected. A worker catching up holds them while partition 0 is not read to its end."""
    placed: list[tuple[int, bytes]] = []
    for i, event in enumerate(_stories(750, words=600, seed=11)):
        placed.append((0, json.dumps(event).encode()))
        if i % 5 == 4:
            placed.append((1, json.dumps({"id": f"{event['id']}-copy", "text": event["text"] + " (update)"}).encode()))
    assert sum(len(line) for part, line in placed if part == 0) > 3 * 2**20
    duplicates, corrections, lagged = _drained_backlog(kafka_bootstrap, tmp_path, placed)
    assert (duplicates, corrections) == (150, 0)
    assert lagged > 0, "an operator sees the verdicts kept for the lagging partition"
