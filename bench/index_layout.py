"""The block index's layout against the one before it, in one run: what a probe costs with retention.

Each layout builds an index of N events spread over one retention window (7 days, 8 time
buckets, all of them live: the probe's worst case), one ``add`` an event with its two anchors
(and with ``--word-bands N``, N more keys, as a story's word bands) as exact keys, as
``neardup scan`` stores them: 64-bit hashes, as the engine makes every exact key (the store
takes up to 128 bits, and random ones of that width cost bytes no real key does). Then 2,000
probes, half near duplicates of a stored event (0-3 bits flipped, its keys) and half random,
each a ``query`` of every table at k = 3 plus a ``query_exact`` of each key. Reported per
layout, medians over rounds:

- seeks a probe, and keys read by multi-gets (the entries a probe's rows name, and since
  layout 4 its exact keys), from RocksDB's own statistics;
- probe p50/p99 with a *warm* block cache (the probes' second pass) and a *cold* one (the
  index reopened with a new block cache after the OS page cache was dropped, when this
  process may write ``/proc/sys/vm/drop_caches``, i.e. as root; else the files may still
  be in the page cache, and the report says so);
- inserts/s (one ``add`` an event) and bytes a stored event on disk after a full compaction.

``--cache-mb`` then reopens the current layout with each block cache size, cold and warm,
to choose the default by measurement.

The previous layout runs from a ``git worktree`` of ``--baseline`` (default: the parent of the
commit that introduced layout 2), each layout in its own process, alternated round by round.

    python bench/index_layout.py                      # 1 M events, 3 rounds
    python bench/index_layout.py --sizes 1000000,10000000 --rounds 1
    python bench/index_layout.py --sizes 10000000 --rounds 1 --cache-mb 16,64,256,1024
    python bench/index_layout.py --sizes 1000000 --rounds 1 --word-bands 8
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DAY_MS = 86_400_000
RETENTION_MS = 7 * DAY_MS
PROBES = 2000
SEEKS = "rocksdb.number.db.seek"
MULTIGET_KEYS = "rocksdb.number.multiget.keys.read"  # layout 4 reads a probe's exact keys in one multi-get


# ------------------------------------------------------------------ one layout, in its own process
def _child(
    tree: Path, size: int, workdir: Path, seed: int, cache_mb: Sequence[int] = (), word_bands: int = 0
) -> dict[str, Any]:
    """Build, probe and measure one layout: the ``worker`` package is imported from ``tree``."""
    sys.path.insert(0, str(tree))
    from worker.engine.blocks import plan_for
    from worker.engine.match import Entry
    from worker.state.buckets import TimeBuckets
    from worker.state.index import BlockIndex

    options: list[Any] = []
    plain = TimeBuckets._options

    def counted(self: Any, name: str) -> Any:  # both layouts open their DB with _options("default")
        opts = plain(self, name)
        if name == "default":
            opts.enable_statistics()
            options.append(opts)
        return opts

    TimeBuckets._options = counted  # type: ignore[method-assign]
    plan = plan_for(k=3, expected=10_000_000)
    rng = random.Random(seed)
    path = workdir / "index"
    fps = [rng.getrandbits(64) for _ in range(size)]
    keys = [tuple(rng.getrandbits(64) for _ in range(2 + word_bands)) for _ in range(size)]
    step = RETENTION_MS // size
    index = BlockIndex(path, plan, wal=False, retention_ms=RETENTION_MS)
    began = time.perf_counter()
    for i in range(size):
        entry = Entry(f"event-{i:09d}", fps[i], i, i * step, rng.randbytes(130))
        index.add(entry, exact_keys=keys[i])
    insert_s = time.perf_counter() - began
    live = len(index.live_buckets)
    index.compact()
    disk = index.disk_bytes()
    families = _family_bytes(index._db, path)
    index.close()
    probes = _probes(rng, fps, keys)
    out: dict[str, Any] = {"size": size, "insert_per_s": size / insert_s, "bytes_per_event": disk / size, "live": live}
    out["family_bytes_per_event"] = {name: n / size for name, n in families.items()}
    out["page_cache_dropped"] = _drop_page_cache()
    index = BlockIndex(path, plan, wal=False, retention_ms=RETENTION_MS)  # a new, empty block cache
    stats = options[-1]
    before = _ticker(stats, SEEKS), _ticker(stats, MULTIGET_KEYS)
    out["cold_p50_us"], out["cold_p99_us"] = _time(index, probes)
    out["seeks_per_probe"] = (_ticker(stats, SEEKS) - before[0]) / len(probes)
    out["multiget_keys_per_probe"] = (_ticker(stats, MULTIGET_KEYS) - before[1]) / len(probes)
    out["warm_p50_us"], out["warm_p99_us"] = _time(index, probes)
    index.close()
    for mb in cache_mb:
        _drop_page_cache()
        with BlockIndex(path, plan, wal=False, retention_ms=RETENTION_MS, cache_bytes=mb << 20) as index:
            out[f"cache_{mb}"] = [*_time(index, probes), *_time(index, probes)]
    return out


def _family_bytes(db: Any, path: Path) -> dict[str, int]:
    """SST bytes per column family, families of one kind (``bucket@3``, ``bucket@4``) summed."""
    from rocksdict import Rdict

    out: dict[str, int] = {}
    for name in Rdict.list_cf(str(path)):
        family = db.get_column_family(name)
        kind = name.partition("@")[0]
        out[kind] = out.get(kind, 0) + (family.property_int_value("rocksdb.total-sst-files-size") or 0)
        del family
    return out


def _drop_page_cache() -> bool:
    """Empty the OS page cache so that a cold probe reads the disk; False where not allowed."""
    os.sync()
    try:
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
    except OSError:
        return False
    return True


def _probes(rng: random.Random, fps: list[int], keys: list[tuple[int, ...]]) -> list[tuple[int, ...]]:
    out = []
    for n in range(PROBES):
        if n % 2:
            out.append((rng.getrandbits(64), *(rng.getrandbits(64) for _ in keys[0])))
            continue
        i = rng.randrange(len(fps))
        fp = fps[i]
        for bit in rng.sample(range(64), rng.randint(0, 3)):
            fp ^= 1 << bit
        out.append((fp, *keys[i]))
    return out


def _time(index: Any, probes: Sequence[tuple[int, ...]]) -> tuple[float, float]:
    samples = []
    clock = time.perf_counter
    for fp, *keys in probes:
        began = clock()
        index.query(fp, 3)
        for key in keys:
            index.query_exact(key)
        samples.append(clock() - began)
    samples.sort()
    return statistics.median(samples) * 1e6, samples[int(0.99 * (len(samples) - 1))] * 1e6


def _ticker(options: Any, name: str) -> int:
    for line in (options.get_statistics() or "").splitlines():
        ticker, _, count = line.partition(" COUNT : ")
        if ticker == name:
            return int(count)
    raise KeyError(name)


# ------------------------------------------------------------------ the run
def _baseline_rev() -> str:
    """The parent of the commit that introduced layout 2 (HEAD itself while it is uncommitted)."""
    found = subprocess.run(
        ["git", "log", "--format=%H", "--reverse", "-S", "LAYOUT_KEY", "--", "worker/state/layout.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return f"{found[0]}^" if found else "HEAD"


def _run_child(tree: Path, size: int, seed: int, cache_mb: Sequence[int] = (), word_bands: int = 0) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="neardup-layout-") as tmp:
        env = {**os.environ, "PYTHONPATH": str(tree)}
        args = [sys.executable, str(Path(__file__).resolve()), "--child", str(tree), "--sizes", str(size)]
        args += ["--workdir", tmp, "--seed", str(seed), "--word-bands", str(word_bands)]
        if cache_mb:
            args += ["--cache-mb", ",".join(map(str, cache_mb))]
        done = subprocess.run(args, env=env, capture_output=True, text=True, check=True)
        result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
        return result


COLUMNS = [
    ("seeks_per_probe", "seeks/probe", "{:.1f}"),
    ("multiget_keys_per_probe", "mget keys", "{:.1f}"),
    ("warm_p50_us", "warm p50 µs", "{:.1f}"),
    ("warm_p99_us", "warm p99 µs", "{:.1f}"),
    ("cold_p50_us", "cold p50 µs", "{:.1f}"),
    ("cold_p99_us", "cold p99 µs", "{:.1f}"),
    ("insert_per_s", "inserts/s", "{:,.0f}"),
    ("bytes_per_event", "B/event", "{:.0f}"),
]


def _report(size: int, runs: dict[str, list[dict[str, Any]]]) -> None:
    print(
        f"\n{size:,} events over one window, {runs['current'][0]['live']} live buckets; medians of {len(runs['current'])}"
    )
    print(f"{'layout':<10}" + "".join(f"{title:>14}" for _, title, _ in COLUMNS))
    medians = {
        name: {key: statistics.median(r[key] for r in rows) for key, _, _ in COLUMNS} for name, rows in runs.items()
    }
    for name in ("previous", "current"):
        print(f"{name:<10}" + "".join(f"{fmt.format(medians[name][key]):>14}" for key, _, fmt in COLUMNS))
    ratio = {
        key: medians["current"][key] / medians["previous"][key] if medians["previous"][key] else float("nan")
        for key, _, _ in COLUMNS
    }
    print(f"{'ratio':<10}" + "".join(f"{ratio[key]:>14.2f}" for key, _, _ in COLUMNS))
    for name in ("previous", "current"):
        kinds = runs[name][0]["family_bytes_per_event"]
        print(f"{name} B/event by family: " + ", ".join(f"{kind} {n:.0f}" for kind, n in sorted(kinds.items())))
    dropped = all(r["page_cache_dropped"] for rows in runs.values() for r in rows)
    print("cold: " + ("OS page cache dropped before" if dropped else "new block cache only (page cache not dropped)"))
    sizes = sorted(int(key[6:]) for key in runs["current"][0] if key.startswith("cache_"))
    if sizes:
        print("\ncurrent layout by block cache size: cold p50, p99, then warm p50, p99 (µs)")
    for mb in sizes:
        figures = [statistics.median(r[f"cache_{mb}"][i] for r in runs["current"]) for i in range(4)]
        print(f"{mb:>8} MiB" + "".join(f"{value:>14.1f}" for value in figures))


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1000000", help="comma-separated event counts")
    parser.add_argument("--rounds", type=int, default=3, help="alternated rounds (medians are reported)")
    parser.add_argument("--baseline", default=None, help="git revision of the previous layout")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--cache-mb", default="", help="comma-separated block cache sizes to try (current layout)")
    parser.add_argument("--word-bands", type=int, default=0, help="exact keys an event adds to its two anchors")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--workdir", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    cache_mb = [int(mb) for mb in args.cache_mb.split(",") if mb]
    if args.child:
        print(json.dumps(_child(Path(args.child), sizes[0], Path(args.workdir), args.seed, cache_mb, args.word_bands)))
        return
    rev = args.baseline or _baseline_rev()
    worktree = Path(tempfile.mkdtemp(prefix="neardup-baseline-"))
    subprocess.run(["git", "worktree", "add", "--detach", "-q", str(worktree), rev], cwd=ROOT, check=True)
    print(f"previous layout: {rev} ({worktree}); current: this tree")
    try:
        for size in sizes:
            runs: dict[str, list[dict[str, Any]]] = {"previous": [], "current": []}
            for n in range(args.rounds):
                runs["previous"].append(_run_child(worktree, size, args.seed + n, word_bands=args.word_bands))
                runs["current"].append(_run_child(ROOT, size, args.seed + n, cache_mb, args.word_bands))
            _report(size, runs)
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(worktree)], cwd=ROOT, check=False)
        shutil.rmtree(worktree, ignore_errors=True)


if __name__ == "__main__":
    main()
