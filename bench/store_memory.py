"""A worker's index stores under a long stream: their memory, disk and write stalls together.

A worker owns one RocksDB store per index partition. Each store that sizes its own memtables
and write-ahead log lets a worker's memory and disk grow with the partitions it owns, and
stores written at one rate hit their bounds together, so that their flushes come at once.
Here the index stage's ``process`` and ``upkeep`` (the calls the worker makes, as in
``bench/stages.py``) take the dev stream of ``bench/stream.py`` replayed under fresh ids, in
batches of 500 from 4 input partitions into ``--partitions`` index stores, with event times
racing through ``--windows`` retention windows of the default settings, so that buckets
fill, expire and are purged as in a long stream. Fingerprints are computed once, before the
timed part; each batch's changelog record is encoded, as the worker's are. Every ``SAMPLE``
batches the process's RSS (counted from just before the stores open) and the stores' bytes
on disk (every file: SSTs, write-ahead logs, manifests) are sampled. It prints, for each
tree, the peak and final RSS and disk, each batch's wall time at the median, p99 and max (a
write that waits for a flush, or a flush that takes the box's cores, shows there) and the
CPU an event of all the process's threads (RocksDB's flushes and compactions count).

Settings come from the environment, as a worker's do (``NEARDUP_CACHE_MB=256``). With
``--before REV`` that revision's stores run in turn (``bench/baseline.py``); medians of
``--rounds`` fresh processes.

    python bench/store_memory.py --events 400000 --before HEAD~1
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if __package__ in (None, ""):
    sys.path.insert(0, os.environ.get("PYTHONPATH") or str(ROOT))

BATCH = 500
INPUTS = 4  # input partitions, as bench/stages.py
SAMPLE = 10  # batches between two samples of RSS and disk
START_S = 1_700_000_000.0
DAY_S = 86_400.0


def _status(field: str) -> int:
    """A ``/proc/self/status`` figure in bytes (VmRSS, VmHWM)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) << 10
    return 0


def _disk(root: Path) -> int:
    total = 0
    for folder, _, files in os.walk(root):
        for name in files:
            try:
                total += os.stat(os.path.join(folder, name)).st_size
            except FileNotFoundError:  # a file RocksDB deleted meanwhile
                pass
    return total


def _open_stores(settings: Any, state: Path, partitions: int) -> dict[int, Any]:
    """The index stores as the worker of the tree measured opens them."""
    from worker.state.partition import IndexPartition

    plan, retention = settings.block_plan, settings.retention_ms
    try:
        from worker.state.memory import SharedMemory
    except ImportError:  # a tree before the worker's shared budget: a cache and budgets a store
        return {p: IndexPartition(state / f"index-{p}", plan, retention, settings.cache_mb) for p in range(partitions)}
    memory = SharedMemory.of(settings.cache_mb, settings.memtable_mb)
    return {p: IndexPartition(state / f"index-{p}", plan, retention, memory=memory) for p in range(partitions)}


