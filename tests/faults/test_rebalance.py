"""Workers join and leave mid-stream: once gracefully (SIGTERM), once by SIGKILL."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from tests.faults.deployment import make_deployment
from tests.stream_helpers import OutputReader, WorkerProcess, audit, ids_of, input_orders, real_feed, send_lines

pytestmark = pytest.mark.kafka

EVENTS = 6000
RATE = 150.0  # events/s: 40 s of stream, across every membership change


def test_join_then_graceful_leave_then_kill_loses_no_verdict(kafka_bootstrap: str, tmp_path: Path) -> None:
    dep = make_deployment(kafka_bootstrap, tmp_path, partitions=3)
    lines = real_feed(EVENTS, "r", seed=9, variant_share=0.2)
    expected = ids_of(lines)
    reader = OutputReader(kafka_bootstrap, dep.names)
    sender = threading.Thread(target=send_lines, args=(kafka_bootstrap, dep.names.events, lines, RATE))
    workers: list[WorkerProcess] = []

    def run_for(seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            reader.poll(200)

    def step(what: str) -> None:
        print(f"{what}: {len(reader.verdicted)}/{EVENTS} ids decided")

    try:
        a = WorkerProcess.start(dep.env, "a", tmp_path)
        workers.append(a)
        a.wait_ready()
        sender.start()
        run_for(4)
        b = WorkerProcess.start(dep.env, "b", tmp_path)
        workers.append(b)
        b.wait_ready()
        step("b joined")
        run_for(5)
        a.stop()  # graceful: leaves the group, b takes every partition over
        step("a left (SIGTERM)")
        run_for(4)
        c = WorkerProcess.start(dep.env, "c", tmp_path)
        workers.append(c)
        c.wait_ready()
        step("c joined")
        run_for(3)
        assert len(reader.verdicted) < EVENTS, "the stream ended before the last fault"
        b.kill()  # no goodbye: c gets b's partitions after the session timeout
        step("b killed (SIGKILL)")
        reader.wait_for(expected, timeout=180, alive=lambda: None if c.alive() else pytest.fail(c.tail()))
        reader.settle(3.0)
        sender.join()
        result = audit(reader.records, dep.names, expected)
    finally:
        for w in workers:
            w.stop()
        reader.close()
    orders = input_orders(kafka_bootstrap, dep.names.events)
    for event_id, original in result.final.items():
        if original is not None:
            assert orders[original] < orders[event_id], (event_id, original)
    assert result.duplicates > EVENTS * 0.1
    print(
        f"rebalance (join, SIGTERM leave, join, SIGKILL leave) over {EVENTS} events: {result.repeats} repeats, "
        f"{result.corrections} corrections, {result.duplicates} duplicates"
    )
