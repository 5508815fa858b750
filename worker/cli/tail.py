"""``neardup tail``: follow what the worker publishes — unique, duplicates, corrections, dead letters.

On a terminal each record is one readable line; piped, each is one JSON object
``{"topic", "partition", "offset", "key", "value"}`` so scripts and tests can read it.
``--max N`` and ``--timeout S`` (seconds without a new record) make it end on its own.
"""

from __future__ import annotations

import json
import re
import sys
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any

from topology.stages import Topics
from worker.cli.inputs import count
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


class NoOutputTopics(ValueError):
    """No output topic of the prefix exists: tail would follow nothing and say "0 records"."""


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
        waited = _METADATA_WAIT_S if timeout_s is None else min(_METADATA_WAIT_S, timeout_s)
        deadline = time.monotonic() + waited
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
            raise NoOutputTopics(
                f"none of {', '.join(names)} exists on {settings.connection.bootstrap} after "
                f"{waited:g} s; a worker creates them (or `neardup topics create`): is the "
                "prefix (NEARDUP_TOPIC_PREFIX) the worker's?"
            )
        consumer.assign(assigned)
        if from_beginning:
            consumer.seek_to_beginning(*assigned)
        else:
            consumer.seek_to_end(*assigned)
        rank = {name: i for i, name in enumerate(names)}
        seen = 0
        last = time.monotonic()
        while max_records is None or seen < max_records:
            batches = consumer.poll(timeout_ms=_POLL_MS)
            if not batches:
                if timeout_s is not None and time.monotonic() - last > timeout_s:
                    return
                continue
            last = time.monotonic()
            # One poll returns each topic's records apart; in publication order (the producer's
            # timestamp), a verdict is not shown after records published later in other topics.
            polled = [msg for records in batches.values() for msg in records]
            for msg in sorted(polled, key=lambda m: (m.timestamp, rank.get(m.topic, 0), m.partition, m.offset)):
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


LEGEND = (
    "distance: how many of the 64 fingerprint bits differ (0: the same words after normalising); "
    "matched on the opening or closing words, a copy may be farther than NEARDUP_MAX_DISTANCE. "
    "similarity: the estimate that confirmed the match, the resemblance of the two texts' features "
    "(word shingles; a short text's character 3-grams) or, where that fell short, the share of the "
    "shorter text found in the longer (a teaser of a story: 1.0)."
)


class OriginalsFirst:
    """Holds a duplicate back until the original it names has been shown (at most ``wait_s``).

    Verdicts of different ids travel in different topics and partitions, so a reader can see a
    duplicate before its original; on a screen that reads wrong. A duplicate whose original was
    never shown (published before this reader started, or lost to ``--max``) goes out after
    ``wait_s`` anyway.
    """

    def __init__(self, wait_s: float = 2.0) -> None:
        self.wait_s = wait_s
        self._shown: set[str] = set()
        self._held: dict[str, list[tuple[float, Record]]] = {}

    def add(self, record: Record, now: float) -> list[Record]:
        """The records to show now, in order: ``record`` (unless held) and any it releases."""
        value = record.value if isinstance(record.value, dict) else {}
        original = value.get("duplicate_of") if value.get("verdict") == "duplicate" else None
        if original is not None and original not in self._shown:
            self._held.setdefault(str(original), []).append((now, record))
            return self.due(now)
        return [*self._show(record), *self.due(now)]

    def _show(self, record: Record) -> list[Record]:
        shown = [record]
        if record.key is not None:
            self._shown.add(record.key)
            for _, held in self._held.pop(record.key, []):
                shown.extend(self._show(held))
        return shown

    def due(self, now: float, everything: bool = False) -> list[Record]:
        """Held records whose wait is over (all of them with ``everything``), oldest first."""
        late = sorted(
            (
                (since, record)
                for waiting in self._held.values()
                for since, record in waiting
                if everything or now - since >= self.wait_s
            ),
            key=lambda held: held[0],
        )
        out: list[Record] = []
        for since, record in late:
            original = str(record.value.get("duplicate_of"))
            if (since, record) in self._held.get(original, []):
                self._held[original].remove((since, record))
                if not self._held[original]:
                    del self._held[original]
                out.extend(self._show(record))
        return out


# Characters a terminal acts on rather than shows (C0, DEL, C1, line and paragraph separators,
# bidirectional overrides): a producer's text could clear an operator's screen or reorder a line.
_UNSHOWN = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def pretty(record: Record, prefix: str) -> str:
    """One human line per record, with what a terminal would act on shown as escapes."""
    return _UNSHOWN.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), _line(record, prefix))


def _line(record: Record, prefix: str) -> str:
    kind = record.topic.removeprefix(prefix + ".")
    v = record.value if isinstance(record.value, dict) else {}
    if kind == "unique":
        text = str(v.get("text", ""))[:80].replace("\n", " ")  # a story's line breaks read as spaces
        return f"unique     {record.key}  {text}"
    if kind == "duplicates":
        return (
            f"duplicate  {record.key}  of {v.get('duplicate_of')}  "
            f"distance {v.get('distance')}/64 bits  similarity {v.get('similarity')}"
        )
    if kind == "corrections":
        return (
            f"correction {record.key}  now of {v.get('duplicate_of')}  "
            f"(was {' of '.join(str(x) for x in (v.get('previous_verdict'), v.get('previous_duplicate_of')) if x)})"
        )
    named = f"{v['id']}  " if "id" in v else ""  # a refused event whose id was valid
    return f"rejected   {named}{v.get('topic')}[{v.get('partition')}]@{v.get('offset')}  {v.get('reason')}"


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
    order = OriginalsFirst()

    def show(records: list[Record]) -> None:
        for record in records:
            counts[record.topic.removeprefix(settings.topic_prefix + ".")] += 1
            line = pretty(record, settings.topic_prefix) if human else json.dumps(record.to_dict(), ensure_ascii=False)
            stream.write(line + "\n")
        stream.flush()

    if human:
        stream.write(LEGEND + "\n")
    followed = True
    try:
        for record in follow(settings, None, from_beginning, max_records, timeout_s):
            show(order.add(record, time.monotonic()))
        show(order.due(time.monotonic(), everything=True))
    except NoOutputTopics:
        followed = False  # its one line says it all
        raise
    finally:
        if followed:
            print(f"neardup tail: {summary(counts)}", file=sys.stderr)
    return 0


def summary(counts: Counter[str]) -> str:
    """What was shown, by output topic (``counts`` is keyed by the topic name without its prefix)."""
    return (
        f"{count(sum(counts.values()), 'record')}: {counts['unique']} unique, "
        f"{count(counts['duplicates'], 'duplicate')}, {count(counts['corrections'], 'correction')}, "
        f"{count(counts['deadletter'], 'dead letter')}"
    )
