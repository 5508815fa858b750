"""SIGTERM while the worker cannot finish its work: it still ends within its deadline.

The broker goes away under a worker with a backlog, so its stages wait on sends and its
shutdown on commits that cannot happen. Faust alone would wait for them for minutes; the
worker ends within ``NEARDUP_SHUTDOWN_TIMEOUT_S``, saying what it abandoned, and nothing is
lost: a worker started once the broker is back gives every event its verdict.
"""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.faults.deployment import make_deployment
from tests.kafka_broker import start_local_broker, stop_local_broker
from tests.stream_helpers import OutputReader, WorkerProcess, audit, ids_of, real_feed, send_lines

pytestmark = pytest.mark.kafka

DEADLINE_S = 5
SLACK_S = 5.0  # process exit, log flushing


def test_sigterm_with_the_broker_gone_ends_the_worker_within_its_deadline(tmp_path: Path) -> None:
    broker = start_local_broker(tmp_path / "broker")
    port = int(broker.bootstrap.rsplit(":", 1)[1])
    try:
        dep = make_deployment(broker.bootstrap, tmp_path, partitions=2)
        dep.env["NEARDUP_SHUTDOWN_TIMEOUT_S"] = str(DEADLINE_S)
        lines = real_feed(4000, "s", seed=8)
        worker = WorkerProcess.start(dep.env, "stuck", tmp_path)
        worker.wait_ready()
        send_lines(broker.bootstrap, dep.names.events, lines)
        reader = OutputReader(broker.bootstrap, dep.names)
        while len(reader.verdicted) < 100:
            reader.poll(200)
        reader.close()
        stop_local_broker(broker)
        began = time.monotonic()
        worker.proc.send_signal(signal.SIGTERM)
        try:
            worker.proc.wait(DEADLINE_S + SLACK_S)
        except subprocess.TimeoutExpired:
            worker.kill()
            pytest.fail(f"SIGTERM did not end the worker within {DEADLINE_S + SLACK_S} s:\n{worker.cli.tail()}")
        took = time.monotonic() - began
        log = worker.text()
        abandoned = [line for line in log.splitlines() if "shutdown did not finish" in line]
        print(f"\nstopped in {took:.1f} s: {abandoned[0] if abandoned else 'cleanly'}")
        assert abandoned, f"the stop was not stuck, so the deadline was not tested:\n{worker.cli.tail()}"
        broker = start_local_broker(tmp_path / "broker", port=port)
        again = WorkerProcess.start(dep.env, "stuck", tmp_path)
        reader = OutputReader(broker.bootstrap, dep.names)
        try:
            again.wait_ready()
            reader.wait_for(
                ids_of(lines), timeout=120, alive=lambda: None if again.alive() else pytest.fail(again.tail())
            )
            reader.settle()
            audit(reader.records, dep.names, ids_of(lines))
        finally:
            reader.close()
            again.stop()
    finally:
        stop_local_broker(broker)
