"""What /healthz says when the deployment's topics are gone from under a running worker.

Deleted topics took every partition from the worker's consumer, which alone reads like an idle
worker of a group with more workers than partitions: /healthz said "recovered and consuming"
while the log filled with "not found in cluster metadata" (a newcomer's try).
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path

from tests.stream.web_helpers import call, free_port
from tests.stream_helpers import WorkerProcess, worker_env
from topology.topics import create_topics, delete_topics, topics


def test_healthz_fails_when_the_topics_a_worker_reads_are_deleted(kafka_bootstrap: str, tmp_path: Path) -> None:
    prefix = f"hz{uuid.uuid4().hex[:8]}"
    port = free_port()
    create_topics(kafka_bootstrap, topics(prefix, 2, 1))
    worker = WorkerProcess.start(
        worker_env(kafka_bootstrap, prefix, 2, tmp_path / "state", web_port=port), "w", tmp_path
    )
    url = f"http://127.0.0.1:{port}/healthz"
    try:
        worker.wait_ready()
        deadline = time.monotonic() + 60
        while call(url)[0] != 200:
            assert time.monotonic() < deadline, f"never healthy: {call(url)}\n{worker.tail()}"
            time.sleep(0.5)
        delete_topics(kafka_bootstrap, prefix)
        deadline = time.monotonic() + 60
        while (found := call(url))[0] == 200:
            assert time.monotonic() < deadline, "still healthy a minute after its topics were deleted"
            time.sleep(0.5)
        status, body = found
        assert status == 503 and body["healthy"] is False
        assert f"{prefix}.events" in str(body["status"]) and "missing" in str(body["status"])
    finally:
        worker.stop()
