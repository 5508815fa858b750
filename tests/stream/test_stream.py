"""The streaming worker on a real broker: `python -m worker.cli.main worker` as a subprocess.

Two deployments (topic prefixes) per module: one input partition and one worker, whose
verdicts must equal `neardup scan` event for event; and three partitions shared by two
workers, whose verdicts for an in-order stream must be the same, and whose final pointers on
a stream spread over all partitions must always go back in the total order. Faults (kills,
a lost state directory, rebalances, a broker restart, a burst) are in ``tests/faults``.
"""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from rocksdict import Rdict

from bench import devset
from tests.stream_helpers import (
    MAX_TEXT,
    REPO,
    SAMPLE,
    WorkerProcess,
    input_orders,
    producer,
    send_lines,
    wait_for_members,
    worker_env,
)
from tests.stream_helpers import collect as _collect
from tests.stream_helpers import verdicts_by_id as _verdicts
from topology.stages import Topics
from topology.topics import create_topics, topics
from worker.cli.scan import scan
from worker.cli.tail import Record
from worker.settings import Settings
from worker.state.layout import bucket_width
from worker.state.shared import SHARED_DIR

pytestmark = pytest.mark.kafka

VERDICT_KEYS = ("verdict", "duplicate_of", "distance", "similarity", "fingerprint", "ts")

# (record value, what the dead-letter reason must say)
INVALID: list[tuple[bytes, str]] = [
    (b'{"id": "bad-json", "text": "unterminated', "invalid JSON"),
    (b'{"id": "bad-utf8", "text": "caf\xe9 au lait"}', "invalid UTF-8"),
    (b'{"text": "an event without an id"}', "missing field 'id'"),
    (b'{"id": "no-text"}', "missing field 'text'"),
    (b'{"id": 7, "text": "numeric id"}', "field 'id' must be a string"),
    (b'{"id": "list-text", "text": ["a", "b"]}', "field 'text' must be a string"),
    (json.dumps({"id": "huge", "text": "x" * (MAX_TEXT + 10)}).encode(), "over the limit"),
    (b'{"id": "blank", "text": "  \\n\\t "}', "field 'text' is empty"),
    (bytes((i * 37 + 11) % 256 for i in range(300)).replace(b"\n", b"\xff"), "invalid UTF-8"),
    (b"[1, 2, 3]", "must be a JSON object"),
]


FERRY = (
    "Ferry services between the islands resumed on Tuesday after three days of gales, the port "
    "authority said, with extra sailings added to clear the backlog of freight and passengers."
)


def _scan_reference(lines: list[bytes], settings: Settings, tmp: Path) -> dict[str, dict[str, Any]]:
    out = io.BytesIO()
    scan(io.BytesIO(b"\n".join(lines) + b"\n"), out, tmp / "rejects.jsonl", settings, tmp / "scan-state")
    reference: dict[str, dict[str, Any]] = {}
    for line in out.getvalue().splitlines():
        verdict = json.loads(line)
        reference.setdefault(verdict["id"], verdict)
    return reference


# ------------------------------------------------------------------ one partition, one worker
@dataclass
class SingleRun:
    settings: Settings
    names: Topics
    records: list[Record]
    reference: dict[str, dict[str, Any]]
    worker: WorkerProcess
    bootstrap: str


