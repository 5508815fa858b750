"""A real worker fed thousands of hostile records, and a re-send of every one it accepted.

Each record's fate is predicted by the same parser the worker runs (``parse_event``): what it
accepts must get a verdict, once per copy, all copies identical; what it refuses must be
dead-lettered from exactly that partition and offset with the same reason. Valid events
among them get their verdicts, the committed offsets reach the end, no agent restarts.
"""

from __future__ import annotations

import re
import time
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from kafka import KafkaProducer

from tests.faults.deployment import Deployment, make_deployment
from tests.faults.hostile import hostile_records
from tests.faults.test_poison_pill import wait_until_committed
from tests.stream_helpers import MAX_TEXT, OutputReader, WorkerProcess, real_feed
from topology.validate import InvalidEvent, parse_event
from worker.cli.produce import event_key

pytestmark = pytest.mark.kafka


def send_all(dep: Deployment, records: list[bytes | None]) -> list[tuple[int, int]]:
    """Send every record (keyed by its id when it has a readable one); their (partition, offset)."""
    made = KafkaProducer(bootstrap_servers=dep.bootstrap, acks="all", linger_ms=5, max_request_size=4 << 20)
    try:
        futures = []
        for raw in records:
            key = event_key(raw) if raw is not None else b"null-value"  # as `neardup produce` keys it
            futures.append(made.send(dep.names.events, key=key, value=raw))
        made.flush()
        return [(f.get(30).partition, f.get(30).offset) for f in futures]
    finally:
        made.close()


def run(dep: Deployment, tmp: Path, count: int) -> None:
    hostile = hostile_records(count, MAX_TEXT)
    settings = dep.settings
    now = int(time.time() * 1000)
    fates: list[str | None] = []  # None: accepted; else the reason it must be dead-lettered with
    for raw in hostile:
        try:
            parse_event(raw, settings, now_ms=now)
            fates.append(None)
        except InvalidEvent as exc:
            fates.append(exc.reason)
    accepted = [raw for raw, fate in zip(hostile, fates, strict=False) if fate is None]
    valid = real_feed(200, "fz")
    records: list[bytes | None] = [*hostile, *valid, None, *accepted]  # None: a record with no value
    expect = [*fates, *([None] * len(valid)), "record has no value (null)", *([None] * len(accepted))]
    worker = WorkerProcess.start(dep.env, "fuzz", tmp)
    reader = OutputReader(dep.bootstrap, dep.names)
    try:
        worker.wait_ready()
        positions = send_all(dep, records)
        copies: Counter[str] = Counter(
            parse_event(r, settings, now_ms=now).id for r, f in zip(records, expect, strict=False) if f is None and r
        )
        dead_wanted = {pos: fate for pos, fate in zip(positions, expect, strict=False) if fate is not None}
        deadline = time.monotonic() + max(180.0, len(records) / 40)  # a 100 kB text is among every 28
        while True:
            assert worker.alive(), worker.cli.tail()
            verdicts, dead = outcomes(reader, dep)
            have = all(len(verdicts[i]) >= n for i, n in copies.items()) and dead_wanted.keys() <= dead.keys()
            if have:
                break
            assert time.monotonic() < deadline, summary(copies, verdicts, dead_wanted, dead)
            reader.poll()
        reader.settle()
        verdicts, dead = outcomes(reader, dep)
        for event_id, got in verdicts.items():
            assert event_id in copies, f"a verdict for an id never accepted: {event_id!r}"
            assert got == [got[0]] * len(got), f"{event_id!r}: copies got different verdicts"
        for position, reason in dead_wanted.items():
            assert same_reason(str(dead[position]["reason"]), reason), (position, dead[position], reason)
        unexpected = {p: d["reason"] for p, d in dead.items() if p not in dead_wanted}
        assert not unexpected, f"accepted records were dead-lettered: {list(unexpected.items())[:5]}"
        wait_until_committed(dep)
        assert "Restarting dead" not in worker.text(), worker.cli.tail()
        kinds = Counter(reason.split(":")[0].split(" is ")[0][:40] for reason in dead_wanted.values())
        print(
            f"\n{len(records)} records: {sum(copies.values())} verdicts expected and given "
            f"({len(accepted)} re-sent), {len(dead_wanted)} dead letters; top reasons {kinds.most_common(6)}"
        )
    finally:
        worker.stop()
        reader.close()


def same_reason(got: str, wanted: str) -> bool:
    """Equal but for how far in the future a time is (it depends on when it was checked)."""

    def future(reason: str) -> str:
        return re.sub(r"is [^,]+ in the future", "is N in the future", reason)

    return future(got) == future(wanted)


def outcomes(
    reader: OutputReader, dep: Deployment
) -> tuple[dict[str, list[object]], dict[tuple[int, int], dict[str, object]]]:
    verdicts: dict[str, list[object]] = defaultdict(list)
    dead: dict[tuple[int, int], dict[str, object]] = {}
    for r in reader.records:
        if r.topic in (dep.names.unique, dep.names.duplicates) and r.key is not None:
            verdicts[r.key].append(r.value)
        elif r.topic == dep.names.deadletter:
            assert r.value["topic"] == dep.names.events and r.value["stage"] == "fingerprint", r.value
            dead[(int(r.value["partition"]), int(r.value["offset"]))] = r.value
    return verdicts, dead


def summary(
    copies: Counter[str],
    verdicts: dict[str, list[object]],
    wanted: dict[tuple[int, int], str],
    dead: dict[tuple[int, int], object],
) -> str:
    short = [i for i, n in copies.items() if len(verdicts.get(i, [])) < n]
    missing = [p for p in wanted if p not in dead]
    return f"{len(short)} ids short of verdicts (e.g. {short[:3]!r}); {len(missing)} dead letters missing (e.g. {missing[:3]})"


def test_thousands_of_hostile_records_each_get_a_verdict_or_a_dead_letter(kafka_bootstrap: str, tmp_path: Path) -> None:
    run(make_deployment(kafka_bootstrap, tmp_path, partitions=2), tmp_path, 3000)


@pytest.mark.soak
def test_soak_hostile_records(kafka_bootstrap: str, tmp_path: Path) -> None:
    run(make_deployment(kafka_bootstrap, tmp_path, partitions=2), tmp_path, 30_000)
