"""What stream tests share: worker subprocesses, feeds, reading the outputs, checking verdicts.

Tests run the real ``python -m worker.cli.main worker`` as subprocesses against a real broker and
judge the result the way a consumer of the output topics would: by key (= event id).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.errors import CoordinatorNotAvailableError

from bench import quotes
from topology.stages import Topics, total_order
from worker.cli.inputs import default_sample
from worker.cli.tail import Record, follow
from worker.settings import Settings

REPO = Path(__file__).resolve().parents[1]
SAMPLE = [line for line in Path(default_sample()).read_bytes().splitlines() if line.strip()]
MAX_TEXT = 100_000


def worker_env(
    bootstrap: str, prefix: str, partitions: int, state: Path, lateness_ms: int = 0, web_port: int = 0
) -> dict[str, str]:
    """The environment of a worker (and of the settings tests read outputs with); no web server
    unless ``web_port`` is given, so that workers of one test never compete for a port."""
    return {
        **os.environ,
        "NEARDUP_BOOTSTRAP": bootstrap,
        "NEARDUP_TOPIC_PREFIX": prefix,
        "NEARDUP_PARTITIONS": str(partitions),
        "NEARDUP_STATE_DIR": str(state),
        "NEARDUP_ALLOWED_LATENESS_MS": str(lateness_ms),
        "NEARDUP_MAX_TEXT_BYTES": str(MAX_TEXT),
        "NEARDUP_WEB_PORT": str(web_port),
    }


def refused_worker(env: dict[str, str], name: str) -> str:
    """Start ``neardup worker --name name``, which must refuse to start: its one stderr line."""
    proc = subprocess.run(
        [sys.executable, "-m", "worker.cli", "worker", "--name", name],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1, proc.stderr
    [line] = proc.stderr.strip().splitlines()
    return line


@dataclass
class WorkerProcess:
    """One ``neardup worker`` subprocess; its output is appended to ``<logdir>/<name>.log``."""

    proc: subprocess.Popen[bytes]
    log: Path
    offset: int = 0  # where this process's part of the log begins

    @classmethod
    def start(cls, env: dict[str, str], name: str, logdir: Path) -> WorkerProcess:
        log = logdir / f"{name}.log"
        offset = log.stat().st_size if log.exists() else 0
        with log.open("ab") as out:
            proc = subprocess.Popen(
                [sys.executable, "-m", "worker.cli.main", "worker", "--name", name, "--loglevel", "info"],
                env=env,
                cwd=REPO,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        return cls(proc, log, offset)

    def text(self) -> str:
        with self.log.open("rb") as f:
            f.seek(self.offset)
            return f.read().decode("utf-8", "replace")

    def tail(self, chars: int = 3000) -> str:
        return self.text()[-chars:]

    def wait_ready(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, f"worker exited early:\n{self.tail()}"
            if "Worker]: Ready" in self.text():
                return
            time.sleep(0.2)
        raise AssertionError(f"worker not ready in {timeout}s:\n{self.tail()}")

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        """SIGKILL: no shutdown code runs (a crash, an OOM kill, a lost machine)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def peak_rss_kib(self) -> int:
        """The highest resident set size of the process so far (``VmHWM``), in KiB."""
        status = Path(f"/proc/{self.proc.pid}/status").read_text()
        match = re.search(r"^VmHWM:\s+(\d+) kB", status, re.MULTILINE)
        assert match, status
        return int(match.group(1))


@contextmanager
def producer(bootstrap: str) -> Iterator[KafkaProducer]:
    made = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=5)
    try:
        yield made
        made.flush()
    finally:
        made.close()


def collect(settings: Settings, done: Callable[[list[Record]], bool], timeout: float = 90.0) -> list[Record]:
    """Every output record from the beginning, until ``done`` holds (fails after ``timeout``)."""
    got: list[Record] = []
    deadline = time.monotonic() + timeout
    for record in follow(settings, from_beginning=True, timeout_s=timeout):
        got.append(record)
        if done(got):
            return got
        assert time.monotonic() < deadline, "timed out collecting outputs"
    raise AssertionError(f"outputs stopped after {len(got)} records")


def verdicts_by_id(records: list[Record], names: Topics) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        if r.topic in (names.unique, names.duplicates):
            assert r.key == r.value["id"]
            out.setdefault(r.value["id"], []).append(r.value)
    return out


