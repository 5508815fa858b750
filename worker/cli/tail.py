"""``neardup tail``: follow what the worker publishes — unique, duplicates, corrections, dead letters.

On a terminal each record is one readable line; piped, each is one JSON object
``{"topic", "partition", "offset", "key", "value"}`` so scripts and tests can read it.
``--max N`` and ``--timeout S`` (seconds without a new record) make it end on its own.
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any

from topology.stages import Topics
from worker.settings import Settings

_POLL_MS = 200
_METADATA_WAIT_S = 10.0


@dataclass(frozen=True, slots=True)
class Record:
    """One published record, decoded."""

    topic: str
    partition: int
    offset: int
    key: str | None
    value: Any

    def to_dict(self) -> dict[str, Any]:
        return {
            "topic": self.topic,
            "partition": self.partition,
            "offset": self.offset,
            "key": self.key,
            "value": self.value,
        }


def follow(
    settings: Settings,
    topics: tuple[str, ...] | None = None,
    from_beginning: bool = False,
    max_records: int | None = None,
    timeout_s: float | None = None,
) -> Iterator[Record]:
    """Records of ``topics`` (default: the four outputs) as they arrive, every partition, no group."""
    from kafka import KafkaConsumer, TopicPartition

    names = topics or Topics(settings.topic_prefix).outputs()
    consumer = KafkaConsumer(enable_auto_commit=False, group_id=None, **settings.connection.kafka_python())
    try:
        assigned: list[TopicPartition] = []
        deadline = time.monotonic() + _METADATA_WAIT_S
        while True:
            consumer.topics()  # refresh metadata
            missing = [t for t in names if not consumer.partitions_for_topic(t)]
            if not missing or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        for topic in names:
            for partition in sorted(consumer.partitions_for_topic(topic) or ()):
                assigned.append(TopicPartition(topic, partition))
        if not assigned:
            return
        consumer.assign(assigned)
        if from_beginning:
            consumer.seek_to_beginning(*assigned)
        else:
            consumer.seek_to_end(*assigned)
        seen = 0
        last = time.monotonic()
        while max_records is None or seen < max_records:
            batches = consumer.poll(timeout_ms=_POLL_MS)
            if not batches:
                if timeout_s is not None and time.monotonic() - last > timeout_s:
                    return
                continue
            last = time.monotonic()
            for tp in sorted(batches, key=lambda t: (t.topic, t.partition)):
                for msg in batches[tp]:
                    yield Record(
                        topic=msg.topic,
                        partition=msg.partition,
                        offset=msg.offset,
                        key=None if msg.key is None else msg.key.decode("utf-8", "replace"),
                        value=_decode(msg.value),
                    )
                    seen += 1
                    if max_records is not None and seen >= max_records:
                        return
    finally:
        consumer.close()


def _decode(raw: bytes | None) -> Any:
    if raw is None:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode("utf-8", "replace")


def pretty(record: Record, prefix: str) -> str:
    """One human line per record."""
    kind = record.topic.removeprefix(prefix + ".")
    v = record.value if isinstance(record.value, dict) else {}
    if kind == "unique":
        text = str(v.get("text", ""))[:80].replace("\n", " ")
        return f"unique     {record.key}  {text}"
    if kind == "duplicates":
        return (
            f"duplicate  {record.key}  of {v.get('duplicate_of')}  "
            f"distance {v.get('distance')}  similarity {v.get('similarity')}"
        )
    if kind == "corrections":
        return (
            f"correction {record.key}  now of {v.get('duplicate_of')}  "
            f"(was {v.get('previous_verdict')} {v.get('previous_duplicate_of') or ''})"
        )
    return f"rejected   {v.get('topic')}[{v.get('partition')}]@{v.get('offset')}  {v.get('reason')}"


def run(
    settings: Settings,
    from_beginning: bool,
    max_records: int | None,
    timeout_s: float | None,
    out: IO[str] | None = None,
    human: bool | None = None,
) -> int:
    """CLI entry: print records until ``--max``/``--timeout`` or Ctrl-C, then a summary on stderr."""
    stream = out or sys.stdout
    if human is None:
        human = stream.isatty()
    counts: Counter[str] = Counter()
    try:
        for record in follow(settings, None, from_beginning, max_records, timeout_s):
            counts[record.topic.removeprefix(settings.topic_prefix + ".")] += 1
            line = pretty(record, settings.topic_prefix) if human else json.dumps(record.to_dict(), ensure_ascii=False)
            stream.write(line + "\n")
            stream.flush()
    finally:
        summary = ", ".join(f"{counts[kind]} {kind}" for kind in ("unique", "duplicates", "corrections", "deadletter"))
        print(f"neardup tail: {sum(counts.values())} records: {summary}", file=sys.stderr)
    return 0
