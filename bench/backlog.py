"""Corrections one worker publishes catching up on a backlog: this tree against ``--before REV``.

Run against a broker (``NEARDUP_BOOTSTRAP``, e.g. ``KAFKA_PORT=29092 scripts/kafka-local start``)::

    python -m bench.backlog --events 20000 --rounds 3 --before REV

Each round, for each tree in turn: fresh topics with the whole input produced first (a worker
that was down while its feed went on), then one worker started on it. Printed per run: the
seconds from the worker's start (dictionaries and stores loaded) to its last first verdict, and
the corrections it published by a second later; then the medians. Where bench/stream.py's max
run sends while its worker reads, nothing is sent here once the worker starts. A worker that
reads a backlog in the total order, as ``neardup scan`` reads a file, publishes none.

Input: the dev-set stream (bench/stream.py's ``devset`` feed), another seed each round, sent
in steps of 20 records a few milliseconds apart so that append times spread as a feed's do.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import uuid
from pathlib import Path

from kafka import KafkaProducer

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench import stream  # noqa: E402
from bench.baseline import worktree  # noqa: E402

_STEP = 20  # records sent between pauses
_PAUSE_S = 0.005


def drain(
    bootstrap: str, tree: Path, count: int, seed: int, partitions: int, lateness_ms: int
) -> tuple[int, float, int]:
    """One run: a backlog of ``count`` events (or as many as the dev set gives), then one worker
    of ``tree``; returns the events, the seconds it took to give every first verdict, and the
    corrections it published."""
    tmp = stream.scratch_dir()
    prefix = f"backlog{uuid.uuid4().hex[:6]}"
    names, env = stream.fresh_topics(bootstrap, prefix, partitions, tmp, lateness_ms)
    events = stream._events(count, seed=seed)
    out = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=5)
    try:
        for i, (key, value) in enumerate(events):
            out.send(names.events, key=key, value=value)
            if i % _STEP == _STEP - 1:
                out.flush()
                time.sleep(_PAUSE_S)
        out.flush()
    finally:
        out.close()
    log = tmp / f"{prefix}.log"
    cmd = [sys.executable, "-m", "worker.cli.main", "worker", "--name", "w0", "--loglevel", "info"]
    started = time.time()
    worker = stream._start(cmd, env, log, tree)
    try:
        stream._wait_ready(log)
        _, output_ts = stream.read_times(bootstrap, names.events, [names.unique, names.duplicates], len(events))
        if len(output_ts) < len(events):
            raise RuntimeError(f"{len(output_ts)} of {len(events)} verdicts: see {log}")
        time.sleep(1.0)
        seconds = max(output_ts.values()) / 1000 - started
        return len(events), seconds, stream.count_corrections(bootstrap, names.corrections)
    finally:
        stream.stop_processes([worker])
        stream.drop_run(bootstrap, prefix, tmp)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=20000, help="events a backlog (the dev set may stop short)")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each tree, taking turns")
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--lateness-ms", type=int, default=20, help="NEARDUP_ALLOWED_LATENESS_MS of the worker")
    parser.add_argument("--before", metavar="REV", help="also run one worker of this git revision, in turn")
    args = parser.parse_args()
    bootstrap = os.environ.get("NEARDUP_BOOTSTRAP", "127.0.0.1:9092")
    trees = {"this tree": REPO, **({"before": worktree(args.before)} if args.before else {})}
    print(f"{args.partitions} partitions, allowed_lateness_ms {args.lateness_ms}", flush=True)
    runs: dict[str, list[tuple[float, int]]] = {label: [] for label in trees}
    for round_ in range(args.rounds):
        for label, tree in trees.items():
            count, seconds, corrections = drain(
                bootstrap, tree, args.events, 101 + round_, args.partitions, args.lateness_ms
            )
            runs[label].append((seconds, corrections))
            print(
                f"round {round_ + 1} {label:<10} {count} events drained in {seconds:5.1f} s, corrections {corrections}",
                flush=True,
            )
    for label, results in runs.items():
        print(
            f"{label:<10} median: drained in {statistics.median(s for s, _ in results):5.1f} s,"
            f" corrections {statistics.median(c for _, c in results):g}"
            f" ({json.dumps([c for _, c in results])})"
        )


if __name__ == "__main__":
    main()
