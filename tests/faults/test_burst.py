"""Ten times the sustained rate for eight seconds: the lag grows, drains, and memory stays bounded."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from bench.stream import rss_kib
from tests.faults.deployment import make_deployment
from tests.stream_helpers import OutputReader, WorkerProcess, audit, ids_of, producer, real_feed

pytestmark = pytest.mark.kafka

# Sustained events/s: well under what one worker decides on this box, while ten times it is
# well over (one worker kept up with the old 1000/s burst once 8986322 and ea95571 sped it
# up, and the test stopped building a backlog).
RATE = 300.0
PHASES = [(8.0, RATE), (8.0, 10 * RATE), (12.0, RATE)]  # (seconds, events/s)
# The backlog of a burst waits in Kafka, not in the worker: each stage holds one batch
# (500 events, or 32 internal messages of at most 512 KiB) and Faust buffers a bounded number
# of fetched messages per partition. What does grow is the RocksDB memtables, with every event
# stored (up to their budget, worker/state/index.py): 8 s and 16 s bursts at 3000/s grew the RSS by
# 100 and 170 MiB over the resting size, about 3.5 KiB per event stored after it either way,
# not with the backlog. Bounds: 192 MiB over the resting RSS (measured after the sustained
# phase, once the jieba dictionary and caches are loaded) for the 27 600 events stored after
# it, 512 MiB in all (this run's figures are in docs/reliability.md).
RSS_GROWTH_BOUND_KIB = 192 * 1024
RSS_BOUND_KIB = 512 * 1024
# What the test checks is that the lag drains; this only ends a run whose worker never does.
# The drain takes 100-150 s (the worker's pace on this feed, bench/quotes.py), and under
# `make test` a second test process shares the two cores.
NEVER_DRAINS_S = 300


def _send(bootstrap: str, topic: str, lines: list[bytes], sent: list[int]) -> None:
    import json

    with producer(bootstrap) as made:
        i = 0
        for seconds, rate in PHASES:
            began = time.perf_counter()
            for n in range(int(seconds * rate)):
                ahead = n / rate - (time.perf_counter() - began)
                if ahead > 0:
                    time.sleep(ahead)
                made.send(topic, key=json.loads(lines[i])["id"].encode(), value=lines[i])
                i += 1
                sent[0] = i


def test_a_burst_of_ten_times_the_rate_drains_with_bounded_memory(kafka_bootstrap: str, tmp_path: Path) -> None:
    dep = make_deployment(kafka_bootstrap, tmp_path, partitions=2)
    total = sum(int(s * r) for s, r in PHASES)
    lines = real_feed(total, "burst", seed=13)
    reader = OutputReader(kafka_bootstrap, dep.names)
    worker = WorkerProcess.start(dep.env, "steady", tmp_path)
    sent = [0]
    samples: list[tuple[float, int]] = []  # (seconds since start, lag in events)
    try:
        worker.wait_ready()
        rss_ready = rss_kib(worker.proc.pid)
        rss_rest = 0
        sender = threading.Thread(target=_send, args=(kafka_bootstrap, dep.names.events, lines, sent))
        began = time.monotonic()
        sender.start()
        while sender.is_alive() or len(reader.verdicted) < total:
            assert worker.alive(), worker.cli.tail()
            assert time.monotonic() - began < NEVER_DRAINS_S, f"{total - len(reader.verdicted)} events still undecided"
            reader.poll(250)
            now = time.monotonic() - began
            samples.append((now, sent[0] - len(reader.verdicted)))
            if now < PHASES[0][0]:
                rss_rest = rss_kib(worker.proc.pid)
        sender.join()
        reader.settle(1.0)
        peak_rss = worker.peak_rss_kib()
        result = audit(reader.records, dep.names, ids_of(lines))
    finally:
        worker.stop()
        reader.close()
    burst_start, burst_end = PHASES[0][0], PHASES[0][0] + PHASES[1][0]
    before = max(lag for t, lag in samples if t < burst_start)
    peak_t, peak = max(samples, key=lambda s: s[1])
    drained = next(t for t, lag in samples if t > peak_t and lag <= before)
    print(
        f"burst {PHASES[1][1]:.0f}/s for {PHASES[1][0]:.0f} s over {RATE:.0f}/s: lag before {before}, "
        f"peak {peak} events at {peak_t:.1f} s, back to {before} at {drained:.1f} s "
        f"({drained - burst_end:.1f} s after the burst); peak RSS {peak_rss / 1024:.0f} MiB "
        f"(ready {rss_ready / 1024:.0f} MiB, before the burst {rss_rest / 1024:.0f} MiB); {result.repeats} repeats"
    )
    assert peak > 2 * RATE, "the burst never built a backlog: the test did not stress the worker"
    assert peak > 3 * max(before, 1)
    assert drained < samples[-1][0] + 1
    assert peak_rss - rss_rest < RSS_GROWTH_BOUND_KIB, (peak_rss, rss_rest)
    assert peak_rss < RSS_BOUND_KIB, peak_rss