@pytest.fixture(scope="module")
def single(kafka_bootstrap: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[SingleRun]:
    tmp = tmp_path_factory.mktemp("stream-single")
    prefix = f"st{uuid.uuid4().hex[:8]}"
    env = {**worker_env(kafka_bootstrap, prefix, 1, tmp / "state"), "NEARDUP_LOG_BATCHES": "1"}
    settings = Settings.from_env(env)
    names = Topics(prefix)
    create_topics(kafka_bootstrap, topics(prefix, 1, 1))
    # Valid sample events with every kind of bad record mixed in, through `neardup produce`.
    lines = list(SAMPLE)
    for i, (raw, _) in enumerate(INVALID):
        lines.insert(7 + 17 * i, raw)
    feed = tmp / "feed.jsonl"
    feed.write_bytes(b"\n".join(lines) + b"\n")
    reference = _scan_reference(lines, settings, tmp)
    worker = WorkerProcess.start(env, "solo", tmp)
    try:
        worker.wait_ready()
        subprocess.run(
            [sys.executable, "-m", "worker.cli.main", "produce", str(feed)], env=env, cwd=REPO, check=True, timeout=60
        )
        with producer(kafka_bootstrap) as out:
            out.send(names.events, key=b"null-value-\xff", value=None)  # a key that is not UTF-8
        expected = len(SAMPLE) + len(INVALID) + 1
        records = _collect(settings, lambda got: len(got) >= expected)
        yield SingleRun(settings, names, records, reference, worker, kafka_bootstrap)
    finally:
        worker.stop()


def test_every_valid_event_gets_exactly_one_verdict(single: SingleRun) -> None:
    verdicts = _verdicts(single.records, single.names)
    assert set(verdicts) == {json.loads(line)["id"] for line in SAMPLE}
    assert all(len(v) == 1 for v in verdicts.values())
    unique = {r.key for r in single.records if r.topic == single.names.unique}
    dups = {r.key for r in single.records if r.topic == single.names.duplicates}
    assert not unique & dups
    assert len(dups) > 10  # the sample feed really has near-duplicates


def test_batch_log_accounts_for_every_input_record(single: SingleRun) -> None:
    """With NEARDUP_LOG_BATCHES the worker logs each input batch, valid and invalid records alike."""
    sent = len(SAMPLE) + len(INVALID) + 1
    pattern = re.compile(r"batch: (\d+) events, waited ([\d.]+)-([\d.]+) ms, took ([\d.]+) ms")
    deadline = time.monotonic() + 10
    while True:  # the line follows the batch's verdicts, which the fixture has already read
        lines = [m.groups() for m in pattern.finditer(single.worker.text())]
        if sum(int(n) for n, *_ in lines) >= sent or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert sum(int(n) for n, *_ in lines) == sent
    assert all(0 <= float(newest) <= float(oldest) for _, newest, oldest, _ in lines)


def test_unique_verdict_carries_the_original_event(single: SingleRun) -> None:
    originals = {json.loads(line)["id"]: json.loads(line) for line in SAMPLE}
    for r in single.records:
        if r.topic == single.names.unique:
            event = originals[r.key]
            assert r.value["text"] == event["text"]
            assert r.value["verdict"] == "unique"
            assert len(r.value["fingerprint"]) == 16


def test_invalid_records_are_dead_lettered_with_their_reason(single: SingleRun) -> None:
    import base64

    letters = [r for r in single.records if r.topic == single.names.deadletter]
    dead = [r.value for r in letters]
    assert len(dead) == len(INVALID) + 1
    by_raw = {base64.b64decode(d["raw_b64"]): d for d in dead}
    for raw, reason in INVALID:
        assert reason in by_raw[raw]["reason"], (raw[:40], by_raw[raw]["reason"])
        assert by_raw[raw]["topic"] == single.names.events
    # A refused event whose id was valid is named by it, in the record and as its key.
    named = {r.value["id"]: r.key for r in letters if "id" in r.value}
    assert named == {i: i for i in ("no-text", "list-text", "huge", "blank")}
    assert "no value" in by_raw[b""]["reason"]
    assert [r.key for r in letters if r.value.get("raw_bytes") == 0] == ["null-value-\ufffd"], (
        "keyed by its record's key"
    )
    assert single.worker.proc.poll() is None  # bad input never stops the worker


def test_single_partition_verdicts_equal_neardup_scan(single: SingleRun) -> None:
    verdicts = _verdicts(single.records, single.names)
    assert set(verdicts) == set(single.reference)
    for event_id, expected in single.reference.items():
        got = verdicts[event_id][0]
        assert {k: got[k] for k in VERDICT_KEYS} == {k: expected[k] for k in VERDICT_KEYS}, event_id
    assert not [r for r in single.records if r.topic == single.names.corrections]


def test_the_index_prepares_the_next_time_bucket_between_batches(single: SingleRun) -> None:
    # Creating a bucket's column families blocks the loop for tens of ms; the index stage
    # creates the next bucket's ahead (worker.state.index), so a new day's first event does not wait.
    newest = max(json.loads(line)["ts"] for line in SAMPLE)
    width = bucket_width(single.settings.retention_ms, 8)  # the index's default 8 buckets
    store = Path(single.settings.state_dir) / "solo" / "stores" / "index" / SHARED_DIR
    assert f"bucket@{newest // width + 1}" in Rdict.list_cf(str(store))


def test_resent_ids_get_their_first_verdict_again(single: SingleRun, tmp_path: Path) -> None:
    again = SAMPLE[:15]
    with producer(single.bootstrap) as out:
        for line in again:
            out.send(single.names.events, key=json.loads(line)["id"].encode(), value=line)
    before = len(_verdicts(single.records, single.names))
    total = len(SAMPLE) + len(again)
    records = _collect(single.settings, lambda got: sum(len(v) for v in _verdicts(got, single.names).values()) >= total)
    verdicts = _verdicts(records, single.names)
    assert len(verdicts) == before
    for line in again:
        first, second = verdicts[json.loads(line)["id"]]
        assert second == first
    # With another story (a new record of a long original's id, at its event time: the same
    # time bucket and keyspace), then a copy of the first: the copy still finds the first, as
    # in scan; it did not once the second text's entry was written over the first's.
    originals = [e for e in map(json.loads, SAMPLE) if single.reference[e["id"]]["verdict"] == "unique"]
    story = max((e for e in originals if len(e["text"]) >= 400), key=lambda e: e["ts"])
    other = {"id": story["id"], "text": " ".join([FERRY] * 4), "ts": story["ts"]}
    copy = {"id": "copy-of-" + story["id"], "text": story["text"] + " (via the wire)", "ts": story["ts"] + 1}
    sent = [json.dumps(event).encode() for event in (other, copy)]
    with producer(single.bootstrap) as out:
        for line in sent:
            out.send(single.names.events, key=json.loads(line)["id"].encode(), value=line)
    records = _collect(single.settings, lambda got: copy["id"] in _verdicts(got, single.names))
    stream = _verdicts(records, single.names)[copy["id"]][0]
    scanned = _scan_reference([*SAMPLE, *again, *sent], single.settings, tmp_path)[copy["id"]]
    assert stream["duplicate_of"] == scanned["duplicate_of"] == story["id"]


# ------------------------------------------------------------ three partitions, two workers
@dataclass
class SharedRun:
    settings: Settings
    names: Topics
    bootstrap: str
    tmp: Path
    workers: list[WorkerProcess]


@pytest.fixture(scope="module")
def shared(kafka_bootstrap: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[SharedRun]:
    tmp = tmp_path_factory.mktemp("stream-shared")
    prefix = f"sh{uuid.uuid4().hex[:8]}"
    env = worker_env(kafka_bootstrap, prefix, 3, tmp / "state")
    create_topics(kafka_bootstrap, topics(prefix, 3, 1))
    workers = [WorkerProcess.start(env, name, tmp) for name in ("w1", "w2")]
    try:
        for w in workers:
            w.wait_ready()
        wait_for_members(kafka_bootstrap, f"{prefix}-worker", 2)
        # Everything in input partition 0: the total order is the file order, as for `neardup
        # scan`. Sent here, not by the first test: `make test` may run the tests of this module
        # on two processes, each with a deployment of its own.
        with producer(kafka_bootstrap) as out:
            for line in SAMPLE:
                out.send(Topics(prefix).events, key=json.loads(line)["id"].encode(), value=line, partition=0)
        yield SharedRun(Settings.from_env(env), Topics(prefix), kafka_bootstrap, tmp, workers)
    finally:
        for w in workers:
            w.stop()


def test_two_workers_share_partitions_with_the_verdicts_of_one(shared: SharedRun) -> None:
    # The sample, in input partition 0 (the fixture), decided as scan decides it, while the index
    # and verdict stages are split over both workers.
    reference = _scan_reference(SAMPLE, shared.settings, shared.tmp)
    records = _collect(shared.settings, lambda got: len(_verdicts(got, shared.names)) >= len(SAMPLE))
    verdicts = _verdicts(records, shared.names)
    for event_id, expected in reference.items():
        copies = verdicts[event_id]
        assert all(c == copies[0] for c in copies)  # a replay after a rebalance repeats, never changes
        assert {k: copies[0][k] for k in VERDICT_KEYS} == {k: expected[k] for k in VERDICT_KEYS}, event_id
    assert all(w.proc.poll() is None for w in shared.workers)


def test_pointers_go_back_in_the_total_order_and_end_at_unique(shared: SharedRun) -> None:
    # The sample's texts (the fixture sent them) again under new ids, spread over all partitions
    # by key: duplicates now race.
    with producer(shared.bootstrap) as out:
        for line in SAMPLE:
            event = json.loads(line)
            event["id"] = "again-" + event["id"]
            out.send(shared.names.events, key=event["id"].encode(), value=json.dumps(event).encode())
    wanted = 2 * len(SAMPLE)
    records = _collect(shared.settings, lambda got: len(_verdicts(got, shared.names)) >= wanted)
    time.sleep(2.0)  # let late notes turn into corrections
    records = _collect(shared.settings, lambda got: len(got) >= len(records), timeout=30)
    final: dict[str, str | None] = {}
    for r in records:
        if r.topic in (shared.names.unique, shared.names.duplicates):
            final.setdefault(r.key, r.value["duplicate_of"])
    for r in records:
        if r.topic == shared.names.corrections:
            final[r.key] = r.value["duplicate_of"]
    assert len(final) == wanted
    assert any(v is not None for k, v in final.items() if k.startswith("again-"))
    orders = input_orders(shared.bootstrap, shared.names.events)
    for event_id, original in final.items():
        if original is not None:
            assert orders[original] < orders[event_id], (event_id, original)
    for event_id in final:
        seen = set()
        node: str | None = event_id
        while final[node] is not None:  # type: ignore[index]
            assert node not in seen
            seen.add(node)
            node = final[node]  # type: ignore[index]
        assert final[node] is None  # type: ignore[index]


# ------------------------------------------------------------------ the development set
def _devset_as_scan(
    kafka_bootstrap: str, tmp: Path, events: list[dict[str, Any]], reorder_ms: int | None = None, trailing: int = 0
) -> dict[str, dict[str, Any]]:
    """One worker, one input partition, ``events`` in order: asserts its verdicts equal scan's,
    and returns scan's. With ``reorder_ms``, the worker's, and it has been alone that long
    before the events come; the last ``trailing`` events come four a second, once the ones
    before have their verdicts (sent while a slow worker still drains the backlog, they would
    join its batches, and a test that counts what their own batches do would count less)."""
    prefix = f"dv{uuid.uuid4().hex[:8]}"
    env = worker_env(kafka_bootstrap, prefix, 1, tmp / "state")
    if reorder_ms is not None:
        env["NEARDUP_REORDER_MS"] = str(reorder_ms)
    settings, names = Settings.from_env(env), Topics(prefix)
    lines = [json.dumps(event, ensure_ascii=False).encode() for event in events]
    reference = _scan_reference(lines, settings, tmp)
    assert len(reference) == len(events)
    create_topics(kafka_bootstrap, topics(prefix, 1, 1))
    worker = WorkerProcess.start(env, "devset", tmp)
    try:
        worker.wait_ready()
        time.sleep((reorder_ms or 0) / 1000)
        send_lines(kafka_bootstrap, names.events, lines[: len(lines) - trailing])
        if trailing:
            _collect(settings, lambda got: len(got) >= len(lines) - trailing, timeout=180)
            send_lines(kafka_bootstrap, names.events, lines[len(lines) - trailing :], rate=4)
        verdicts = _verdicts(_collect(settings, lambda got: len(got) >= len(lines), timeout=180), names)
    finally:
        worker.stop()
    different = {
        event_id: (verdicts.get(event_id, [{}])[0], expected)
        for event_id, expected in reference.items()
        if [{k: v.get(k) for k in VERDICT_KEYS} for v in verdicts.get(event_id, [])]
        != [{k: expected[k] for k in VERDICT_KEYS}]
    }
    assert len(different) == 0, list(different.items())[:3]
    return reference


def test_the_stream_decides_the_development_set_exactly_as_neardup_scan(
    kafka_bootstrap: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The one decision rule, two callers: on one input partition the stream's verdicts equal
    scan's for every event of the development set (real text, a quarter of it near-duplicates,
    hard negatives), not only for the sample feed."""
    events, _ = devset.build()
    reference = _devset_as_scan(kafka_bootstrap, tmp_path_factory.mktemp("stream-devset"), events)
    assert sum(v["verdict"] == "duplicate" for v in reference.values()) > len(events) // 5


def test_a_backfill_over_three_windows_expires_as_it_goes_and_decides_as_scan(
    kafka_bootstrap: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """A backfill: the development set's event times stretched over three retention windows,
    sent in about a second, then a few events a second of the latest time. A worker alone (for
    its reorder window) expires buckets as soon as its frontier has passed every earlier
    arrival, not a reorder window of arrivals later (here 8 s, longer than the whole run), and
    what it expires no later event could still see: its verdicts are scan's, retention and all.
    (Upkeep drops one expired bucket a batch: the later events' batches finish the purges.)"""
    tmp = tmp_path_factory.mktemp("stream-backfill")
    events, _ = devset.build()
    span = 3 * Settings().retention_ms
    stretched = [{**event, "ts": devset.EPOCH_MS + i * span // len(events)} for i, event in enumerate(events)]
    later = [
        {"id": f"later{n}", "text": f"Status report number {n}: all systems nominal.", "ts": stretched[-1]["ts"]}
        for n in range(16)
    ]
    _devset_as_scan(kafka_bootstrap, tmp, stretched + later, reorder_ms=8_000, trailing=len(later))
    (store,) = (tmp / "state").rglob("stores/index/*")
    buckets = [name for name in Rdict.list_cf(str(store)) if name.startswith("bucket@")]
    assert len(buckets) <= 10, f"a window is 8 buckets, the backfill spanned 22: {buckets}"