def _messages(lines: list[bytes], events: int, windows: int, retention_ms: int) -> list[Any]:
    """``events`` input records: ``lines`` replayed under fresh ids, times spread over ``windows``."""
    from bench.stages import _Message

    span_s = windows * retention_ms / 1000
    out = []
    for i in range(events):
        line = lines[i % len(lines)].replace(b'{"id": "', f'{{"id": "r{i // len(lines)}-'.encode(), 1)
        out.append(_Message(line, i // INPUTS, i % INPUTS, START_S + i * span_s / events))
    return out


def _batches(settings: Any, feed: Path, events: int, windows: int) -> list[Any]:
    """The fingerprint stage's output for every batch, each distinct text fingerprinted once."""
    from worker.engine.fingerprint import fingerprint_each, warm_up
    from worker.stream.fingerprint import FingerprintStage

    warm_up(settings)
    stage = FingerprintStage(settings)
    messages = _messages(feed.read_bytes().splitlines(), events, windows, settings.retention_ms)
    known: dict[str, Any] = {}
    batches = []
    for start in range(0, len(messages), BATCH):
        parsed = stage.parse(messages[start : start + BATCH])
        missing = [text for text in parsed.texts if text not in known]
        known.update(zip(missing, fingerprint_each(missing, settings), strict=True))
        batches.append(stage.fan_out_all(parsed, [known[text] for text in parsed.texts]))
    return batches


def _stages() -> Any:
    """This tree's ``bench/stages.py``, whatever tree the child's imports come from (it knows
    how each tree encodes its index changelog)."""
    spec = importlib.util.spec_from_file_location("_stages", Path(__file__).with_name("stages.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def child(feed: Path, state: Path, events: int, windows: int, partitions: int) -> dict[str, Any]:
    """One run in this process, on the store code importable here."""
    from topology.stages import Topics
    from worker.collector import settle
    from worker.settings import Settings
    from worker.stream.index import IndexStage

    encode_ops, _ = _stages()._changelog_codec()
    settings = Settings.from_env(partitions=partitions, topic_prefix="bench")  # NEARDUP_CACHE_MB and the like apply
    batches = _batches(settings, feed, events, windows)
    index = IndexStage(settings, Topics(settings.topic_prefix).events)
    settle()  # as the worker does; and the input made above stays out of the collector's passes
    base = _status("VmRSS")  # the process and its input, before any store opens
    stores = _open_stores(settings, state, partitions)
    walls, rss, disk = [], [], []
    cpu = time.process_time()
    for n, out in enumerate(batches):
        began = time.perf_counter()
        index.process(stores, {p: [out.message(p)] for p in out.shares})
        index.upkeep(list(stores.values()))
        for store in stores.values():  # the batch's changelog record, as the worker makes it
            encode_ops(store.take_ops())
        walls.append(time.perf_counter() - began)
        if n % SAMPLE == 0:
            rss.append(_status("VmRSS"))
            disk.append(_disk(state))
    cpu = time.process_time() - cpu
    # Each read once: RocksDB's background threads write files between two reads of the
    # disk, and an end read after the "peak" read came out larger than the peak.
    rss_end, disk_end = _status("VmRSS"), _disk(state)
    result = {
        "events": events,
        "rss_peak": max([*rss, rss_end]) - base,
        "rss_end": rss_end - base,
        "disk_peak": max([*disk, disk_end]),
        "disk_end": disk_end,
        "cpu_us": 1e6 * cpu / events,
        "p50_ms": 1e3 * statistics.median(walls),
        "p99_ms": 1e3 * statistics.quantiles(walls, n=100, method="inclusive")[98],
        "max_ms": 1e3 * max(walls),
        "over_1s": sum(w > 1.0 for w in walls),
    }
    for store in stores.values():
        store.close()
    return result


def _round(tree: Path, feed: Path, args: argparse.Namespace) -> dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=str(tree))
    with tempfile.TemporaryDirectory(prefix="neardup-memory-") as state:
        command = [sys.executable, str(Path(__file__).resolve()), "--child", state, "--input", str(feed)]
        command += ["--events", str(args.events), "--windows", str(args.windows), "--partitions", str(args.partitions)]
        out = subprocess.run(command, cwd=tree, env=env, check=True, capture_output=True, text=True).stdout
    result: dict[str, Any] = json.loads(out.splitlines()[-1])
    return result


COLUMNS = (
    ("rss_peak", "+RSS peak MiB", 2**-20),
    ("rss_end", "+RSS end", 2**-20),
    ("disk_peak", "disk peak MiB", 2**-20),
    ("disk_end", "disk end", 2**-20),
    ("p50_ms", "batch p50 ms", 1),
    ("p99_ms", "p99", 1),
    ("max_ms", "max", 1),
    ("over_1s", "over 1 s", 1),
    ("cpu_us", "CPU us/ev", 1),
)


def report(runs: dict[str, list[dict[str, Any]]]) -> list[str]:
    lines = [f"{'tree':<8}" + "".join(f"{title:>15}" for _, title, _ in COLUMNS)]
    medians = {}
    for tree, rounds in runs.items():
        medians[tree] = {key: statistics.median(r[key] for r in rounds) * scale for key, _, scale in COLUMNS}
        lines.append(f"{tree:<8}" + "".join(f"{medians[tree][key]:>15,.1f}" for key, _, _ in COLUMNS))
    first = next(iter(runs))
    for tree in list(runs)[1:]:
        this, that = medians[first], medians[tree]
        cells = "".join(f"{this[k] / that[k]:>15.2f}" if that[k] else f"{'':>15}" for k, _, _ in COLUMNS)
        lines.append(f"{'ratio':<8}{cells}   ({first} / {tree})")
    return lines


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--events", type=int, default=400_000)
    parser.add_argument("--windows", type=int, default=10, help="retention windows the events' times span")
    parser.add_argument("--partitions", type=int, default=4, help="index stores (the worker owns them all)")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--before", metavar="REV", help="also run that revision's stores, in turn")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--input", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child is not None:
        print(json.dumps(child(args.input, args.child, args.events, args.windows, args.partitions)))
        return
    from bench.stages import _lines

    trees = {"this": ROOT}
    if args.before:
        from bench.baseline import worktree

        trees["before"] = worktree(args.before)
    runs: dict[str, list[dict[str, Any]]] = {tree: [] for tree in trees}
    with tempfile.TemporaryDirectory(prefix="neardup-memory-feed-") as folder:
        feed = Path(folder) / "feed.jsonl"
        feed.write_bytes(b"\n".join(_lines("devset", 20_000)) + b"\n")
        for _ in range(args.rounds):
            for tree, path in trees.items():
                runs[tree].append(_round(path, feed, args))
    print(
        f"{args.events:,} events over {args.windows} windows, {args.partitions} index stores, "
        f"batches of {BATCH}; medians of {args.rounds}"
    )
    print("\n".join(report(runs)))


if __name__ == "__main__":
    main()
