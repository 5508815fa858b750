"""The streaming worker on a real broker: `python -m worker.cli worker` as a subprocess.

Two deployments (topic prefixes) per module: one input partition and one worker, whose
verdicts must equal `neardup scan` event for event; and three partitions shared by two
workers, whose verdicts for an in-order stream must be the same, and whose final pointers on
a stream spread over all partitions must always go back in the total order.
"""

from __future__ import annotations

import io
import shutil
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition

from topology.stages import Topics, total_order
from topology.topics import create_topics, topics
from worker.scan import default_sample, scan
from worker.settings import Settings
from worker.tail import Record, follow

pytestmark = pytest.mark.kafka

REPO = Path(__file__).resolve().parents[2]
SAMPLE = [line for line in Path(default_sample()).read_bytes().splitlines() if line.strip()]
MAX_TEXT = 100_000
VERDICT_KEYS = ("verdict", "duplicate_of", "distance", "similarity", "fingerprint", "ts")

# (record value, what the dead-letter reason must say)
INVALID: list[tuple[bytes, str]] = [
    (b'{"id": "bad-json", "text": "unterminated', "invalid JSON"),
    (b'{"id": "bad-utf8", "text": "caf\xe9 au lait"}', "invalid UTF-8"),
    (b'{"text": "an event without an id"}', "missing field 'id'"),
    (b'{"id": "no-text"}', "missing field 'text'"),
    (b'{"id": 7, "text": "numeric id"}', "field 'id' must be a string"),
    (b'{"id": "list-text", "text": ["a", "b"]}', "field 'text' must be a string"),
    (json.dumps({"id": "huge", "text": "x" * (MAX_TEXT + 10)}).encode(), "over the limit"),
    (b'{"id": "blank", "text": "  \\n\\t "}', "field 'text' is empty"),
    (bytes((i * 37 + 11) % 256 for i in range(300)).replace(b"\n", b"\xff"), "invalid UTF-8"),
    (b"[1, 2, 3]", "must be a JSON object"),
]


def _env(bootstrap: str, prefix: str, partitions: int, state: Path) -> dict[str, str]:
    return {
        **os.environ,
        "NEARDUP_BOOTSTRAP": bootstrap,
        "NEARDUP_TOPIC_PREFIX": prefix,
        "NEARDUP_PARTITIONS": str(partitions),
        "NEARDUP_STATE_DIR": str(state),
        "NEARDUP_ALLOWED_LATENESS_MS": "0",
        "NEARDUP_MAX_TEXT_BYTES": str(MAX_TEXT),
    }


