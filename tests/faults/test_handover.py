"""Workers join and leave gracefully while held verdicts fall due: none is sent twice."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from tests.faults.deployment import make_deployment
from tests.stream_helpers import OutputReader, WorkerProcess, audit, ids_of, real_feed, send_lines

pytestmark = pytest.mark.kafka

EVENTS = 4800
RATE = 120.0  # events/s: 40 s of stream, over two joins and a leave
HOLD_MS = 300  # verdicts held long enough that some fall due during every hand-over


def test_graceful_rebalances_send_no_verdict_twice(kafka_bootstrap: str, tmp_path: Path) -> None:
    """Revoked, a worker logs the deletes of the outputs it sent before another restores those
    partitions; what it sends after that is sent again by the next owner. The batch that logged
    them, and the hold's timer meanwhile, still sent held verdicts that fell due (an operator's
    try: the first join of a second worker repeated one of 192)."""
    dep = make_deployment(kafka_bootstrap, tmp_path, partitions=3, lateness_ms=HOLD_MS)
    lines = real_feed(EVENTS, "h", seed=5, variant_share=0.2)
    expected = ids_of(lines)
    reader = OutputReader(kafka_bootstrap, dep.names)
    sender = threading.Thread(target=send_lines, args=(kafka_bootstrap, dep.names.events, lines, RATE))
    workers: list[WorkerProcess] = []

    def run_for(seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            reader.poll(200)

    try:
        a = WorkerProcess.start(dep.env, "a", tmp_path)
        workers.append(a)
        a.wait_ready()
        sender.start()
        run_for(3)
        b = WorkerProcess.start(dep.env, "b", tmp_path)
        workers.append(b)
        b.wait_ready()
        run_for(4)
        c = WorkerProcess.start(dep.env, "c", tmp_path)
        workers.append(c)
        c.wait_ready()
        run_for(4)
        a.stop()  # graceful: its partitions go to b and c
        assert len(reader.verdicted) < EVENTS, "the stream ended before the last rebalance"
        reader.wait_for(expected, timeout=120)
        reader.settle(3.0)
        sender.join()
        result = audit(reader.records, dep.names, expected)
    finally:
        for w in workers:
            w.stop()
        reader.close()
    assert result.repeats == 0, f"{result.repeats} verdicts sent twice over two joins and a leave"
