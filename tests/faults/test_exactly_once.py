"""Exactly-once outputs: SIGKILL five times during a replay, then count as a read_committed consumer.

With ``NEARDUP_PROCESSING_GUARANTEE=exactly_once`` a consumer that reads the output topics
with ``isolation.level=read_committed`` must see exactly one verdict record per id, none
missing, however often the worker dies mid-transaction. The same run read
``read_uncommitted`` shows what the aborted transactions held (printed, not asserted).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.faults.deployment import kill_repeatedly, make_deployment
from tests.stream_helpers import OutputReader, WorkerProcess, audit, ids_of, real_feed, send_lines

pytestmark = pytest.mark.kafka

EVENTS = 20_000
KILLS = 5


def test_kill_minus_nine_five_times_leaves_one_committed_verdict_record_per_id(
    kafka_bootstrap: str, tmp_path: Path
) -> None:
    dep = make_deployment(kafka_bootstrap, tmp_path, partitions=2)
    dep.env["NEARDUP_PROCESSING_GUARANTEE"] = "exactly_once"
    lines = real_feed(EVENTS, "x", seed=23)
    expected = ids_of(lines)
    send_lines(kafka_bootstrap, dep.names.events, lines)  # the whole replay waits in Kafka
    committed = OutputReader(kafka_bootstrap, dep.names, isolation_level="read_committed")
    everything = OutputReader(kafka_bootstrap, dep.names)
    began = time.monotonic()
    worker: WorkerProcess | None = None
    try:
        kill_repeatedly(dep, tmp_path, committed, KILLS, EVENTS, seed=5, least_s=0.3, most_s=2.0)
        last = worker = WorkerProcess.start(dep.env, "victim", tmp_path)
        last.wait_ready()
        committed.wait_for(expected, timeout=240, alive=lambda: None if last.alive() else pytest.fail(last.tail()))
        committed.settle()
        everything.settle()
        result = audit(committed.records, dep.names, expected)
        seen_by_all = audit(everything.records, dep.names, expected)
    finally:
        if worker is not None:
            worker.stop()
        committed.close()
        everything.close()
    print(
        f"exactly once, kill -9 x{KILLS} over {EVENTS} events in {time.monotonic() - began:.0f} s: "
        f"read_committed {result.verdict_records} verdict records for {result.ids} ids; "
        f"read_uncommitted {seen_by_all.verdict_records} ({seen_by_all.repeats} from aborted transactions)"
    )
    assert result.repeats == 0, f"{result.repeats} ids have more than one committed verdict record"
    assert result.ids == len(expected)
    assert result.duplicates > EVENTS * 0.05  # the variants were found
