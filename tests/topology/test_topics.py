"""The declared topology, created on the real broker, is what the broker then reports."""

from __future__ import annotations

import uuid

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition

from topology.topics import TopicSpec, create_topics, describe_topics, topic_map, topics


def _prefix() -> str:
    return f"t{uuid.uuid4().hex[:8]}"


def test_topology_declares_every_stream_once() -> None:
    names = [spec.name for spec in topics("acme")]
    assert names == [
        "acme.events",
        "acme.unique",
        "acme.duplicates",
        "acme.deadletter",
        "acme.corrections",
        "acme.probes",
        "acme.answers",
        "acme.index-changelog",
        "acme.verdict-changelog",
        "acme.settings",
    ]
    by_key = topic_map("acme", partitions=6)
    assert by_key["events"].config["message.timestamp.type"] == "LogAppendTime"
    for changelog in ("index-changelog", "verdict-changelog"):
        assert by_key[changelog].config["cleanup.policy"] == "delete"
        assert by_key[changelog].config["retention.ms"] == str(8 * 86_400_000)
    assert topic_map("acme", retention_ms=86_400_000)["index-changelog"].config["retention.ms"] == str(2 * 86_400_000)
    assert {spec.partitions for key, spec in by_key.items() if key != "settings"} == {6}
    # One record, read first by every worker: one partition, kept for the deployment's life.
    kept = by_key["settings"]
    assert (kept.partitions, kept.config["retention.ms"], kept.config["retention.bytes"]) == (1, "-1", "-1")


def test_replicated_topology_refuses_single_copy_writes() -> None:
    assert all(spec.config.get("min.insync.replicas") == "2" for spec in topics(replication=3))
    assert all("min.insync.replicas" not in spec.config for spec in topics(replication=1))


def test_compaction_flag_cannot_contradict_config() -> None:
    with pytest.raises(ValueError):
        TopicSpec("x", 1, config={"cleanup.policy": "delete"}, compacted=True)
    with pytest.raises(ValueError):
        TopicSpec("x", 0)


def test_create_topics_is_idempotent(kafka_bootstrap: str) -> None:
    specs = topics(_prefix(), partitions=3)
    first = create_topics(kafka_bootstrap, specs)
    second = create_topics(kafka_bootstrap, specs)
    assert first == [spec.name for spec in specs]
    assert second == []


def test_created_topics_match_their_declaration(kafka_bootstrap: str) -> None:
    specs = topics(_prefix(), partitions=3)
    create_topics(kafka_bootstrap, specs)
    described = describe_topics(kafka_bootstrap, specs)
    assert [d["name"] for d in described] == [spec.name for spec in specs]
    for spec, actual in zip(specs, described, strict=False):
        assert actual["exists"]
        assert actual["partitions"] == spec.partitions
        assert actual["replication"] == spec.replication
        assert actual["config"] == spec.config


def test_missing_topics_are_reported_missing(kafka_bootstrap: str) -> None:
    specs = topics(_prefix())
    assert [d["exists"] for d in describe_topics(kafka_bootstrap, specs)] == [False] * len(specs)


def test_input_topic_is_stamped_by_the_broker(kafka_bootstrap: str) -> None:
    """LogAppendTime: a producer's wrong clock must not decide which text came first."""
    events = topic_map(_prefix(), partitions=1)["events"]
    create_topics(kafka_bootstrap, [events])
    skewed_ms = 1_000_000_000_000  # 2001-09-09: a producer whose clock is decades off
    producer = KafkaProducer(bootstrap_servers=kafka_bootstrap, acks="all")
    try:
        metadata = producer.send(events.name, value=b"x", timestamp_ms=skewed_ms).get(timeout=30)
    finally:
        producer.close()

    consumer = KafkaConsumer(bootstrap_servers=kafka_bootstrap, consumer_timeout_ms=10_000)
    try:
        partition = TopicPartition(events.name, metadata.partition)
        consumer.assign([partition])
        consumer.seek(partition, metadata.offset)
        record = next(iter(consumer))
    finally:
        consumer.close()
    assert record.timestamp_type == 1  # 1 = LogAppendTime in the record batch attributes
    assert record.timestamp > skewed_ms + 10 * 365 * 24 * 3600 * 1000