def input_orders(bootstrap: str, topic: str) -> dict[str, int]:
    """Total order of every keyed input record, from the broker's LogAppendTime stamps."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    try:
        parts = [TopicPartition(topic, p) for p in consumer.partitions_for_topic(topic)]
        consumer.assign(parts)
        consumer.seek_to_beginning(*parts)
        ends = consumer.end_offsets(parts)
        orders: dict[str, int] = {}
        while any(consumer.position(tp) < ends[tp] for tp in parts):
            for msgs in consumer.poll(timeout_ms=500).values():
                for m in msgs:
                    if m.key is not None:
                        orders.setdefault(m.key.decode(), total_order(m.timestamp, m.partition, m.offset))
        return orders
    finally:
        consumer.close()


def wait_for_members(bootstrap: str, group: str, members: int, timeout: float = 60.0) -> None:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                described = admin.describe_groups([group])[group]
            except CoordinatorNotAvailableError:  # a fresh broker makes its offsets topic first
                described = {"group_state": "", "members": []}
            if described["group_state"] == "Stable" and len(described["members"]) == members:
                return
            time.sleep(0.5)
        raise AssertionError(f"group {group} never had {members} stable members")
    finally:
        admin.close()


# ------------------------------------------------------------------------------- feeds
def real_feed(count: int, tag: str, seed: int = 7, variant_share: float = 0.1) -> list[bytes]:
    """``count`` events of real text under fresh ids ``{tag}-<n>``: texts of three sentences of
    the sample feed, about ``variant_share`` of them an earlier text with one word added
    (:mod:`bench.quotes`, where ``bench/stages.py`` measures what they cost the index)."""
    return quotes.feed(count, tag, seed, variant_share)


def send_lines(bootstrap: str, topic: str, lines: list[bytes], rate: float | None = None) -> None:
    """Send JSON lines keyed by id, at most ``rate`` per second when given."""
    started = time.perf_counter()
    with producer(bootstrap) as made:
        for sent, line in enumerate(lines):
            if rate:
                ahead = sent / rate - (time.perf_counter() - started)
                if ahead > 0:
                    time.sleep(ahead)
            made.send(topic, key=json.loads(line)["id"].encode(), value=line)


# ---------------------------------------------------------------------- reading outputs
class OutputReader:
    """Reads the four output topics from the beginning, incrementally, like a consumer would."""

    def __init__(self, bootstrap: str, names: Topics, isolation_level: str = "read_uncommitted") -> None:
        self.names = names
        self.records: list[Record] = []
        self._consumer = KafkaConsumer(
            bootstrap_servers=bootstrap, enable_auto_commit=False, group_id=None, isolation_level=isolation_level
        )
        parts = []
        for topic in names.outputs():
            deadline = time.monotonic() + 30
            while not self._consumer.partitions_for_topic(topic):
                assert time.monotonic() < deadline, f"no topic {topic}"
                self._consumer.topics()
                time.sleep(0.2)
            parts.extend(TopicPartition(topic, p) for p in self._consumer.partitions_for_topic(topic))
        self._consumer.assign(parts)
        self._consumer.seek_to_beginning(*parts)
        self.verdicted: set[str] = set()
        self.stamped: dict[str, int] = {}  # id -> timestamp (ms) of its first verdict record

    def poll(self, timeout_ms: int = 500) -> int:
        got = 0
        for msgs in self._consumer.poll(timeout_ms=timeout_ms, max_records=20_000).values():
            for m in msgs:
                value = json.loads(m.value) if m.value is not None else None
                key = None if m.key is None else m.key.decode()
                self.records.append(Record(m.topic, m.partition, m.offset, key, value))
                if m.topic in (self.names.unique, self.names.duplicates) and key is not None:
                    self.verdicted.add(key)
                    self.stamped.setdefault(key, m.timestamp)
                got += 1
        return got

    def wait_for(self, ids: set[str], timeout: float, alive: Callable[[], None] | None = None) -> float:
        """Poll until every id in ``ids`` has a verdict; returns the seconds it took."""
        began = time.monotonic()
        while not ids <= self.verdicted:
            if alive is not None:
                alive()
            assert time.monotonic() - began < timeout, (
                f"{len(ids - self.verdicted)} of {len(ids)} ids still without a verdict after {timeout:.0f} s"
            )
            self.poll()
        return time.monotonic() - began

    def settle(self, quiet_s: float = 2.0) -> None:
        """Read on until nothing new arrived for ``quiet_s`` (late corrections, repeats)."""
        last = time.monotonic()
        while time.monotonic() - last < quiet_s:
            if self.poll(200):
                last = time.monotonic()

    def close(self) -> None:
        self._consumer.close()


@dataclass
class Audit:
    """What a consumer of the outputs can check, per event id."""

    ids: int
    verdict_records: int
    repeats: int  # verdict records beyond the first for an id (at-least-once redelivery)
    corrections: int
    unique: int
    duplicates: int
    final: dict[str, str | None] = field(repr=False, default_factory=dict)


def audit(records: list[Record], names: Topics, expected: set[str]) -> Audit:
    """Check the consumer-side guarantees; returns the figures. Fails on any violation.

    * every expected id has at least one verdict record, and no other id has one;
    * all verdict records of an id are identical (a repeat, never a different verdict), so an
      id is never on both ``unique`` and ``duplicates``;
    * after applying corrections in log order, no id points at itself and pointers form no cycle.
    """
    by_id = verdicts_by_id(records, names)
    missing = expected - set(by_id)
    assert not missing, f"{len(missing)} ids have no verdict, e.g. {sorted(missing)[:5]}"
    extra = set(by_id) - expected
    assert not extra, f"verdicts for ids never sent: {sorted(extra)[:5]}"
    for event_id, copies in by_id.items():
        different = [c for c in copies if c != copies[0]]
        assert not different, f"{event_id}: verdict changed without a correction: {copies[0]} vs {different[0]}"
    final: dict[str, str | None] = {event_id: copies[0]["duplicate_of"] for event_id, copies in by_id.items()}
    corrections = 0
    for r in records:
        if r.topic == names.corrections:
            assert r.key in final, f"correction for an id without a verdict: {r.key}"
            final[r.key] = r.value["duplicate_of"]
            corrections += 1
    for event_id, original in final.items():
        assert original != event_id, f"{event_id} is marked a duplicate of itself"
    for start in final:
        seen: set[str] = set()
        node: str | None = start
        while node is not None and final.get(node) is not None:
            assert node not in seen, f"cycle in duplicate_of pointers through {node}"
            seen.add(node)
            node = final[node]
    unique = sum(1 for copies in by_id.values() if copies[0]["verdict"] == "unique")
    return Audit(
        ids=len(by_id),
        verdict_records=sum(len(c) for c in by_id.values()),
        repeats=sum(len(c) - 1 for c in by_id.values()),
        corrections=corrections,
        unique=unique,
        duplicates=len(by_id) - unique,
        final=final,
    )


def ids_of(lines: list[bytes]) -> set[str]:
    return {json.loads(line)["id"] for line in lines}
