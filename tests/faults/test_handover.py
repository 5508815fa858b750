"""Workers join and leave gracefully while held verdicts fall due: none is sent twice."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.faults.deployment import make_deployment, membership
from tests.stream_helpers import audit

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
    with membership(dep, EVENTS, "h", seed=5, rate=RATE) as live:
        a = live.join("a")
        live.sender.start()
        live.run_for(3)
        live.join("b")
        live.run_for(4)
        live.join("c")
        live.run_for(4)
        a.stop()  # graceful: its partitions go to b and c
        assert len(live.reader.verdicted) < EVENTS, "the stream ended before the last rebalance"
        live.reader.wait_for(live.expected, timeout=120)
        live.reader.settle(3.0)
        live.sender.join()
        result = audit(live.reader.records, dep.names, live.expected)
    assert result.repeats == 0, f"{result.repeats} verdicts sent twice over two joins and a leave"
