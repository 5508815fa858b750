"""Time to restore one index partition holding N indexed events from its changelog.

A worker that lost its state directory (or takes a partition over with no local copy)
replays ``{p}.index-changelog`` before the partition's first batch; this is how long that
takes. Run against a broker (``NEARDUP_BOOTSTRAP``); not part of CI::

    python bench/restore.py --events 1000000

The changelog is written in the worker's own format by the worker's own code:
:meth:`IndexPartition.add` records each event's operations (every block table plus its two
anchors, as a real event whose buckets all live in one partition) and
:func:`topology.changelog.encode_ops` packs ``--per-record`` events per record, as one index
batch does. Only the RocksDB writes are skipped while producing (a store that discards
them), so producing stays cheap; the timed part is a real :meth:`StoreSet.restore` into an
empty directory through :class:`ChangelogReader`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
import tempfile
import time
import uuid
from collections.abc import Iterable
from pathlib import Path

from kafka import KafkaProducer

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.stream import drop_topics  # noqa: E402
from topology.changelog import encode_ops  # noqa: E402
from topology.stages import Topics, total_order  # noqa: E402
from topology.topics import create_topics, topics  # noqa: E402
from worker.engine.blocks import Plan, parse_plan  # noqa: E402
from worker.engine.match import Entry  # noqa: E402
from worker.engine.sketch import SKETCH_BYTES  # noqa: E402
from worker.settings import Settings  # noqa: E402
from worker.state.changelog import StoreSet  # noqa: E402
from worker.state.partition import IndexPartition  # noqa: E402
from worker.state.replay import ChangelogReader  # noqa: E402


class _Discard:
    """A stand-in for the RocksDB index while the changelog is produced: stores nothing."""

    def add_many(self, items: Iterable[object]) -> int:
        return sum(1 for _ in items)

    def add_one(self, item: object, tables: object, exact_keys: object) -> bool:
        return True


def _recorder(plan: Plan) -> IndexPartition:
    """An :class:`IndexPartition` whose op log is real and whose storage is discarded."""
    partition = IndexPartition.__new__(IndexPartition)
    partition.index = _Discard()  # type: ignore[assignment]
    partition._ops = {}
    partition._added = 0
    return partition


def produce_changelog(
    bootstrap: str, topic: str, plan: Plan, events: int, per_record: int, seed: int
) -> tuple[int, int, Entry]:
    """Write ``events`` events' index ops to partition 0 of ``topic``; returns (records, bytes, last entry)."""
    rng = random.Random(seed)
    recorder = _recorder(plan)
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks=1, linger_ms=20, max_request_size=8 << 20)
    base_ms = int(time.time() * 1000) - events
    records = size = 0
    tables = list(range(len(plan.tables)))
    try:
        for n in range(events):
            entry = Entry(
                f"ev{n:09d}",
                rng.getrandbits(64),
                total_order(base_ms + n, 0, n),
                base_ms + n,
                rng.randbytes(SKETCH_BYTES),
            )
            recorder.add(entry, tables=tables, exact_keys=[rng.getrandbits(64), rng.getrandbits(64)])
            if (n + 1) % per_record == 0 or n + 1 == events:
                for chunk in encode_ops(recorder.take_ops()):
                    producer.send(topic, key=uuid.uuid4().hex.encode(), value=chunk, partition=0)
                    records += 1
                    size += len(chunk)
        producer.flush()
    finally:
        producer.close()
    return records, size, entry


async def timed_restore(bootstrap: str, topic: str, plan: Plan, root: Path, last: Entry) -> float:
    """Seconds to restore partition 0 into an empty store (checked: the last event is found)."""
    reader = ChangelogReader({"bootstrap_servers": bootstrap})
    stores: StoreSet[IndexPartition] = StoreSet(root, topic, lambda path: IndexPartition(path, plan), reader)
    try:
        began = time.perf_counter()
        store = await stores.restore(0)
        seconds = time.perf_counter() - began
        found = {c.entry.event_id for c in store.candidates(last.fingerprint, [len(plan.tables) - 1], 0)}
        if last.event_id not in found:
            raise SystemExit(f"restore lost {last.event_id}")
        return seconds
    finally:
        stores.close()
        await reader.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--per-record", type=int, default=500, help="events per changelog record (one index batch)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    bootstrap = os.environ.get("NEARDUP_BOOTSTRAP", "127.0.0.1:9092")
    settings = Settings.from_env()
    plan = parse_plan(settings.plan, settings.k, settings.expected_fingerprints)
    prefix = f"restore{uuid.uuid4().hex[:8]}"
    create_topics(bootstrap, topics(prefix, 1, 1))
    try:
        return _run(bootstrap, Topics(prefix).index_changelog, plan, args)
    finally:
        drop_topics(bootstrap, prefix)  # a million events leave 312 MiB of changelog on the broker


def _run(bootstrap: str, topic: str, plan: Plan, args: argparse.Namespace) -> int:
    """Produce the changelog, restore it, print both timings."""
    began = time.perf_counter()
    records, size, last = produce_changelog(bootstrap, topic, plan, args.events, args.per_record, args.seed)
    produced = time.perf_counter() - began
    print(
        f"changelog: {args.events} events ({len(plan.tables)} tables + 2 anchors each) in {records} records, "
        f"{size / 2**20:.0f} MiB, produced in {produced:.0f} s",
        flush=True,
    )
    with tempfile.TemporaryDirectory(prefix="neardup-restore-") as tmp:
        seconds = asyncio.run(timed_restore(bootstrap, topic, plan, Path(tmp), last))
        store_mib = sum(f.stat().st_size for f in Path(tmp).rglob("*") if f.is_file()) / 2**20
    print(
        f"restore: {args.events} events in {seconds:.1f} s ({args.events / seconds:,.0f} events/s, "
        f"{size / 2**20 / seconds:.1f} MiB/s of changelog); store on disk {store_mib:.0f} MiB",
        flush=True,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
