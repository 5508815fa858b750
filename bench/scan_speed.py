"""``neardup scan`` whole-process time against the textbook script and the tree before, in one run.

The feed is the development set (real Chinese and English text, its copies and hard
negatives) at up to ``STORIES`` events, all its text gives; a longer feed replays it under
fresh ids, so at 200 k each event comes back about 8 times, 3 of them within the window. Event
times are spread evenly over 18 days, so that with the default 7-day retention buckets fill,
expire and are purged as they do in a long feed. (A story stored many times over is
``bench/reposts.py``'s case.) Each
command is one process, timed from start to exit (imports, set-up and output included), in
turn round by round; medians are reported with each one's ratio to the textbook script, and
its CPU (user and system, its helper process's included) and the cores that makes on average.
The last line says how fast this tree's scan could be on this box's cores were all its CPU
overlapped: what a ratio to the textbook needs of the CPU, whatever the parallelism:

- ``neardup scan`` of this tree, as a user runs it: its index in a temporary directory,
  deleted at the end, as the textbook script keeps its tables in memory;
- ``neardup scan`` of ``--baseline`` (default: the parent of the commit that introduced
  index layout 2), from a ``git worktree`` with the native extension of its own source
  (``bench/baseline.py``);
- ``scan --state``: the same two with the index kept in a directory for the next run (its
  WAL synced every 1,000 events, its memtables flushed when it closes);
- ``bench/textbook.py`` (jieba, term frequencies, mmh3, four 16-bit tables in memory).

    python bench/scan_speed.py                 # 20 000 events, 3 rounds
    python bench/scan_speed.py --sizes 20000,200000 --rounds 1
    python bench/scan_speed.py --stories 3000       # each story ~7 times over: reposts
    python bench/scan_speed.py --feed alerts --sizes 2000,8000   # one template, other numbers
    python bench/scan_speed.py --feed reports --sizes 20000      # a long one

The ``alerts`` feed is a monitoring template written here ("ALERT: disk usage on web-068
reached 98% at 14:54 UTC, threshold 80%"), hosts, kinds and numbers drawn: every event shares
most of its keys with the events before it, which is what a probe's cost must not grow with.
The ``reports`` feed is the same for a long template (a daily operations report of eight
numbers, 390 characters): stored in the block tables and under its story's word bands, where
the alerts are short texts' keys.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if __package__ in (None, ""):
    sys.path.insert(0, str(ROOT))

from bench import devset  # noqa: E402
from bench.baseline import worktree  # noqa: E402
from bench.index_layout import _baseline_rev  # noqa: E402

SPAN_MS = 18 * 86_400_000
START_MS = 1_790_000_000_000


# Each command's output file (``<name>.jsonl`` in the run's work directory).
OUTPUTS = {
    "neardup scan": "current",
    "neardup scan, before": "before",
    "scan --state": "current-state",
    "scan --state, before": "before-state",
    "textbook": "textbook",
}
STORIES = 24_000  # about all the events the development set's sources give


def write_feed(path: Path, total: int, stories: int = STORIES) -> None:
    events, _ = devset.build(size=min(total, stories))
    with path.open("w", encoding="utf-8") as out:
        for n in range(total):
            event = events[n % len(events)]
            record = {"id": f"r{n // len(events)}-{event['id']}", "text": event["text"]}
            record["ts"] = START_MS + n * SPAN_MS // total
            out.write(json.dumps(record, ensure_ascii=False) + "\n")


def write_alerts(path: Path, total: int) -> None:
    rng = random.Random(total)
    kinds = ("disk usage", "memory usage", "cpu load", "error rate")
    with path.open("w", encoding="utf-8") as out:
        for n in range(total):
            host, kind, level, minute = rng.randrange(400), rng.choice(kinds), rng.randint(80, 99), rng.randrange(60)
            text = f"ALERT: {kind} on web-{host:03d} reached {level}% at 14:{minute:02d} UTC, threshold 80%"
            out.write(json.dumps({"id": f"a{n}", "text": text, "ts": START_MS + n * SPAN_MS // total}) + "\n")


def write_reports(path: Path, total: int) -> None:
    rng = random.Random(total)
    with path.open("w", encoding="utf-8") as out:
        for n in range(total):
            v = [rng.randint(10, 999) for _ in range(8)]
            text = (
                f"Daily operations report for cluster {v[0]}. Requests served: {v[1]} thousand, errors: {v[2]}, "
                f"median latency {v[3]} ms, p99 latency {v[4]} ms. Disk usage grew by {v[5]} GB and memory "
                f"peaked at {v[6]} GB across all nodes. The on-call engineer acknowledged {v[7]} pages and no "
                "incident was declared. Capacity planning notes: no action needed this week, the next review "
                "is scheduled with the platform team."
            )
            out.write(json.dumps({"id": f"r{n}", "text": text, "ts": START_MS + n * SPAN_MS // total}) + "\n")


TEMPLATES = {"alerts": write_alerts, "reports": write_reports}


def _template_verdicts(feed: Path, work: Path) -> str:
    """Each command's duplicates of the last round on a template feed, and how many of them name
    an event of another text (other names or numbers)."""
    text = {e["id"]: e["text"] for e in map(json.loads, feed.read_text("utf-8").splitlines())}
    lines = []
    for name, out in OUTPUTS.items():
        rows = [json.loads(line) for line in (work / f"{out}.jsonl").read_text("utf-8").splitlines()]
        dups = [r for r in rows if r.get("duplicate_of")]
        other = sum(text[r["id"]] != text[r["duplicate_of"]] for r in dups)
        lines.append(f"{name:<22}{len(dups):>6} duplicates, {other} of them of another event's text")
    return "\n".join(lines)


def timed(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Seconds of one process, run from its tree (``python -m`` puts the working directory first),
    and the CPU seconds it and its helper process used (user and system)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    cwd = env.get("PYTHONPATH", str(ROOT))
    subprocess.run(command, env=env, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def _floor(cpu: float, textbook: float) -> str:
    """What the scan's CPU allows on this box's cores: the scan decides on one of them and
    fingerprints ahead on another, so it can end no sooner than its CPU shared by all of them."""
    cores = os.cpu_count() or 1
    least = cpu / cores
    return (
        f"neardup scan on {cores} cores, were all its CPU overlapped: {least:.2f} s, {textbook / least:.2f}x textbook"
    )


def commands(feed: Path, work: Path, baseline: Path) -> dict[str, tuple[list[str], dict[str, str]]]:
    def scan(tree: Path, name: str, kept: bool) -> tuple[list[str], dict[str, str]]:
        command = [sys.executable, "-m", "worker.cli.main", "scan", str(feed), "-o", str(work / f"{name}.jsonl")]
        if kept:
            state = work / f"state-{name}"
            shutil.rmtree(state, ignore_errors=True)
            command += ["--state", str(state)]
        return command, {**os.environ, "PYTHONPATH": str(tree)}

    textbook = [
        sys.executable,
        str(ROOT / "bench" / "textbook.py"),
        str(feed),
        str(work / f"{OUTPUTS['textbook']}.jsonl"),
    ]
    return {
        "neardup scan": scan(ROOT, OUTPUTS["neardup scan"], kept=False),
        "neardup scan, before": scan(baseline, OUTPUTS["neardup scan, before"], kept=False),
        "scan --state": scan(ROOT, OUTPUTS["scan --state"], kept=True),
        "scan --state, before": scan(baseline, OUTPUTS["scan --state, before"], kept=True),
        "textbook": (textbook, dict(os.environ)),
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="20000", help="comma-separated event counts")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--baseline", default=None, help="git revision of the tree before")
    parser.add_argument(
        "--feed", choices=("dev", *TEMPLATES), default="dev", help="dev-set replay, or one template's events"
    )
    parser.add_argument(
        "--stories", type=int, default=STORIES, help="dev-set events replayed (3000: each story many times over)"
    )
    args = parser.parse_args(argv)
    rev = args.baseline or _baseline_rev()
    baseline = worktree(rev)
    print(f"before: {rev}")
    with tempfile.TemporaryDirectory(prefix="neardup-scan-speed-") as tmp:
        work = Path(tmp)
        for size in (int(s) for s in args.sizes.split(",")):
            feed = work / f"feed-{size}.jsonl"
            if args.feed in TEMPLATES:
                TEMPLATES[args.feed](feed, size)
            else:
                write_feed(feed, size, args.stories)
            seconds: dict[str, list[float]] = {}
            cpu: dict[str, list[float]] = {}
            for _ in range(args.rounds):
                for name, (command, env) in commands(feed, work, baseline).items():
                    wall, used = timed(command, env)
                    seconds.setdefault(name, []).append(wall)
                    cpu.setdefault(name, []).append(used)
            textbook = statistics.median(seconds["textbook"])
            replays = f"{min(size, args.stories):,} dev-set events replayed" if args.feed == "dev" else args.feed
            print(f"\n{size:,} events over 18 days ({replays}), median of {args.rounds} whole-process runs")
            print(f"{'command':<22}{'seconds':>10}{'docs/s':>10}{'x textbook':>12}{'CPU s':>10}{'cores':>8}")
            for name, runs in seconds.items():
                median, used = statistics.median(runs), statistics.median(cpu[name])
                line = f"{name:<22}{median:>10.2f}{size / median:>10,.0f}{textbook / median:>12.2f}"
                print(f"{line}{used:>10.2f}{used / median:>8.2f}")
            print(_floor(statistics.median(cpu["neardup scan"]), textbook))
            if args.feed in TEMPLATES:
                print(_template_verdicts(feed, work))


if __name__ == "__main__":
    main()
