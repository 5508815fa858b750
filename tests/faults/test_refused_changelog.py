"""The broker refuses the verdict changelog's records: nothing may be published meanwhile.

A verdict published before its store change is in Kafka could be decided differently after a
crash (the kill test caught one: ``duplicate`` first, ``unique`` on the replay). So the worker
publishes outputs only once their changelog record is acknowledged. Here every verdict
changelog record is too large for the topic, so the worker must stop without publishing
anything, and once the topic is fixed a restarted worker gives every event its one verdict.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from kafka.admin import ConfigResource, ConfigResourceType, KafkaAdminClient

from tests.faults.deployment import make_deployment
from tests.stream_helpers import OutputReader, WorkerProcess, audit, ids_of, real_feed, send_lines, verdicts_by_id

pytestmark = pytest.mark.kafka

EVENTS = 300
REFUSING_BYTES = 64  # a record batch's header alone is 61 bytes: every changelog record is refused
BROKER_DEFAULT_BYTES = 1048588


def set_max_message_bytes(bootstrap: str, topic: str, limit: int) -> None:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        resource = ConfigResource(ConfigResourceType.TOPIC, topic, configs={"max.message.bytes": str(limit)})
        admin.alter_configs([resource])
    finally:
        admin.close()


def test_no_verdict_is_published_before_its_changelog_record_is_in_kafka(kafka_bootstrap: str, tmp_path: Path) -> None:
    # No lateness hold: the first batch's verdicts are due at once, as their changelog record goes out.
    dep = make_deployment(kafka_bootstrap, tmp_path, partitions=2, lateness_ms=0)
    lines = real_feed(EVENTS, "r", variant_share=0.3)
    expected = ids_of(lines)
    reader = OutputReader(kafka_bootstrap, dep.names)
    try:
        set_max_message_bytes(kafka_bootstrap, dep.names.verdict_changelog, REFUSING_BYTES)
        worker = WorkerProcess.start(dep.env, "refused", tmp_path)
        try:
            worker.wait_ready()
            send_lines(kafka_bootstrap, dep.names.events, lines)
            deadline = time.monotonic() + 60
            while worker.alive():
                assert time.monotonic() < deadline, f"the worker kept running without a changelog:\n{worker.cli.tail()}"
                reader.poll(200)
            log = worker.text()
        finally:
            worker.kill()
        assert "verdict-changelog: a changelog record was not acknowledged" in log, log[-3000:]
        reader.settle()
        assert verdicts_by_id(reader.records, dep.names) == {}

        set_max_message_bytes(kafka_bootstrap, dep.names.verdict_changelog, BROKER_DEFAULT_BYTES)
        worker = WorkerProcess.start(dep.env, "refused", tmp_path)
        try:
            worker.wait_ready()
            reader.wait_for(expected, timeout=120)
            reader.settle()
        finally:
            worker.stop()
        result = audit(reader.records, dep.names, expected)
    finally:
        reader.close()
    assert result.repeats == 0
    assert result.duplicates > 0
    print(f"refused changelog: 0 verdicts while refused; then {result.ids} ids, {result.duplicates} duplicates")
