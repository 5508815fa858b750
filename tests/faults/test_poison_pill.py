"""The poison pill: one hostile record among valid ones, sent twice, through a real worker.

The record is the one from the field report: an extra field nested 980 levels deep. Python's
parser takes it at the top of a stack, but a stage deep in its own could not decode it back,
and the re-sent copy crashed the agent that held its batch: its neighbours lost, offsets
stuck, SIGTERM hanging, the same crash again after every restart.

Run twice: with the default limits, the record is refused at parse, so nothing downstream
ever sees it (the cause). With the nesting limit lifted far beyond what the codecs decode,
it reaches the later stages and fails wherever it fails (the mechanism): either way every
copy gets a verdict or a dead letter, every neighbour its verdict, the committed offsets
reach the end, no agent restarts, and SIGTERM ends the worker.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from kafka import KafkaConsumer, TopicPartition

from tests.faults.deployment import Deployment, make_deployment
from tests.stream_helpers import OutputReader, WorkerProcess, ids_of, producer, real_feed

pytestmark = pytest.mark.kafka

POISON_ID = "poison-980"


def poison(event_id: str, levels: int) -> bytes:
    """A record nested ``levels`` deep, with a text of its own (so each is unique and stores
    the whole event, nesting included, with its verdict)."""
    text = f'"wire service story number {levels} about the harbour, the council and the weather"'.encode()
    return b'{"id": "' + event_id.encode() + b'", "text": ' + text + b', "x": ' + b"[" * levels + b"]" * levels + b"}"


# The reported record, and its kin around the depth where the parser's stack runs out.
POISONS = {POISON_ID: poison(POISON_ID, 980), **{f"poison-{n}": poison(f"poison-{n}", n) for n in range(955, 990)}}
SHUTDOWN_LIMIT_S = 20.0  # the worker's own deadline is 15 s


def committed_lag(dep: Deployment, topics: tuple[str, ...] = ()) -> int:
    """End offset minus committed offset of the worker's group, summed over ``topics`` (default: events).

    A consumer that names the group but never subscribes only reads its commits.
    """
    parts = [TopicPartition(t, p) for t in topics or (dep.names.events,) for p in range(dep.partitions)]
    consumer = KafkaConsumer(bootstrap_servers=dep.bootstrap, group_id=dep.group, enable_auto_commit=False)
    try:
        ends = consumer.end_offsets(parts)
        return sum(ends[tp] - (consumer.committed(tp) or 0) for tp in parts)
    finally:
        consumer.close()


def wait_until_committed(dep: Deployment, timeout: float = 30.0, topics: tuple[str, ...] = ()) -> None:
    deadline = time.monotonic() + timeout
    while (lag := committed_lag(dep, topics)) > 0:
        assert time.monotonic() < deadline, f"committed offsets stay {lag} behind the end"
        time.sleep(0.5)


@pytest.mark.parametrize("limit", ["default", "lifted"])
def test_a_poison_record_sent_twice_loses_no_neighbour_and_stops_nothing(
    kafka_bootstrap: str, tmp_path: Path, limit: str, request: pytest.FixtureRequest
) -> None:
    dep = make_deployment(kafka_bootstrap, tmp_path, partitions=2)
    if limit == "lifted":
        dep.env["NEARDUP_MAX_DEPTH"] = "100000"
        # Our own reader of the outputs must take back what the lifted worker published.
        limit_before = sys.getrecursionlimit()
        request.addfinalizer(lambda: sys.setrecursionlimit(limit_before))
        sys.setrecursionlimit(10_000)
    first, second = real_feed(40, f"a{limit}", seed=3), real_feed(40, f"b{limit}", seed=4)
    worker = WorkerProcess.start(dep.env, "solo", tmp_path)
    reader = OutputReader(kafka_bootstrap, dep.names)
    try:
        worker.wait_ready()
        for half in (first, second):  # the copy and its neighbours go out together: one batch
            with producer(kafka_bootstrap) as out:
                for i, line in enumerate(half):
                    if i == len(half) // 2:
                        for event_id, raw in POISONS.items():
                            out.send(dep.names.events, key=event_id.encode(), value=raw)
                    out.send(dep.names.events, key=json.loads(line)["id"].encode(), value=line)
            time.sleep(1.0)  # let the first copy be decided before the second arrives
        neighbours = ids_of(first + second)
        reader.wait_for(
            neighbours, timeout=60, alive=lambda: None if worker.alive() else pytest.fail(worker.cli.tail())
        )
        deadline = time.monotonic() + 30
        while any(len(got) < 2 for got in poison_outcomes(reader, dep).values()):
            assert time.monotonic() < deadline, f"the poisons' copies got {poison_outcomes(reader, dep)}"
            reader.poll()
        wait_until_committed(dep)
        assert "Restarting dead" not in worker.text(), worker.cli.tail()  # no agent died
        began = time.monotonic()
        worker.proc.send_signal(signal.SIGTERM)
        try:
            worker.proc.wait(SHUTDOWN_LIMIT_S)
        except subprocess.TimeoutExpired:
            pytest.fail(f"SIGTERM did not end the worker in {SHUTDOWN_LIMIT_S} s:\n{worker.cli.tail()}")
        outcomes = poison_outcomes(reader, dep)
        print(f"\n{limit}: stopped in {time.monotonic() - began:.1f} s; the poisons' copies got:")
        for event_id, got in outcomes.items():
            print(f"  {event_id}: {got}")
        if limit == "default":
            assert all(
                got == ["dead-letter (fingerprint: event is nested more than 32 levels deep)"] * 2
                for got in outcomes.values()
            )
        else:  # some depth passes the parser and fails a later stage: the reported crash, contained
            later = [
                g
                for got in outcomes.values()
                for g in got
                if g.startswith(("dead-letter (index", "dead-letter (verdict"))
            ]
            assert later, "no depth reached a later stage; the test no longer exercises what it is for"
    finally:
        worker.stop()
        reader.close()


def poison_outcomes(reader: OutputReader, dep: Deployment) -> dict[str, list[str]]:
    """What each poison's copies got so far: one entry per verdict or dead-letter record."""
    got: dict[str, list[str]] = {event_id: [] for event_id in POISONS}
    for r in reader.records:
        if r.topic in (dep.names.unique, dep.names.duplicates) and r.key in got:
            got[r.key].append(r.topic.rsplit(".", 1)[1])
        elif r.topic == dep.names.deadletter:
            event_id = r.value.get("id") or json.loads(r.value["raw_preview"][:40].split(",")[0] + "}").get("id")
            if event_id in got:
                got[event_id].append(f"dead-letter ({r.value['stage']}: {r.value['reason'][:60]})")
    return got


