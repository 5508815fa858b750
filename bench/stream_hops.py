"""Where one worker's latency goes, and the worker's CPU, at a steady load.

Run against a broker (``NEARDUP_BOOTSTRAP``), e.g.::

    python bench/stream_hops.py --events 2000 --rate 200

Starts one worker on fresh topics, warms it up, sends ``--events`` at ``--rate`` events/s
(``--rate 0``: a backlog) and reports, at the median and p99, the time from the input
record's append to its verdict, plus the share of one core the worker used meanwhile. One
worker owns every partition, so its probes and answers never cross Kafka (they go to the
next stage in-process); instead the worker logs each input batch (``NEARDUP_LOG_BATCHES``),
and the bench splits the latency into the wait before an event's batch starts (fetch,
window, the batch still running) and the batch itself — fingerprint to verdict, but not the
lateness hold of a held verdict — with the CPU our code spent per event in it.
(bench/stream.py gives the end-to-end figures next to the passthrough baseline; this one
explains them.) The passthrough agent of bench/stream.py then gets the same input at the
same rate, as the floor measured in the same run.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import stream  # noqa: E402

_PARTITIONS = 4
_BATCH_LINE = re.compile(r"batch: (\d+) events, waited ([\d.]+)-([\d.]+) ms, took ([\d.]+) ms, ([\d.]+) ms CPU")


def _quantiles(values: list[float]) -> str:
    ordered = sorted(values)
    return f"p50 {stream.percentile(ordered, 0.5):5.0f} ms  p99 {stream.percentile(ordered, 0.99):5.0f} ms"


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
    parser.add_argument("--feed", choices=stream.FEEDS, default="devset", help="the input (see bench/stream.py)")
    args = parser.parse_args()
    bootstrap = os.environ.get("NEARDUP_BOOTSTRAP", "127.0.0.1:9092")
    tmp = stream.scratch_dir()
    prefix = f"hops{uuid.uuid4().hex[:6]}"
    names, env = stream.fresh_topics(bootstrap, prefix, _PARTITIONS, tmp, args.lateness_ms)
    env["NEARDUP_LOG_BATCHES"] = "1"
    log = tmp / f"{prefix}.log"
    worker = stream._start(
        [sys.executable, "-m", "worker.cli.main", "worker", "--name", "w0", "--loglevel", "info"], env, log
    )
    try:
        stream._wait_ready(log)
        stream.warm_up(bootstrap, names)
        warmed = log.stat().st_size
        cpu, wall = stream.cpu_seconds([worker.pid]), time.time()
        result = stream._measure(
            bootstrap,
            names,
            stream._events(args.events, feed=args.feed),
            [names.unique, names.duplicates],
            args.rate or None,
        )
        share = (stream.cpu_seconds([worker.pid]) - cpu) / (time.time() - wall)
    finally:
        worker.send_signal(signal.SIGTERM)
        worker.wait(30)
        stream.drop_run(bootstrap, prefix, tmp)
    batch_lines = _batch_lines(log.read_bytes()[warmed:].decode(errors="replace"))
    floor = stream.run(
        bootstrap, args.events, _PARTITIONS, 1, True, tmp, args.lateness_ms, rate=args.rate or None, feed=args.feed
    )
    print(f"{result['events']} events at {result['events_per_s']:.0f} events/s, worker CPU {share:.2f} of a core")
    print(f"input -> verdict               p50 {result['p50_ms']:5.0f} ms  p99 {result['p99_ms']:5.0f} ms")
    print("\n".join(batch_lines))
    print(
        f"passthrough agent, same input and rate (this run's floor): p50 {floor['p50_ms']:5.0f} ms  p99 {floor['p99_ms']:5.0f} ms"
    )


if __name__ == "__main__":
    main()
