"""The broker stops for 30 s while the worker has a backlog, then comes back on the same data."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.faults.deployment import make_deployment
from tests.kafka_broker import start_local_broker, stop_local_broker
from tests.stream.web_helpers import call, free_port
from tests.stream_helpers import OutputReader, WorkerProcess, audit, ids_of, real_feed, send_lines

pytestmark = pytest.mark.kafka

DOWN_S = 30.0


def test_worker_recovers_from_a_broker_restart_without_help(tmp_path: Path) -> None:
    broker = start_local_broker(tmp_path / "broker")
    port = int(broker.bootstrap.rsplit(":", 1)[1])
    try:
        dep = make_deployment(broker.bootstrap, tmp_path, partitions=2)
        dep.env["NEARDUP_WEB_PORT"] = str(web := free_port())
        health = f"http://127.0.0.1:{web}/healthz"
        before, after = real_feed(5000, "b", seed=3), real_feed(1000, "a", seed=4)
        worker = WorkerProcess.start(dep.env, "survivor", tmp_path)
        reader = OutputReader(broker.bootstrap, dep.names)
        try:
            worker.wait_ready()
            send_lines(broker.bootstrap, dep.names.events, before)  # a backlog the worker is working through
            while len(reader.verdicted) < 100:
                reader.poll(200)
            reader.close()
            stopped = time.monotonic()
            stop_local_broker(broker)
            print(f"broker stopped with {len(reader.verdicted)}/{len(before)} verdicts read")
            said: set[tuple[int, str]] = set()
            while time.monotonic() - stopped < DOWN_S:
                status, body = call(health)
                said.add((status, body["status"].split(":")[0]))
                time.sleep(0.5)
            assert worker.alive(), f"the worker died with the broker:\n{worker.tail()}"
            assert (503, "broker unreachable") in said, said  # what an orchestrator's probe sees
            assert "the broker stopped answering (broker unreachable" in worker.text()  # in neardup's words, once
            assert worker.text().count("the broker stopped answering") == 1
            broker = start_local_broker(tmp_path / "broker", port=port)
            restarted = time.monotonic()
            restarted_ms = int(time.time() * 1000)
            send_lines(broker.bootstrap, dep.names.events, after)
            reader = OutputReader(broker.bootstrap, dep.names)
            expected = ids_of(before) | ids_of(after)

            def alive() -> None:
                if not worker.alive():
                    pytest.fail(f"worker exited:\n{worker.tail()}")

            reader.wait_for(expected, timeout=180, alive=alive)
            recovery = time.monotonic() - restarted  # broker answering again -> last verdict read
            reader.settle()
            assert call(health) == (200, {"healthy": True, "status": "recovered and consuming"})
            assert "the broker answers again, after " in worker.text()
            result = audit(reader.records, dep.names, expected)
            interrupted = sum(1 for i in ids_of(before) if reader.stamped[i] >= restarted_ms)
        finally:
            reader.close()
            worker.stop()
        # The outage hit the backlog: part of it was decided only once the broker was back.
        assert interrupted > 0
        print(
            f"broker down {DOWN_S:.0f} s with {interrupted} of {len(before)} queued events still to decide: "
            f"every verdict in {recovery:.1f} s after the broker was back "
            f"(1000 more events sent meanwhile); {result.repeats} repeats, "
            f"{result.corrections} corrections"
        )
    finally:
        stop_local_broker(broker)