def test_hostile_internal_messages_are_dead_lettered_by_the_stage_that_reads_them(
    kafka_bootstrap: str, tmp_path: Path
) -> None:
    """The index and verdict stages read what other workers send them: a message they cannot
    read, or one event in it they cannot handle, is dead-lettered by that stage alone."""
    dep = make_deployment(kafka_bootstrap, tmp_path, partitions=2)
    names = dep.names
    bad_probe = {"id": "warped", "order": -1, "ts": 0, "fp": 1, "sketch": "", "slots": [[0, 1, 0]]}
    good_probe = {"id": "fine", "order": 7, "ts": 0, "fp": 2, "sketch": "", "slots": [[0, 1, 0]]}
    bad_answer = {"kind": "answer", "id": "ghost", "order": 5, "tables": "x", "earlier": []}
    hostile = [
        (names.probes, 0, b"not json at all"),
        (names.probes, 1, b'{"an": "object"}'),
        (names.probes, 0, json.dumps([bad_probe, good_probe]).encode()),
        (names.answers, 1, b"\xff\xfe"),
        (names.answers, 0, json.dumps([bad_answer]).encode()),
    ]
    feed = real_feed(60, "nb", seed=5)
    worker = WorkerProcess.start(dep.env, "solo", tmp_path)
    reader = OutputReader(kafka_bootstrap, names)
    try:
        worker.wait_ready()
        with producer(kafka_bootstrap) as out:
            for i, line in enumerate(feed):
                if i % 12 == 0 and hostile:
                    topic, partition, value = hostile.pop(0)
                    out.send(topic, value=value, partition=partition)
                out.send(names.events, key=json.loads(line)["id"].encode(), value=line)
        reader.wait_for(
            ids_of(feed), timeout=60, alive=lambda: None if worker.alive() else pytest.fail(worker.cli.tail())
        )
        deadline = time.monotonic() + 30
        while len([r for r in reader.records if r.topic == names.deadletter]) < 5:
            assert time.monotonic() < deadline, [r.value for r in reader.records if r.topic == names.deadletter]
            reader.poll()
        dead = [r.value for r in reader.records if r.topic == names.deadletter]
        by = {(d["stage"], d.get("id"), d["topic"]): d["reason"] for d in dead}
        print("\n" + "\n".join(f"  {key}: {reason[:90]}" for key, reason in by.items()))
        assert [d["stage"] for d in dead if d["topic"] == names.probes] == ["index", "index"]
        assert all("unreadable probes message" in d["reason"] for d in dead if d["topic"] == names.probes)
        assert "ValueError" in by[("index", "warped", names.events)]
        assert "ValueError" in by[("verdict", "ghost", names.events)]
        assert "unreadable answers message" in by[("verdict", None, names.answers)]
        wait_until_committed(dep, topics=(names.events, names.probes, names.answers))
        assert "Restarting dead" not in worker.text(), worker.cli.tail()
    finally:
        worker.stop()
        reader.close()
