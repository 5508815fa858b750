"""The worker's state directory is lost (killed mid-stream, directory deleted): Kafka has it all."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from tests.faults.deployment import make_deployment
from tests.stream_helpers import (
    OutputReader,
    WorkerProcess,
    audit,
    ids_of,
    real_feed,
    send_lines,
    verdicts_by_id,
)

pytestmark = pytest.mark.kafka

_RESTORED = re.compile(r"(\S+)\[(\d+)\]: restored (\d+) changelog records .* in ([\d.]+) s")


def test_a_worker_that_lost_its_state_dir_still_finds_earlier_events(kafka_bootstrap: str, tmp_path: Path) -> None:
    dep = make_deployment(kafka_bootstrap, tmp_path, partitions=2)
    first = real_feed(3000, "first", seed=5)
    resent = first[:20]
    again = []
    for line in first:
        event = json.loads(line)
        event["id"] = "again-" + event["id"]
        again.append(json.dumps(event, ensure_ascii=False).encode())
    reader = OutputReader(kafka_bootstrap, dep.names)
    try:
        worker = WorkerProcess.start(dep.env, "phoenix", tmp_path)
        worker.wait_ready()
        send_lines(kafka_bootstrap, dep.names.events, first)
        reader.wait_for(ids_of(first), timeout=120)
        # More events are in flight when the worker dies and its state directory goes with it.
        send_lines(kafka_bootstrap, dep.names.events, again[:500])
        while len(reader.verdicted) < len(first) + 50:
            reader.poll(100)
        worker.kill()
        state = tmp_path / "state" / "phoenix"
        assert any((state / "stores").iterdir())
        shutil.rmtree(state)

        worker = WorkerProcess.start(dep.env, "phoenix", tmp_path)
        try:
            worker.wait_ready()
            send_lines(kafka_bootstrap, dep.names.events, again[500:] + resent)
            reader.wait_for(ids_of(first) | ids_of(again), timeout=180)
            reader.settle()
            log = worker.text()
        finally:
            worker.stop()
        result = audit(reader.records, dep.names, ids_of(first) | ids_of(again))
    finally:
        reader.close()

    # Every later copy of an earlier text is still found, and points into the first run's ids.
    for event_id in ids_of(again):
        assert result.final[event_id] is not None, event_id
        assert not result.final[event_id].startswith("again-"), (event_id, result.final[event_id])
    by_id = verdicts_by_id(reader.records, dep.names)
    for event_id in ids_of(resent):  # a re-sent id gets its first verdict again, unchanged
        assert len(by_id[event_id]) >= 2 and all(v == by_id[event_id][0] for v in by_id[event_id])
    restores = [(m[1], int(m[2]), int(m[3]), float(m[4])) for m in _RESTORED.finditer(log)]
    assert {topic.rsplit(".", 1)[1] for topic, *_ in restores} == {"index-changelog", "verdict-changelog"}
    print(
        f"lost state dir: restored {sum(r[2] for r in restores)} changelog records in "
        f"{sum(r[3] for r in restores):.2f} s ({len(restores)} stores); {result.repeats} repeats, "
        f"{result.corrections} corrections"
    )
