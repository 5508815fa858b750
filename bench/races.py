"""Corrections under concurrent producers: how often a published verdict is revised.

Run against a broker (``NEARDUP_BOOTSTRAP``), e.g.::

    python bench/races.py --producers 3 --rate 60 --lateness-ms 0,20,100

Syndication is the race neardup must survive: several producers send the same story at
about the same moment, and their copies land in different input partitions. Here each of
``--producers`` threads (its own Kafka producer) sends the shipped sample feed at
``--rate`` events/s in the same order, copy ``p`` of story ``i`` under the id ``{p}-{i}``
with the story's text unchanged and no ``ts`` (event time is the broker's), so every
story arrives ``producers`` times at once through different partitions (by key hash). For 1 and 2 workers and each allowed lateness,
on fresh topics, the bench reports the verdicts, the duplicates among them, the corrections
published (a verdict revised because an earlier original was indexed after it went out:
a unique one turned duplicate, or a duplicate re-pointed to an earlier original), the
stories that still have two unique copies once corrections apply (a race nothing caught:
must be 0), and the latency from input append to first verdict — next to the latency of
bench/stream.py's passthrough agent under the same producers, measured first in the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from collections import Counter
from pathlib import Path

from kafka import KafkaConsumer, TopicPartition

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import stream  # noqa: E402

from topology.stages import Topics  # noqa: E402
from worker.cli.inputs import default_sample  # noqa: E402

_PARTITIONS = 4
_SETTLE_S = 3.0  # after the last verdict, for notes still in flight to become corrections


def _copies(producer: int, stories: int) -> list[tuple[bytes, bytes]]:
    """Producer ``producer``'s copy of the first ``stories`` lines of the sample feed."""
    lines = [json.loads(line) for line in Path(default_sample()).read_text().splitlines() if line.strip()]
    out = []
    for i in range(stories):
        event = {"id": f"{producer}-{i:06d}", "text": lines[i % len(lines)]["text"]}
        out.append((event["id"].encode(), json.dumps(event, ensure_ascii=False).encode()))
    return out


def _unrelated_warm_up(count: int = 200) -> list[tuple[bytes, bytes]]:
    """Warm-up events whose texts match no story, so every story's first copy is an original."""
    words = [f"w{n:04d}" for n in range(5000)]
    out = []
    for i in range(count):
        text = " ".join(words[(i * 131 + j * 17) % len(words)] for j in range(40))
        event_id = f"{stream._WARMUP.decode()}{i:05d}"
        out.append((event_id.encode(), json.dumps({"id": event_id, "text": text}).encode()))
    return out


def _send_concurrently(bootstrap: str, topic: str, feeds: list[list[tuple[bytes, bytes]]], rate: float) -> None:
    """Each feed from its own thread and producer, all paced from one shared start."""
    start = time.monotonic() + 0.5
    threads = [threading.Thread(target=stream.produce, args=(bootstrap, topic, feed, rate, start)) for feed in feeds]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def _outcomes(bootstrap: str, names: Topics) -> tuple[dict[str, str], list[dict[str, object]]]:
    """Each id's first verdict topic, and the correction records in log order."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    watched = (names.unique, names.duplicates, names.corrections)
    parts = [TopicPartition(t, p) for t in watched for p in consumer.partitions_for_topic(t) or ()]
    consumer.assign(parts)
    consumer.seek_to_beginning(*parts)
    end = consumer.end_offsets(parts)
    first: dict[str, str] = {}
    corrections: list[dict[str, object]] = []
    while any(consumer.position(tp) < end[tp] for tp in parts):
        for tp, records in consumer.poll(timeout_ms=500).items():
            for record in records:
                key = record.key.decode()
                if key.startswith(stream._WARMUP.decode()):
                    continue
                if tp.topic == names.corrections:
                    corrections.append(json.loads(record.value))
                else:
                    first.setdefault(key, tp.topic)
    consumer.close()
    return first, corrections


def _split_stories(first: dict[str, str], corrections: list[dict[str, object]], unique_topic: str) -> int:
    """Stories more than one of whose copies still stand as unique once corrections apply.

    All copies of a story share its text, so at most one may be unique: anything more is a
    race that neither the hold nor a correction caught.
    """
    unique = {event_id for event_id, topic in first.items() if topic == unique_topic}
    unique -= {str(c["id"]) for c in corrections}
    per_story = Counter(event_id.split("-", 1)[1] for event_id in unique)
    return sum(1 for copies in per_story.values() if copies > 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stories", type=int, default=200, help="lines of the sample feed each producer sends")
    parser.add_argument("--producers", type=int, default=3)
    parser.add_argument("--rate", type=float, default=60.0, help="events/s of each producer")
    parser.add_argument("--lateness-ms", default="0,20,100", help="comma-separated allowed lateness values")
    parser.add_argument("--workers", default="1,2", help="comma-separated worker counts")
    args = parser.parse_args()
    bootstrap = os.environ.get("NEARDUP_BOOTSTRAP", "127.0.0.1:9092")
    tmp = stream.scratch_dir()
    feeds = [_copies(p, args.stories) for p in range(args.producers)]
    events = args.producers * args.stories
    warm = _unrelated_warm_up()
    print(
        f"{args.producers} producers x {args.stories} stories at {args.rate:.0f} events/s each, "
        f"{_PARTITIONS} partitions, broker {bootstrap}"
    )
    with stream.running(bootstrap, _PARTITIONS, 1, "faust", tmp, 0, warm) as names:
        _send_concurrently(bootstrap, names.events, feeds, args.rate)
        floor = stream.latency_ms(*stream.read_times(bootstrap, names.events, [names.unique], events))
    print(
        f"passthrough agent, same producers and rate (this run's floor): latency p50 {floor['p50_ms']:4.0f} ms"
        f"  p99 {floor['p99_ms']:4.0f} ms",
        flush=True,
    )
    for workers in (int(w) for w in args.workers.split(",")):
        for lateness in (int(ms) for ms in args.lateness_ms.split(",")):
            with stream.running(bootstrap, _PARTITIONS, workers, stream.NEARDUP, tmp, lateness, warm) as names:
                _send_concurrently(bootstrap, names.events, feeds, args.rate)
                input_ts, output_ts = stream.read_times(
                    bootstrap, names.events, [names.unique, names.duplicates], events
                )
                time.sleep(_SETTLE_S)
                first, corrections = _outcomes(bootstrap, names)
            latency = stream.latency_ms(input_ts, output_ts)
            duplicates = sum(1 for topic in first.values() if topic == names.duplicates)
            revised = sum(1 for c in corrections if c["previous_verdict"] == "unique")
            print(
                f"{workers} worker{'s' if workers > 1 else ' '} lateness {lateness:4d} ms: {len(first)} of {events} verdicts,"
                f" {duplicates} duplicates, {len(corrections)} corrections"
                f" ({len(corrections) / max(1, len(first)):.2%}; {revised} of them unique -> duplicate),"
                f" {_split_stories(first, corrections, names.unique)} stories left with two unique copies"
                f" | latency p50 {latency['p50_ms']:4.0f} ms  p99 {latency['p99_ms']:4.0f} ms",
                flush=True,
            )


if __name__ == "__main__":
    main()
