"""Workers join and leave mid-stream: once gracefully (SIGTERM), once by SIGKILL."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.faults.deployment import make_deployment, membership
from tests.stream_helpers import audit, input_orders

pytestmark = pytest.mark.kafka

EVENTS = 6000
RATE = 150.0  # events/s: 40 s of stream, across every membership change


def test_join_then_graceful_leave_then_kill_loses_no_verdict(kafka_bootstrap: str, tmp_path: Path) -> None:
    dep = make_deployment(kafka_bootstrap, tmp_path, partitions=3)
    with membership(dep, EVENTS, "r", seed=9, rate=RATE) as live:

        def step(what: str) -> None:
            print(f"{what}: {len(live.reader.verdicted)}/{EVENTS} ids decided")

        a = live.join("a")
        live.sender.start()
        live.run_for(4)
        b = live.join("b")
        step("b joined")
        live.run_for(5)
        a.stop()  # graceful: leaves the group, b takes every partition over
        step("a left (SIGTERM)")
        live.run_for(4)
        c = live.join("c")
        step("c joined")
        live.run_for(3)
        assert len(live.reader.verdicted) < EVENTS, "the stream ended before the last fault"
        b.kill()  # no goodbye: c gets b's partitions after the session timeout
        step("b killed (SIGKILL)")
        live.reader.wait_for(live.expected, timeout=180, alive=lambda: None if c.alive() else pytest.fail(c.tail()))
        live.reader.settle(3.0)
        live.sender.join()
        result = audit(live.reader.records, dep.names, live.expected)
    orders = input_orders(kafka_bootstrap, dep.names.events)
    for event_id, original in result.final.items():
        if original is not None:
            assert orders[original] < orders[event_id], (event_id, original)
    assert result.duplicates > EVENTS * 0.1
    print(
        f"rebalance (join, SIGTERM leave, join, SIGKILL leave) over {EVENTS} events: {result.repeats} repeats, "
        f"{result.corrections} corrections, {result.duplicates} duplicates"
    )
