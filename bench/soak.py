"""One worker on a broker at a steady rate for minutes, event time racing: its memory, state and latency over time.

``bench/store_memory.py`` measures the index stores alone; this runs the whole worker
(``bench/stream.py``'s set-up: fresh topics, one worker process, 4 partitions) while the dev
stream, replayed under fresh ids, is sent at ``--rate`` with its event times spread over
``--days`` (70: ten windows of the default retention), so that time buckets fill, expire and
are purged while the worker's memtables and logs fill. Every ``SAMPLE_S`` seconds the worker
process's RSS, its memory by kind (its ``/metrics``: RocksDB's memtables and block cache, the C
heap's bytes in use and free) and the bytes of its stores on disk (in all, then index and
verdict stores apart) are sampled; at the end every verdict's latency (input record to output record) is
read back and its p99 given for each 30 s of input, where a stall shows, with the worker's
own counts of corrections and of events decided late. With ``--before REV`` that revision's
worker runs in turn. A late event is not indexed, so the bench fails when there is any: a
stream that does not fit its warm-up once left every event late, and the index idle.

    NEARDUP_BOOTSTRAP=127.0.0.1:29092 python bench/soak.py --events 360000 --rate 600 --before HEAD~1
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if __package__ in (None, ""):
    sys.path.insert(0, str(ROOT))

from bench import devset, stream  # noqa: E402

SAMPLE_S = 15.0
WINDOW_MS = 30_000  # latency p99 is given for each this much of input


def _events(count: int, days: float) -> list[tuple[bytes, bytes]]:
    """``count`` events of the dev stream replayed under fresh ids, times spread over ``days``."""
    base = stream._events(20_000)
    out = []
    for i in range(count):
        event = json.loads(base[i % len(base)][1])
        event["id"] = f"r{i // len(base)}-{event['id']}"
        event["ts"] = devset.EPOCH_MS + int(i * days * 86_400_000 / count)
        out.append((event["id"].encode(), json.dumps(event, ensure_ascii=False).encode()))
    return out


KINDS = ("index", "verdict")  # a worker's stores, under <state>/stores/<kind>/<partition>


def _stores_bytes(root: Path) -> dict[str, int]:
    """Bytes on disk of the stores under ``root``, by kind: which of them grows."""
    sizes = dict.fromkeys(KINDS, 0)
    for f in root.rglob("*"):
        if "stores" in f.parts and f.is_file():
            kind = f.parts[f.parts.index("stores") + 1]
            sizes[kind] = sizes.get(kind, 0) + f.stat().st_size
    return sizes


# The worker's memory by kind, from its /metrics: what RocksDB holds, and the C heap's in use and free.
_MEMORY = re.compile(r'^neardup_(?:store|process)_memory_bytes\{kind="(\w+)"\} (\S+)$', re.M)
MEMORY_KINDS = {
    "memtables": "memtables",
    "block_cache": "block cache",
    "heap_in_use": "C heap in use",
    "heap_free": "C heap free",
}


def _memory(url: str) -> dict[str, int]:
    """The worker's memory gauges by kind (none from a worker of a tree before them)."""
    try:
        with urllib.request.urlopen(url + "/metrics", timeout=5) as response:
            text = response.read().decode()
    except OSError:
        return {}
    return {kind: int(float(value)) for kind, value in _MEMORY.findall(text)}


