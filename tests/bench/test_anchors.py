"""bench/stream.py's passthrough anchors forward every event, each through its own client.

A passthrough that dropped records or never joined its group would make every ratio the
bench prints against it meaningless; this runs each one on the real broker.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from kafka import KafkaConsumer, TopicPartition

from bench import anchors
from tests.stream_helpers import producer
from topology.stages import Topics
from topology.topics import create_topics, topics

pytestmark = pytest.mark.kafka

REPO = Path(__file__).resolve().parents[2]
EVENTS = 300


def forwarded(bootstrap: str, topic: str, want: int, timeout_s: float) -> set[bytes]:
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    parts = [TopicPartition(topic, p) for p in consumer.partitions_for_topic(topic) or ()]
    consumer.assign(parts)
    consumer.seek_to_beginning(*parts)
    keys: set[bytes] = set()
    deadline = time.monotonic() + timeout_s
    while len(keys) < want and time.monotonic() < deadline:
        for records in consumer.poll(timeout_ms=200).values():
            keys.update(r.key for r in records if r.key is not None)
    consumer.close()
    return keys


@pytest.mark.parametrize("job", anchors.KINDS)
def test_each_passthrough_forwards_every_event(job: str, kafka_bootstrap: str, tmp_path: Path) -> None:
    prefix = f"a{uuid.uuid4().hex[:8]}"
    create_topics(kafka_bootstrap, topics(prefix, 2, 1))
    names = Topics(prefix)
    log = tmp_path / "job.log"
    cmd = [sys.executable, "bench/stream.py", "--passthrough-worker", prefix, "--job", job, "--partitions", "2"]
    env = {**os.environ, "NEARDUP_BOOTSTRAP": kafka_bootstrap, "TMPDIR": str(tmp_path)}
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while "Ready" not in log.read_text(errors="replace"):
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text(errors="replace")[-3000:]
            time.sleep(0.2)
        sent = {f"e{n:04d}".encode() for n in range(EVENTS)}
        with producer(kafka_bootstrap) as made:
            for key in sorted(sent):
                made.send(names.events, key=key, value=b'{"id": "' + key + b'", "text": "x"}')
        assert forwarded(kafka_bootstrap, names.unique, EVENTS, 60) == sent
    finally:
        proc.kill()
        proc.wait()
