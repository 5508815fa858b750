"""Disk and CPU of retention under an endless stream: what issue 27's "disk stays flat" asks.

The development set's events, replayed under fresh ids (as ``bench/scan_speed.py`` replays
them), are decided by the scan's decision (:class:`worker.cli.deduplicator.Deduplicator`,
chunks of 256 in one deferred write each, as ``neardup scan`` writes them) into one RocksDB
index, their event times spread evenly over ``--windows`` retention windows of the default
settings (7 days). At the end of each window it prints the store's bytes on disk as they
are (every file: what ``du`` sees), the bytes of its data files once flushed and fully
compacted (the live data) against the first window's, and the decision's CPU an event in
that window. The store's other files (RocksDB's info log, manifest, options) grow with every
bucket created and dropped, up to their bounds (``worker/state/index.py:BlockIndex._database_options``);
their size at the end is printed apart.

The same events into an index without retention, in the same run, are the baseline: a store
that keeps everything, and a decision that never expires anything. With ``--before REV`` the
retention run is also made on that revision's code (``bench/baseline.py``), in turn with this
tree's and the baseline's over ``--rounds`` rounds; medians.

    python bench/retention.py                      # 10 windows of 6,000 events
    python bench/retention.py --windows 10 --per-window 20000
    python bench/retention.py --rounds 3 --before HEAD~1

Fingerprints are computed once, by this tree, before every run (a replayed story has its first
copy's), so the CPU figures are the decision's and the index's alone; each run is a fresh
process (CPU time of all its threads: RocksDB's flushes and compactions count). Compaction at a
window's end is outside the CPU figures.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if __package__ in (None, ""):
    sys.path.insert(0, os.environ.get("PYTHONPATH") or str(ROOT))

from bench import devset  # noqa: E402
from bench.scan_speed import START_MS, STORIES  # noqa: E402
from topology.records import Event  # noqa: E402
from worker.cli.deduplicator import Deduplicator  # noqa: E402
from worker.cli.scan import SCAN_RECENT_ENTRIES  # noqa: E402
from worker.engine.fingerprint import Fingerprint, fingerprint_each  # noqa: E402
from worker.settings import Settings  # noqa: E402
from worker.state.index import BlockIndex  # noqa: E402

CHUNK = 256  # events in one deferred write, as worker/cli/scan.py's chunks


@dataclass
class Window:
    """What one window's end showed of one run."""

    disk: int  # bytes of every file, as they were
    data: int  # bytes of the SST files once flushed and compacted
    other: int  # bytes of the other files then (info log, manifest, options, WAL)
    cpu_us: float  # the decision's CPU an event in this window


def feed(windows: int, per_window: int, retention_ms: int) -> list[tuple[Event, Fingerprint]]:
    """The dev set's events replayed under fresh ids, times spread evenly over the windows."""
    stories, _ = devset.build(size=STORIES)
    prints = fingerprint_each([s["text"] for s in stories], Settings())
    total = windows * per_window
    out = []
    for n in range(total):
        story, probe = stories[n % len(stories)], prints[n % len(stories)]
        if isinstance(probe, str):
            continue  # a text without a fingerprint: neardup scan dead-letters it
        ts = START_MS + n * windows * retention_ms // total
        out.append((Event(f"r{n // len(stories)}-{story['id']}", story["text"], ts), probe))
    return out


