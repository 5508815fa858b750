"""``neardup produce``: a paced replay in the file's order (on the real broker), its input's lines."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from kafka import KafkaConsumer, TopicPartition

from tests.kafka_broker import free_port_pair
from topology.stages import Topics
from topology.topics import create_topics, topic_map
from worker.cli import produce as produce_module
from worker.cli.produce import MissingTopic, event_key, produce, require_topic
from worker.settings import Settings


def test_a_paced_replay_reaches_the_broker_in_the_files_order(kafka_bootstrap: str) -> None:
    """The stream orders events by broker append time, then partition: lines sent in one batch
    to several partitions share a millisecond, and a later line could come first."""
    prefix = f"p{uuid.uuid4().hex[:8]}"
    events = topic_map(prefix, partitions=4)["events"]
    assert events.name == Topics(prefix).events
    create_topics(kafka_bootstrap, [events])
    ids = [f"e{i:03d}" for i in range(60)]
    lines = [json.dumps({"id": i, "text": f"post {i}"}).encode() for i in ids]
    settings = Settings(bootstrap=kafka_bootstrap, topic_prefix=prefix)

    assert produce(lines, settings, rate=2000).sent == len(ids)

    records = read_back(kafka_bootstrap, events.name, 4, len(ids))
    in_order = sorted(records, key=lambda r: (r.timestamp, r.partition, r.offset))
    assert [json.loads(r.value)["id"] for r in in_order] == ids
    assert len({r.timestamp for r in records}) == len(ids)  # no two lines in one millisecond
    assert len({r.partition for r in records}) > 1  # keyed by id: the lines do cross partitions


def read_back(bootstrap: str, topic: str, partitions: int, count: int) -> list[Any]:
    """The first ``count`` records of ``topic``, read from the broker."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, consumer_timeout_ms=10_000)
    try:
        assigned = [TopicPartition(topic, p) for p in range(partitions)]
        consumer.assign(assigned)
        consumer.seek_to_beginning(*assigned)
        records = []
        for record in consumer:
            records.append(record)
            if len(records) == count:
                break
        return records
    finally:
        consumer.close()


def fresh_events_topic(bootstrap: str) -> tuple[Settings, str]:
    """Settings of a new prefix whose events topic (one partition) exists on the broker."""
    prefix = f"p{uuid.uuid4().hex[:8]}"
    create_topics(bootstrap, [topic_map(prefix, partitions=1)["events"]])
    return Settings(bootstrap=bootstrap, topic_prefix=prefix), Topics(prefix).events


def test_a_leading_byte_order_mark_is_not_sent(kafka_bootstrap: str) -> None:
    settings, topic = fresh_events_topic(kafka_bootstrap)
    lines = [b'\xef\xbb\xbf{"id": "a", "text": "one"}\n', b'{"id": "b", "text": "two"}\n']
    assert produce(lines, settings).sent == 2
    assert [(r.key, r.value) for r in read_back(kafka_bootstrap, topic, 1, 2)] == [
        (b"a", b'{"id": "a", "text": "one"}'),
        (b"b", b'{"id": "b", "text": "two"}'),
    ]


def test_a_missing_input_is_refused_before_any_broker_is_asked() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "worker.cli", "produce", "nope.jsonl", "--bootstrap", f"127.0.0.1:{free_port_pair()}"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (proc.returncode, proc.stderr) == (1, "neardup produce: nope.jsonl: no such file\n")


@pytest.mark.parametrize(
    ("topic", "hint"),
    [
        ("p.events", "create it: neardup topics create --bootstrap b:9"),
        ("q.events", "create it: NEARDUP_TOPIC_PREFIX=q neardup topics create --bootstrap b:9"),
        (
            "nosuch.topic",
            "the worker reads p.events, which `neardup topics create --bootstrap b:9` makes; "
            "create other topics with Kafka's own tools",
        ),
    ],
)
def test_a_missing_topic_is_refused_with_how_to_create_it(topic: str, hint: str) -> None:
    settings = Settings(bootstrap="b:9", topic_prefix="p")
    require_topic(topic, {topic, "other"}, settings)
    with pytest.raises(MissingTopic) as refused:
        require_topic(topic, {"other"}, settings)
    assert str(refused.value) == f"topic {topic!r} does not exist on b:9 ({hint})"