def run(bootstrap: str, tree: Path, events: list[tuple[bytes, bytes]], rate: float) -> dict[str, Any]:
    """One worker of ``tree`` through ``events`` at ``rate``: its samples and latencies."""
    tmp = stream.scratch_dir()
    samples: list[tuple[float, int, dict[str, int], dict[str, int]]] = []  # since the first send, RSS, disk, memory
    warm = stream.warm_events_at(devset.EPOCH_MS)  # the index's newest event: where the stream's times begin
    urls: list[str] = []
    with stream.running(bootstrap, 4, 1, stream.NEARDUP, tmp, 20, warm, tree=tree, web_urls=urls) as names:
        worker = stream.children()[0]
        stop = threading.Event()

        def sample() -> None:
            began = time.monotonic()
            while not stop.is_set():
                rss = stream.rss_kib(worker) << 10
                samples.append((time.monotonic() - began, rss, _stores_bytes(tmp), _memory(urls[0])))
                stop.wait(SAMPLE_S)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        stream.produce(bootstrap, names.events, events, rate)
        outputs = [names.unique, names.duplicates]
        stream.wait_quiet(bootstrap, outputs)
        stop.set()
        sampler.join()
        inputs, outs = stream.read_times(bootstrap, names.events, outputs, len(events))
    latency = sorted((inputs[k], outs[k] - inputs[k]) for k in outs if k in inputs)
    return {"samples": samples, "latency": latency, **_run_counts(tmp / f"{names.prefix}-0.log")}


def _run_counts(log: Path) -> dict[str, int]:
    """The worker's own counts of its run (the line it prints when it stops): corrections it
    published, and events it decided late, which the index did not store."""
    lines = [line for line in log.read_text(errors="replace").splitlines() if "this run:" in line]
    found = re.search(r"corrections (\d+), late (\d+)", lines[-1]) if lines else None
    if found is None:
        raise RuntimeError(f"no summary line in {log}")
    return {"corrections": int(found.group(1)), "late": int(found.group(2))}


def report(name: str, result: dict[str, Any]) -> list[str]:
    samples, latency = result["samples"], result["latency"]
    every = sorted(ms for _, ms in latency)
    first = latency[0][0]
    windows: dict[int, list[int]] = {}
    for ts, ms in latency:
        windows.setdefault((ts - first) // WINDOW_MS, []).append(ms)
    p99s = [stream.percentile(sorted(ms), 0.99) for _, ms in sorted(windows.items())]
    mib = 1 << 20
    return [
        f"{name}: {len(every):,} verdicts, latency p50 {stream.percentile(every, 0.5):.0f} ms, "
        f"p99 {stream.percentile(every, 0.99):.0f} ms, max {every[-1]:.0f} ms; "
        f"corrections {result['corrections']}, late {result['late']}",
        f"  p99 each {WINDOW_MS // 1000} s of input (ms): " + " ".join(f"{p:.0f}" for p in p99s),
        f"  worker RSS (MiB) each {SAMPLE_S:.0f} s: " + " ".join(f"{s[1] / mib:.0f}" for s in samples),
        *(
            f"    {label}: " + " ".join(f"{s[3].get(kind, 0) / mib:.0f}" for s in samples)
            for kind, label in MEMORY_KINDS.items()
            if any(kind in s[3] for s in samples)
        ),
        f"  stores on disk (MiB) each {SAMPLE_S:.0f} s: "
        + " ".join(f"{sum(s[2].values()) / mib:.0f}" for s in samples),
        *(f"    {kind} stores: " + " ".join(f"{s[2].get(kind, 0) / mib:.0f}" for s in samples) for kind in KINDS),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--events", type=int, default=360_000)
    parser.add_argument("--rate", type=float, default=600.0, help="events/s")
    parser.add_argument("--days", type=float, default=70.0, help="event times spread over this many days")
    parser.add_argument("--before", metavar="REV", help="also run that revision's worker, in turn")
    args = parser.parse_args()
    bootstrap = os.environ.get("NEARDUP_BOOTSTRAP", "127.0.0.1:9092")
    trees = {"this": ROOT}
    if args.before:
        from bench.baseline import worktree

        trees["before"] = worktree(args.before)
    events = _events(args.events, args.days)
    print(f"{args.events:,} events at {args.rate:g}/s, event times over {args.days:g} days, one worker, 4 partitions")
    late = 0
    for name, tree in trees.items():
        result = run(bootstrap, tree, events, args.rate)
        print("\n".join(report(name, result)), flush=True)
        late += result["late"]
    if late:  # the index stored none of those: what was measured is not a worker under load
        sys.exit(f"{late} events decided late (not indexed): the stream's event times do not fit its warm-up")


if __name__ == "__main__":
    main()