@dataclass
class WorkerProcess:
    """One `neardup worker` subprocess and its log file."""

    proc: subprocess.Popen[bytes]
    log: Path

    @classmethod
    def start(cls, env: dict[str, str], name: str, logdir: Path) -> WorkerProcess:
        log = logdir / f"{name}.log"
        with log.open("wb") as out:
            proc = subprocess.Popen(
                [sys.executable, "-m", "worker.cli", "worker", "--name", name, "--loglevel", "info"],
                env=env,
                cwd=REPO,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        return cls(proc, log)

    def wait_ready(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, f"worker exited early:\n{self.log.read_text()[-3000:]}"
            if "Worker]: Ready" in self.log.read_text(errors="replace"):
                return
            time.sleep(0.2)
        raise AssertionError(f"worker not ready in {timeout}s:\n{self.log.read_text()[-3000:]}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@contextmanager
def _producer(bootstrap: str) -> Iterator[KafkaProducer]:
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=5)
    try:
        yield producer
        producer.flush()
    finally:
        producer.close()


def _collect(settings: Settings, done: Callable[[list[Record]], bool], timeout: float = 90.0) -> list[Record]:
    """Every output record from the beginning, until ``done`` holds (fails after ``timeout``)."""
    got: list[Record] = []
    deadline = time.monotonic() + timeout
    for record in follow(settings, from_beginning=True, timeout_s=timeout):
        got.append(record)
        if done(got):
            return got
        assert time.monotonic() < deadline, "timed out collecting outputs"
    raise AssertionError(f"outputs stopped after {len(got)} records")


def _verdicts(records: list[Record], names: Topics) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        if r.topic in (names.unique, names.duplicates):
            assert r.key == r.value["id"]
            out.setdefault(r.value["id"], []).append(r.value)
    return out


def _scan_reference(lines: list[bytes], settings: Settings, tmp: Path) -> dict[str, dict[str, Any]]:
    out = io.StringIO()
    scan(io.BytesIO(b"\n".join(lines) + b"\n"), out, tmp / "rejects.jsonl", settings, tmp / "scan-state")
    reference: dict[str, dict[str, Any]] = {}
    for line in out.getvalue().splitlines():
        verdict = json.loads(line)
        reference.setdefault(verdict["id"], verdict)
    return reference


def _orders(bootstrap: str, topic: str) -> dict[str, int]:
    """Total order of every keyed input record, from the broker's LogAppendTime stamps."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    try:
        parts = [TopicPartition(topic, p) for p in consumer.partitions_for_topic(topic)]
        consumer.assign(parts)
        consumer.seek_to_beginning(*parts)
        ends = consumer.end_offsets(parts)
        orders: dict[str, int] = {}
        while any(consumer.position(tp) < ends[tp] for tp in parts):
            for tp, msgs in consumer.poll(timeout_ms=500).items():
                for m in msgs:
                    if m.key is not None:
                        orders.setdefault(m.key.decode(), total_order(m.timestamp, m.partition, m.offset))
        return orders
    finally:
        consumer.close()


# ------------------------------------------------------------------ one partition, one worker
@dataclass
class SingleRun:
    settings: Settings
    names: Topics
    records: list[Record]
    reference: dict[str, dict[str, Any]]
    worker: WorkerProcess
    bootstrap: str


@pytest.fixture(scope="module")
def single(kafka_bootstrap: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[SingleRun]:
    tmp = tmp_path_factory.mktemp("stream-single")
    prefix = f"st{uuid.uuid4().hex[:8]}"
    env = _env(kafka_bootstrap, prefix, 1, tmp / "state")
    settings = Settings.from_env(env)
    names = Topics(prefix)
    create_topics(kafka_bootstrap, topics(prefix, 1, 1))
    # Valid sample events with every kind of bad record mixed in, through `neardup produce`.
    lines = list(SAMPLE)
    for i, (raw, _) in enumerate(INVALID):
        lines.insert(7 + 17 * i, raw)
    feed = tmp / "feed.jsonl"
    feed.write_bytes(b"\n".join(lines) + b"\n")
    reference = _scan_reference(lines, settings, tmp)
    worker = WorkerProcess.start(env, "solo", tmp)
    try:
        worker.wait_ready()
        subprocess.run(
            [sys.executable, "-m", "worker.cli", "produce", str(feed)], env=env, cwd=REPO, check=True, timeout=60
        )
        with _producer(kafka_bootstrap) as producer:
            producer.send(names.events, key=b"null-value", value=None)
        expected = len(SAMPLE) + len(INVALID) + 1
        records = _collect(settings, lambda got: len(got) >= expected)
        yield SingleRun(settings, names, records, reference, worker, kafka_bootstrap)
    finally:
        worker.stop()


def test_every_valid_event_gets_exactly_one_verdict(single: SingleRun) -> None:
    verdicts = _verdicts(single.records, single.names)
    assert set(verdicts) == {json.loads(line)["id"] for line in SAMPLE}
    assert all(len(v) == 1 for v in verdicts.values())
    unique = {r.key for r in single.records if r.topic == single.names.unique}
    dups = {r.key for r in single.records if r.topic == single.names.duplicates}
    assert not unique & dups
    assert len(dups) > 10  # the sample feed really has near-duplicates


def test_unique_verdict_carries_the_original_event(single: SingleRun) -> None:
    originals = {json.loads(line)["id"]: json.loads(line) for line in SAMPLE}
    for r in single.records:
        if r.topic == single.names.unique:
            event = originals[r.key]
            assert r.value["text"] == event["text"]
            assert r.value["verdict"] == "unique"
            assert len(r.value["fingerprint"]) == 16


def test_invalid_records_are_dead_lettered_with_their_reason(single: SingleRun) -> None:
    import base64

    dead = [r.value for r in single.records if r.topic == single.names.deadletter]
    assert len(dead) == len(INVALID) + 1
    by_raw = {base64.b64decode(d["raw_b64"]): d for d in dead}
    for raw, reason in INVALID:
        assert reason in by_raw[raw]["reason"], (raw[:40], by_raw[raw]["reason"])
        assert by_raw[raw]["topic"] == single.names.events
    assert "no value" in by_raw[b""]["reason"]
    assert single.worker.proc.poll() is None  # bad input never stops the worker


def test_single_partition_verdicts_equal_neardup_scan(single: SingleRun) -> None:
    verdicts = _verdicts(single.records, single.names)
    assert set(verdicts) == set(single.reference)
    for event_id, expected in single.reference.items():
        got = verdicts[event_id][0]
        assert {k: got[k] for k in VERDICT_KEYS} == {k: expected[k] for k in VERDICT_KEYS}, event_id
    assert not [r for r in single.records if r.topic == single.names.corrections]


def test_resent_ids_get_their_first_verdict_again(single: SingleRun) -> None:
    again = SAMPLE[:15]
    with _producer(single.bootstrap) as producer:
        for line in again:
            producer.send(single.names.events, key=json.loads(line)["id"].encode(), value=line)
    before = len(_verdicts(single.records, single.names))
    total = len(SAMPLE) + len(again)
    records = _collect(
        single.settings, lambda got: sum(len(v) for v in _verdicts(got, single.names).values()) >= total
    )
    verdicts = _verdicts(records, single.names)
    assert len(verdicts) == before
    for line in again:
        first, second = verdicts[json.loads(line)["id"]]
        assert second == first


# ------------------------------------------------------------ three partitions, two workers
@dataclass
class SharedRun:
    settings: Settings
    names: Topics
    bootstrap: str
    tmp: Path
    workers: list[WorkerProcess]


@pytest.fixture(scope="module")
def shared(kafka_bootstrap: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[SharedRun]:
    tmp = tmp_path_factory.mktemp("stream-shared")
    prefix = f"sh{uuid.uuid4().hex[:8]}"
    env = _env(kafka_bootstrap, prefix, 3, tmp / "state")
    create_topics(kafka_bootstrap, topics(prefix, 3, 1))
    workers = [WorkerProcess.start(env, name, tmp) for name in ("w1", "w2")]
    try:
        for w in workers:
            w.wait_ready()
        _wait_for_members(kafka_bootstrap, f"{prefix}-worker", 2)
        yield SharedRun(Settings.from_env(env), Topics(prefix), kafka_bootstrap, tmp, workers)
    finally:
        for w in workers:
            w.stop()


def _wait_for_members(bootstrap: str, group: str, members: int, timeout: float = 60.0) -> None:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            described = admin.describe_groups([group])[group]
            if described["group_state"] == "Stable" and len(described["members"]) == members:
                return
            time.sleep(0.5)
        raise AssertionError(f"group {group} never had {members} stable members")
    finally:
        admin.close()


def test_two_workers_share_partitions_with_the_verdicts_of_one(shared: SharedRun) -> None:
    # Everything in input partition 0: the total order is the file order, as for `neardup scan`,
    # while the index and verdict stages are split over both workers.
    with _producer(shared.bootstrap) as producer:
        for line in SAMPLE:
            producer.send(shared.names.events, key=json.loads(line)["id"].encode(), value=line, partition=0)
    reference = _scan_reference(SAMPLE, shared.settings, shared.tmp)
    records = _collect(shared.settings, lambda got: len(_verdicts(got, shared.names)) >= len(SAMPLE))
    verdicts = _verdicts(records, shared.names)
    for event_id, expected in reference.items():
        copies = verdicts[event_id]
        assert all(c == copies[0] for c in copies)  # a replay after a rebalance repeats, never changes
        assert {k: copies[0][k] for k in VERDICT_KEYS} == {k: expected[k] for k in VERDICT_KEYS}, event_id
    assert all(w.proc.poll() is None for w in shared.workers)


def test_pointers_go_back_in_the_total_order_and_end_at_unique(shared: SharedRun) -> None:
    # The same texts again under new ids, spread over all partitions by key: duplicates now race.
    with _producer(shared.bootstrap) as producer:
        for line in SAMPLE:
            event = json.loads(line)
            event["id"] = "again-" + event["id"]
            producer.send(shared.names.events, key=event["id"].encode(), value=json.dumps(event).encode())
    wanted = 2 * len(SAMPLE)
    records = _collect(shared.settings, lambda got: len(_verdicts(got, shared.names)) >= wanted)
    time.sleep(2.0)  # let late notes turn into corrections
    records = _collect(shared.settings, lambda got: len(got) >= len(records), timeout=30)
    final: dict[str, str | None] = {}
    for r in records:
        if r.topic in (shared.names.unique, shared.names.duplicates):
            final.setdefault(r.key, r.value["duplicate_of"])
    for r in records:
        if r.topic == shared.names.corrections:
            final[r.key] = r.value["duplicate_of"]
    assert len(final) == wanted
    assert any(v is not None for k, v in final.items() if k.startswith("again-"))
    orders = _orders(shared.bootstrap, shared.names.events)
    for event_id, original in final.items():
        if original is not None:
            assert orders[original] < orders[event_id], (event_id, original)
    for event_id in final:
        seen = set()
        node: str | None = event_id
        while final[node] is not None:  # type: ignore[index]
            assert node not in seen
            seen.add(node)
            node = final[node]  # type: ignore[index]
        assert final[node] is None  # type: ignore[index]


# ------------------------------------------------------------- state rebuilt from the changelogs
def test_a_worker_that_lost_its_state_dir_still_finds_earlier_events(
    kafka_bootstrap: str, tmp_path: Path
) -> None:
    prefix = f"rs{uuid.uuid4().hex[:8]}"
    env = _env(kafka_bootstrap, prefix, 2, tmp_path / "state")
    settings = Settings.from_env(env)
    names = Topics(prefix)
    create_topics(kafka_bootstrap, topics(prefix, 2, 1))
    resent = [json.loads(line)["id"] for line in SAMPLE[:5]]
    again = []
    for line in SAMPLE:
        event = json.loads(line)
        event["id"] = "again-" + event["id"]
        again.append(json.dumps(event).encode())

    def run_and_send(lines: list[bytes], done: Callable[[dict[str, list[dict[str, Any]]]], bool]) -> list[Record]:
        worker = WorkerProcess.start(env, "phoenix", tmp_path)
        try:
            worker.wait_ready()
            with _producer(kafka_bootstrap) as producer:
                for line in lines:
                    producer.send(names.events, key=json.loads(line)["id"].encode(), value=line, partition=0)
            return _collect(settings, lambda got: done(_verdicts(got, names)))
        finally:
            worker.stop()

    records = run_and_send(SAMPLE, lambda verdicts: len(verdicts) >= len(SAMPLE))
    first = {k: v[0] for k, v in _verdicts(records, names).items()}
    state = tmp_path / "state" / "phoenix"
    assert any((state / "stores").iterdir())
    shutil.rmtree(state)

    # Later copies of earlier texts, and re-sent ids, reach a worker with an empty state dir.
    records = run_and_send(
        again + SAMPLE[:5],
        lambda verdicts: len(verdicts) >= 2 * len(SAMPLE) and all(len(verdicts[i]) >= 2 for i in resent),
    )
    verdicts = _verdicts(records, names)
    for line in SAMPLE:
        copies = verdicts["again-" + json.loads(line)["id"]]
        assert all(c == copies[0] for c in copies)
        assert copies[0]["verdict"] == "duplicate"
        assert not copies[0]["duplicate_of"].startswith("again-"), copies[0]
    for event_id in resent:
        assert all(c == first[event_id] for c in verdicts[event_id])
