"""The local broker is a real Kafka: records produced through it come back, in order, with keys."""

from __future__ import annotations

import uuid

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.errors import KafkaTimeoutError

pytestmark = pytest.mark.kafka


def test_records_round_trip_through_the_broker(kafka_bootstrap: str) -> None:
    topic = f"test.roundtrip.{uuid.uuid4().hex[:8]}"
    admin = KafkaAdminClient(bootstrap_servers=kafka_bootstrap)
    try:
        admin.create_topics({topic: {"num_partitions": 1, "replication_factor": 1}}, wait_for_metadata=True)
    finally:
        admin.close()

    sent = [(f"k{i}".encode(), f"文本 {i} text".encode()) for i in range(5)]
    producer = KafkaProducer(bootstrap_servers=kafka_bootstrap, acks="all")
    try:
        for key, value in sent:
            producer.send(topic, key=key, value=value)
        producer.flush(timeout=30)
    finally:
        producer.close()

    consumer = KafkaConsumer(bootstrap_servers=kafka_bootstrap, consumer_timeout_ms=10_000)
    try:
        partition = TopicPartition(topic, 0)
        consumer.assign([partition])
        consumer.seek_to_beginning(partition)
        received = []
        for record in consumer:
            received.append((record.key, record.value))
            if len(received) == len(sent):
                break
    finally:
        consumer.close()

    assert received == sent


def test_topics_are_not_created_by_accident(kafka_bootstrap: str) -> None:
    """auto.create.topics.enable=false: a typo'd topic name must not silently appear."""
    topic = f"test.never-created.{uuid.uuid4().hex[:8]}"
    producer = KafkaProducer(bootstrap_servers=kafka_bootstrap, max_block_ms=2_000)
    try:
        # A producer's metadata request asks the broker to auto-create; the broker must refuse.
        with pytest.raises(KafkaTimeoutError):
            producer.send(topic, value=b"lost").get(timeout=5)
    finally:
        producer.close()
    admin = KafkaAdminClient(bootstrap_servers=kafka_bootstrap)
    try:
        assert topic not in admin.list_topics()
    finally:
        admin.close()