def test_producing_to_a_missing_topic_fails_at_once_in_one_line(kafka_bootstrap: str, tmp_path: Path) -> None:
    feed = tmp_path / "feed.jsonl"
    feed.write_text('{"id": "a", "text": "one"}\n', encoding="utf-8")
    topic = f"nosuch{uuid.uuid4().hex[:8]}.topic"
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "worker.cli", "produce", str(feed), "--topic", topic, "--bootstrap", kafka_bootstrap],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "NEARDUP_TOPIC_PREFIX": "neardup"},
    )
    assert proc.returncode == 1 and time.monotonic() - started < 15
    assert proc.stderr.splitlines() == [
        f"neardup produce: topic {topic!r} does not exist on {kafka_bootstrap} (the worker reads "
        f"neardup.events, which `neardup topics create --bootstrap {kafka_bootstrap}` makes; "
        "create other topics with Kafka's own tools)"
    ]


def test_the_summary_says_one_record(kafka_bootstrap: str, capsys: pytest.CaptureFixture[str]) -> None:
    settings, topic = fresh_events_topic(kafka_bootstrap)
    assert produce_module.run(io.BytesIO(b'{"id": "a", "text": "one"}\n'), settings, None, None) == 0
    assert capsys.readouterr().err.startswith(f"neardup produce: 1 record to {topic} in ")


def test_lines_that_are_no_event_are_sent_and_counted(kafka_bootstrap: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Sent byte for byte, as the dead-letter path is there to be exercised, but said: scan and
    check name such lines, and a newcomer took a silent produce for a clean one."""
    settings, topic = fresh_events_topic(kafka_bootstrap)
    lines = [b'{"id": "a", "text": "one"}', b'{"id": "b", "text": ""}', b"{oops", b'{"id": 7, "text": "x"}']
    assert produce_module.run(io.BytesIO(b"\n".join(lines) + b"\n"), settings, None, None) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith(f"neardup produce: 4 records to {topic} in ")
    assert err[1] == (
        "neardup produce: 3 lines sent that the stream dead-letters, not being events (`neardup tail` "
        "shows them): line 2: field 'text' is empty; line 3: invalid JSON: Expecting property name enclosed "
        "in double quotes at column 2; line 4: field 'id' must be a string, got a number"
    )
    assert len(read_back(kafka_bootstrap, topic, 1, 4)) == 4


@pytest.mark.parametrize("rate", [None, 100.0])
def test_a_line_the_broker_refuses_is_named_and_fails_the_run(
    kafka_bootstrap: str, capsys: pytest.CaptureFixture[str], rate: float | None
) -> None:
    """Over the broker's record size (1 MiB by default), a line never reaches the stream: no
    verdict and no dead letter will say so, so produce must."""
    settings, topic = fresh_events_topic(kafka_bootstrap)
    huge = json.dumps({"id": "huge", "text": "word " * 400_000}).encode()
    source = io.BytesIO(b'{"id": "a", "text": "one"}\n' + huge + b'\n{"id": "b", "text": "two"}\n')
    assert produce_module.run(source, settings, rate, None) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("neardup produce: line 2: the broker refused it, not sent: ")
    assert err[1].startswith(f"neardup produce: 2 records to {topic} in ") and err[1].endswith(
        "; 1 line refused (above)"
    )
    assert not any("dead-letters" in line for line in err), "a line not sent is not one the stream refuses"
    assert [r.key for r in read_back(kafka_bootstrap, topic, 1, 2)] == [b"a", b"b"]


def test_a_line_too_deep_to_read_is_sent_unkeyed_not_a_traceback() -> None:
    """Every line goes out byte for byte, invalid ones too: the worker dead-letters this one."""
    deep = b'{"id": "d", "text": "x", "n": ' + b"[" * 5000 + b"]" * 5000 + b"}"
    assert event_key(deep) is None
    assert event_key(b'{"id": "d", "text": "x"}') == b"d"
