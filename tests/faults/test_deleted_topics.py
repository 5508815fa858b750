"""A deployment's topics deleted under a running worker: it must stop, not hold its partitions.

An operator's try deleted the topics (``neardup topics delete --force``) and made them again
while a worker ran: its consumer kept them missing, it answered 503 for minutes, and its peer
answered healthy with lag 0 while nothing was decided, until the first worker was killed.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.faults.deployment import make_deployment
from tests.stream_helpers import WorkerProcess
from topology.topics import delete_topics
from worker.stream.stats import TOPICS_LOST_S

pytestmark = pytest.mark.kafka


def test_a_worker_whose_topics_are_deleted_stops_saying_so(kafka_bootstrap: str, tmp_path: Path) -> None:
    dep = make_deployment(kafka_bootstrap, tmp_path, partitions=2)
    worker = WorkerProcess.start(dep.env, "w", tmp_path)
    try:
        worker.wait_ready()
        deleted = time.monotonic()
        delete_topics(kafka_bootstrap, dep.prefix)
        while worker.alive():
            assert time.monotonic() - deleted < TOPICS_LOST_S + 60, worker.tail()
            time.sleep(0.5)
    finally:
        worker.stop()
    assert time.monotonic() - deleted >= TOPICS_LOST_S - 2  # a moment's absence is not a deletion
    assert worker.proc.returncode != 0, worker.tail()
    assert (
        f"{dep.names.events}" in worker.text() and f"missing on the cluster for {TOPICS_LOST_S:.0f} s" in worker.text()
    )
    # The client's complaint passes once every 10 s (an operator's log had 7,000 of it), and the
    # broker, which answers, is not said to be away.
    assert worker.text().count("not found in cluster metadata") <= TOPICS_LOST_S / 10 + 6, worker.tail()
    assert "the broker stopped answering" not in worker.text()
    last = worker.text().strip().splitlines()[-1]
    assert last.startswith("neardup worker w: stopped after a crash: ") and "missing on the cluster" in last, last