def run(path: Path, events: list[tuple[Event, Fingerprint]], windows: int, retention_ms: int | None) -> list[Window]:
    """Decide ``events`` into a fresh index at ``path``; one :class:`Window` at each window's end."""
    settings = Settings()
    per_window = -(-len(events) // windows)
    out: list[Window] = []
    index = BlockIndex(
        path,
        settings.block_plan,
        retention_ms=retention_ms,
        cache_bytes=settings.cache_mb << 20,
        recent_entries=SCAN_RECENT_ENTRIES,
    )
    with index:
        dedup = Deduplicator(index, settings)
        for start in range(0, len(events), per_window):
            began = time.process_time()
            window = events[start : start + per_window]
            for at in range(0, len(window), CHUNK):
                with index.deferred():
                    for event, probe in window[at : at + CHUNK]:
                        dedup.decide(event, probe=probe)
            dedup.flush()
            cpu_us = (time.process_time() - began) / len(window) * 1e6
            disk = index.disk_bytes()
            index.compact()
            data = sum(f.stat().st_size for f in path.glob("*.sst"))
            out.append(Window(disk, data, index.disk_bytes() - data, cpu_us))
    return out


def child(events_file: Path, state: Path, windows: int, kept: bool) -> list[Window]:
    """One run in this process, on the code importable here (``--before``'s tree or this one)."""
    events = pickle.loads(events_file.read_bytes())
    return run(state, events, windows, Settings().retention_ms if kept else None)


def _round(tree: Path, events_file: Path, windows: int, kept: bool) -> list[Window]:
    """One run in a fresh process whose imports come from ``tree``."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    with tempfile.TemporaryDirectory(prefix="neardup-retention-") as state:
        command = [sys.executable, str(Path(__file__).resolve()), "--child", state, "--input", str(events_file)]
        command += ["--windows", str(windows)] + ([] if kept else ["--none"])
        out = subprocess.run(command, cwd=tree, env=env, check=True, capture_output=True, text=True).stdout
    return [Window(**w) for w in json.loads(out.splitlines()[-1])]


def _median(runs: list[list[Window]]) -> list[Window]:
    """Window by window, the median of each figure over the runs."""
    return [
        Window(*(statistics.median(getattr(w, f.name) for w in ws) for f in fields(Window)))
        for ws in zip(*runs, strict=True)
    ]


def report(runs: dict[str, list[Window]], per_window: int) -> list[str]:
    """One line a window: each run's bytes on disk as they were and its data compacted (MB,
    and the data against its first window's), and its CPU an event."""
    lines = [f"{'window':>6}" + "".join(f"{name + ': disk':>20}{'data':>7}{'x w1':>6}{'us/ev':>7}" for name in runs)]
    for n in range(len(next(iter(runs.values())))):
        cells = "".join(
            f"{w[n].disk / 1e6:>20.1f}{w[n].data / 1e6:>7.1f}{w[n].data / w[0].data:>6.2f}{w[n].cpu_us:>7.0f}"
            for w in runs.values()
        )
        lines.append(f"{n + 1:>6}{cells}")
    lines.append(f"(MB; {per_window:,} events a window; 'x w1': data against the run's first window's)")
    other = ", ".join(f"{name} {w[-1].other / 1e6:.1f} MB" for name, w in runs.items())
    lines.append(f"other files at the end (info log, manifest, options): {other}")
    return lines


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--windows", type=int, default=10)
    parser.add_argument("--per-window", type=int, default=6_000)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--before", metavar="REV", help="also run that revision's retention run, in turn")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--input", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--none", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child is not None:
        print(json.dumps([asdict(w) for w in child(args.input, args.child, args.windows, not args.none)]))
        return
    trees = {"this": ROOT}
    if args.before:
        from bench.baseline import worktree

        trees["before"] = worktree(args.before)
    runs: dict[str, list[list[Window]]] = {name: [] for name in (*trees, "none")}
    with tempfile.NamedTemporaryFile(prefix="neardup-retention-", suffix=".pickle") as events:
        made = feed(args.windows, args.per_window, Settings().retention_ms)
        events.write(pickle.dumps(made, pickle.HIGHEST_PROTOCOL))
        events.flush()
        plan = [(name, tree, True) for name, tree in trees.items()] + [("none", ROOT, False)]
        for number in range(args.rounds):
            for name, tree, kept in plan[:: -1 if number % 2 else 1]:  # each goes first in turn
                runs[name].append(_round(tree, Path(events.name), args.windows, kept))
    print(f"{len(made):,} dev-set events over {args.windows} windows of 7 days; medians of {args.rounds} rounds")
    labels = {"this": "7 d", "before": "7 d, before", "none": "none"}
    print("\n".join(report({labels[name]: _median(r) for name, r in runs.items()}, args.per_window)))


if __name__ == "__main__":
    main()
