"""What a probe costs when its story is already stored many times, next to one stored once.

Syndicated stories and reposts arrive in clusters: a wire story carried by dozens of outlets,
a post shared hundreds of times, the streaming bench's sample replayed under new ids. Each
stored copy shares every table key and both anchors of the next one, so a probe's candidate
list grows with the cluster. This measures the worker's per-partition read path (the block
tables of the probe, then its anchors' exact keys) against a :class:`worker.state.index.BlockIndex`
holding ``--background`` unrelated entries plus every story ``N`` times, for each ``N`` of
``--copies``; the baseline of the same run is the same probes when each story is stored once.

    python bench/reposts.py
    python bench/reposts.py --copies 1,10,100,1000 --stories 20

Medians over ``--reps`` passes over the stories' probes; every pass alternates the stores.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a file: make the repository root importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from worker.cli.inputs import default_sample
from worker.engine.blocks import parse_plan
from worker.engine.fingerprint import Fingerprint, fingerprint
from worker.engine.match import Entry
from worker.settings import Settings
from worker.state.index import BlockIndex

_DAY_MS = 86_400_000


def _stories(count: int, settings: Settings) -> list[Fingerprint]:
    """Fingerprints of the first ``count`` distinct texts of the shipped sample feed."""
    seen: dict[int, Fingerprint] = {}
    for line in Path(default_sample()).read_text(encoding="utf-8").splitlines():
        if line.strip():
            fp = fingerprint(json.loads(line)["text"], settings)
            if fp.exact is None:
                seen.setdefault(fp.simhash, fp)
    if len(seen) < count:
        raise SystemExit(f"the sample has only {len(seen)} distinct stories")
    return list(seen.values())[:count]


def _build(path: Path, settings: Settings, stories: list[Fingerprint], copies: int, background: int) -> BlockIndex:
    plan = parse_plan(settings.plan, settings.k, settings.expected_fingerprints)
    index = BlockIndex(path, plan, wal=False, retention_ms=int(settings.retention_days * _DAY_MS))
    rng = random.Random(7)
    now = int(time.time() * 1000)
    order = 0
    for i in range(background):
        index.add(Entry(f"bg{i}", rng.getrandbits(64), order, now, rng.randbytes(32)))
        order += 1
    for copy in range(copies):
        for s, fp in enumerate(stories):
            index.add(Entry(f"s{s}-{copy}", fp.simhash, order, now, fp.sketch), exact_keys=fp.anchors)
            order += 1
    return index


def _probe_us(index: BlockIndex, stories: list[Fingerprint], max_distance: int) -> float:
    """Mean microseconds of one story's read path in one pass over all stories."""
    started = time.perf_counter()
    for fp in stories:
        index.query(fp.simhash, max_distance)
        for key in fp.anchors:
            index.query_exact(key)
    return (time.perf_counter() - started) / len(stories) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--copies", default="1,3,10,30,100,300", help="comma-separated cluster sizes (1 = baseline)")
    parser.add_argument("--stories", type=int, default=50)
    parser.add_argument("--background", type=int, default=20_000, help="unrelated entries in every store")
    parser.add_argument("--reps", type=int, default=15)
    args = parser.parse_args()
    sizes = sorted({1, *(int(c) for c in args.copies.split(","))})
    settings = Settings()
    stories = _stories(args.stories, settings)
    root = Path(tempfile.mkdtemp(prefix="neardup-reposts-"))
    try:
        indexes = {n: _build(root / f"n{n}", settings, stories, n, args.background) for n in sizes}
        timings: dict[int, list[float]] = {n: [] for n in sizes}
        for _ in range(args.reps):
            for n in sizes:
                timings[n].append(_probe_us(indexes[n], stories, settings.max_distance))
        for index in indexes.values():
            index.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    base = statistics.median(timings[1])
    print(f"{args.stories} stories, {args.background} background entries, median of {args.reps} passes")
    print(f"{'copies stored':>14} {'us a probe':>11} {'x once':>7} {'us a copy':>10}")
    for n in sizes:
        median = statistics.median(timings[n])
        per_copy = f"{(median - base) / (n - 1):10.2f}" if n > 1 else f"{'':>10}"
        print(f"{n:>14} {median:11.1f} {median / base:7.1f} {per_copy}")


if __name__ == "__main__":
    main()
