"""Where one worker's latency goes: per-hop times and the worker's CPU at a steady load.

Run against a broker (``NEARDUP_BOOTSTRAP``), e.g.::

    python bench/stream_hops.py --events 2000 --rate 200

Starts one worker on fresh topics, warms it up, sends ``--events`` at ``--rate`` events/s
(``--rate 0``: a backlog), then reads back every topic and reports, at the median and p99,
the time from the input record's append to its first probe message, from that probe message
to the last answer message for the event, and from there to the verdict — plus the share of
one core the worker used meanwhile. A worker hands probes and answers for partitions it owns
to its next stage in-process, so with one worker only the input -> verdict line has figures.
The worker logs each input batch (``NEARDUP_LOG_BATCHES``), so the bench also splits one
worker's latency into the wait before an event's batch starts (fetch, window, the batch
still running) and the batch itself — fingerprint to verdict, but not the lateness hold of
a held verdict — with the CPU our code spent per event in it.
(bench/stream.py gives the end-to-end figures next to the passthrough baseline; this one
explains them.) The passthrough agent of bench/stream.py then gets the same input at the
same rate, as the floor measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import sys
import time
import uuid
from pathlib import Path

from kafka import KafkaConsumer, TopicPartition

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import stream  # noqa: E402
from topology.stages import Topics  # noqa: E402

_PARTITIONS = 4
_BATCH_LINE = re.compile(r"batch: (\d+) events, waited ([\d.]+)-([\d.]+) ms, took ([\d.]+) ms, ([\d.]+) ms CPU")


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _read_back(bootstrap: str, names: Topics) -> dict[str, dict[str, int]]:
    """First input, probe and verdict time, and last answer time, of every event id."""
    seen: dict[str, dict[str, int]] = {kind: {} for kind in ("in", "probe", "answer", "out")}
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    watched = (names.events, names.probes, names.answers, names.unique, names.duplicates)
    parts = [TopicPartition(t, p) for t in watched for p in range(_PARTITIONS)]
    consumer.assign(parts)
    consumer.seek_to_beginning(*parts)
    idle = 0
    while idle < 3:
        polled = consumer.poll(timeout_ms=500)
        idle = 0 if polled else idle + 1
        for tp, records in polled.items():
            for record in records:
                if tp.topic == names.events:
                    seen["in"].setdefault(record.key.decode(), record.timestamp)
                elif tp.topic == names.probes:
                    for item in json.loads(record.value):
                        seen["probe"].setdefault(str(item["id"]), record.timestamp)
                elif tp.topic == names.answers:
                    for item in json.loads(record.value):
                        if item.get("kind") == "answer":
                            event_id = str(item["id"])
                            seen["answer"][event_id] = max(seen["answer"].get(event_id, 0), record.timestamp)
                else:
                    seen["out"].setdefault(record.key.decode(), record.timestamp)
    consumer.close()
    return seen


def _quantiles(values: list[int] | list[float]) -> str:
    ordered = sorted(values)
    return f"p50 {ordered[len(ordered) // 2]:5.0f} ms  p99 {ordered[int(0.99 * (len(ordered) - 1))]:5.0f} ms"


def _batch_lines(log_text: str) -> list[str]:
    """The worker's input batches, from its ``log_batches`` lines, as report lines."""
    batches = [tuple(map(float, m.groups())) for m in _BATCH_LINE.finditer(log_text)]
    if not batches:
        return ["input batches                  none logged"]
    events = sum(b[0] for b in batches)
    return [
        f"input batches                  {len(batches)}, {events / len(batches):.1f} events each",
        f"  newest event's wait          {_quantiles([b[1] for b in batches])}  (input record -> batch start)",
        f"  oldest event's wait          {_quantiles([b[2] for b in batches])}",
        f"  the batch itself             {_quantiles([b[3] for b in batches])}"
        f"  ({sum(b[4] for b in batches) / events * 1000:.0f} us of CPU an event in it)",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=2000)
    parser.add_argument("--rate", type=float, default=200.0, help="events/s (0 = send as fast as possible)")
    parser.add_argument("--lateness-ms", type=int, default=20, help="NEARDUP_ALLOWED_LATENESS_MS of the worker")
    args = parser.parse_args()
    bootstrap = os.environ.get("NEARDUP_BOOTSTRAP", "127.0.0.1:9092")
    tmp = Path(os.environ.get("TMPDIR", "/tmp")) / "neardup-bench-stream"
    tmp.mkdir(parents=True, exist_ok=True)
    prefix = f"hops{uuid.uuid4().hex[:6]}"
    names, env = stream.fresh_topics(bootstrap, prefix, _PARTITIONS, tmp, args.lateness_ms)
    env["NEARDUP_LOG_BATCHES"] = "1"
    log = tmp / f"{prefix}.log"
    worker = stream._start([sys.executable, "-m", "worker.cli", "worker", "--name", "w0", "--loglevel", "info"], env, log)
    try:
        stream._wait_ready(log)
        stream.warm_up(bootstrap, names)
        warmed = log.stat().st_size
        cpu, wall = _cpu_seconds(worker.pid), time.time()
        result = stream._measure(bootstrap, names, stream._events(args.events), [names.unique, names.duplicates], args.rate or None)
        share = (_cpu_seconds(worker.pid) - cpu) / (time.time() - wall)
    finally:
        worker.send_signal(signal.SIGTERM)
        worker.wait(30)
    batch_lines = _batch_lines(log.read_bytes()[warmed:].decode(errors="replace"))
    floor = stream.run(bootstrap, args.events, _PARTITIONS, 1, True, tmp, args.lateness_ms, rate=args.rate or None)
    seen = _read_back(bootstrap, names)
    ids = [i for i in seen["out"] if not i.startswith(stream._WARMUP.decode()) and i in seen["in"]]
    print(f"{result['events']} events at {result['events_per_s']:.0f} events/s, worker CPU {share:.2f} of a core")
    hops = [
        ("input -> first probe message", "in", "probe"),
        ("probe -> last answer message", "probe", "answer"),
        ("answer -> verdict", "answer", "out"),
        ("input -> verdict", "in", "out"),
    ]
    for label, start, end in hops:
        spans = [seen[end][i] - seen[start][i] for i in ids if i in seen[start] and i in seen[end]]
        # One worker owns every partition and hands probes and answers on in-process: no hop messages.
        figures = _quantiles(spans) if spans else "no such messages (handed on in-process)"
        print(f"{label:<30} {figures}  ({len(spans)} events)")
    print("\n".join(batch_lines))
    print(f"passthrough agent, same input and rate (this run's floor): p50 {floor['p50_ms']:5.0f} ms  p99 {floor['p99_ms']:5.0f} ms")

if __name__ == "__main__":
    main()
