"""Engine benchmarks: the RocksDB block index next to baselines measured in the same run.

Index part: insert/s, probe p50/p99 and disk bytes per stored fingerprint for
:class:`worker.store.BlockIndex`, against a numpy brute-force scan (popcount of XOR over a
uint64 array) and PyPI ``simhash``'s in-memory ``SimhashIndex`` (pure Python, so measured at a
smaller size). Probes are half near duplicates (a stored fingerprint with 0..k bits flipped)
and half random fingerprints; recall is over the near ones, checked against brute force.

    python bench/engine.py --sizes 1000000,10000000
    python bench/engine.py --quick
    python bench/engine.py --sweep 200000       # RocksDB options (compression, block size, WAL)
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np

from worker.blocks import parse_plan
from worker.store import BlockIndex, Entry

SKETCH_BYTES = 128
PROBES = 2000


@dataclass
class Row:
    """One line of the results table."""

    method: str
    size: int
    insert_per_s: float
    p50_us: float
    p99_us: float
    bytes_per_fp: float | None
    recall: float
    note: str = ""


def _fingerprints(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 2**64, size=n, dtype=np.uint64)


def _probes(stored: np.ndarray, k: int, seed: int) -> list[tuple[int, bool]]:
    """(probe, is_near) pairs: near = a stored fingerprint with 0..k random bits flipped."""
    rng = random.Random(seed)
    out: list[tuple[int, bool]] = []
    for i in range(PROBES):
        if i % 2 == 0:
            fp = int(stored[rng.randrange(len(stored))])
            for bit in rng.sample(range(64), rng.randint(0, k)):
                fp ^= 1 << bit
            out.append((fp, True))
        else:
            out.append((rng.getrandbits(64), False))
    return out


def _percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered) * 1e6, ordered[int(0.99 * (len(ordered) - 1))] * 1e6


def _time_probes(probes: Sequence[tuple[int, bool]], probe: Callable[[int], set[int]], truth: Callable[[int], set[int]]) -> tuple[float, float, float]:
    """p50 and p99 latency (µs) of ``probe``, and its recall on the near probes against ``truth``."""
    samples: list[float] = []
    wanted = found = 0
    for fp, near in probes:
        start = time.perf_counter()
        got = probe(fp)
        samples.append(time.perf_counter() - start)
        if near:
            expected = truth(fp)
            wanted += len(expected)
            found += len(expected & got)
    p50, p99 = _percentiles(samples)
    return p50, p99, (found / wanted if wanted else 1.0)


def _directory_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def bench_rocksdb(
    stored: np.ndarray,
    probes: Sequence[tuple[int, bool]],
    truth: Callable[[int], set[int]],
    *,
    k: int = 3,
    plan: str = "auto",
    compression: str = "lz4",
    block_size: int = 4096,
    wal: bool = False,
    workdir: Path,
) -> Row:
    """Insert every stored fingerprint one add at a time, flush and compact, then probe."""
    n = len(stored)
    chosen = parse_plan(plan, k=k, expected=n)
    path = workdir / f"ix-{n}-{compression}-{block_size}-{int(wal)}"
    shutil.rmtree(path, ignore_errors=True)
    sketch_rng = np.random.default_rng(7)
    with BlockIndex(path, chosen, wal=wal, compression=compression, block_size=block_size) as index:
        start = time.perf_counter()
        chunk = 100_000
        for base in range(0, n, chunk):
            fps = stored[base : base + chunk].tolist()
            sketches = sketch_rng.bytes(SKETCH_BYTES * len(fps))
            for j, fp in enumerate(fps):
                i = base + j
                index.add(Entry(f"{i:016x}", fp, i, i, sketches[j * SKETCH_BYTES : (j + 1) * SKETCH_BYTES]))
        index.flush()
        insert_s = time.perf_counter() - start
        index.compact()
        disk = index.disk_bytes()

        def probe(fp: int) -> set[int]:
            return {int(c.entry.event_id, 16) for c in index.query(fp, k)}

        p50, p99, recall = _time_probes(probes, probe, truth)
    shutil.rmtree(path, ignore_errors=True)
    return Row(
        f"rocksdb {chosen.name} {compression} bs={block_size // 1024}K wal={'on' if wal else 'off'}",
        n, n / insert_s, p50, p99, disk / n, recall,
    )


def bench_numpy(stored: np.ndarray, probes: Sequence[tuple[int, bool]], k: int) -> Row:
    """Brute force: one append per fingerprint into a preallocated array, XOR + popcount per probe."""
    n = len(stored)
    values = stored.tolist()
    arr = np.empty(n, dtype=np.uint64)
    start = time.perf_counter()
    for i, fp in enumerate(values):
        arr[i] = fp
    insert_s = time.perf_counter() - start

    def probe(fp: int) -> set[int]:
        return set(np.flatnonzero(np.bitwise_count(arr ^ np.uint64(fp)) <= k).tolist())

    p50, p99, recall = _time_probes(probes, probe, probe)
    return Row("numpy brute force (RAM only)", n, n / insert_s, p50, p99, None, recall)


def bench_simhash_pkg(stored: np.ndarray, probes: Sequence[tuple[int, bool]], k: int, truth: Callable[[int], set[int]]) -> Row:
    """PyPI simhash's SimhashIndex: k+1 blocks in Python dicts, in memory."""
    from simhash import Simhash, SimhashIndex

    n = len(stored)
    values = stored.tolist()
    index = SimhashIndex([], f=64, k=k)
    start = time.perf_counter()
    for i, fp in enumerate(values):
        index.add(str(i), Simhash(fp))
    insert_s = time.perf_counter() - start

    def probe(fp: int) -> set[int]:
        return {int(x) for x in index.get_near_dups(Simhash(fp))}

    p50, p99, recall = _time_probes(probes, probe, truth)
    return Row("simhash.SimhashIndex (RAM only)", n, n / insert_s, p50, p99, None, recall, "pure Python")


def _truth_for(stored: np.ndarray, k: int) -> Callable[[int], set[int]]:
    def truth(fp: int) -> set[int]:
        return set(np.flatnonzero(np.bitwise_count(stored ^ np.uint64(fp)) <= k).tolist())

    return truth


def bench_index(
    sizes: Iterable[int],
    *,
    k: int = 3,
    plan: str = "auto",
    compression: str = "lz4",
    block_size: int = 4096,
    wal: bool = False,
    simhash_size: int = 100_000,
    workdir: str | os.PathLike[str] | None = None,
) -> list[Row]:
    """Index rows for every size, plus the pure-Python ``simhash`` baseline at ``simhash_size``."""
    base = Path(workdir) if workdir else Path(tempfile.mkdtemp(prefix="neardup-bench-"))
    rows: list[Row] = []
    try:
        for n in sizes:
            stored = _fingerprints(n, seed=n)
            probes = _probes(stored, k, seed=n)
            truth = _truth_for(stored, k)
            rows.append(bench_numpy(stored, probes, k))
            rows.append(bench_rocksdb(stored, probes, truth, k=k, plan=plan, compression=compression,
                                      block_size=block_size, wal=wal, workdir=base))
            _print([rows[-2], rows[-1]])
        if simhash_size:
            stored = _fingerprints(simhash_size, seed=simhash_size)
            rows.append(bench_simhash_pkg(stored, _probes(stored, k, seed=1), k, _truth_for(stored, k)))
            _print(rows[-1:])
    finally:
        if not workdir:
            shutil.rmtree(base, ignore_errors=True)
    return rows


def sweep_options(
    n: int, k: int = 3, plan: str = "10x25", workdir: str | os.PathLike[str] | None = None
) -> list[Row]:
    """The RocksDB knobs chosen by measurement: compression, block size and WAL at one size."""
    base = Path(workdir) if workdir else Path(tempfile.mkdtemp(prefix="neardup-sweep-"))
    stored = _fingerprints(n, seed=n)
    probes = _probes(stored, k, seed=n)
    truth = _truth_for(stored, k)
    rows: list[Row] = []
    try:
        for compression, block_size, wal in [
            ("none", 4096, False), ("lz4", 4096, False), ("zstd", 4096, False),
            ("lz4", 16384, False), ("lz4", 4096, True),
        ]:
            rows.append(bench_rocksdb(stored, probes, truth, k=k, plan=plan, compression=compression,
                                      block_size=block_size, wal=wal, workdir=base))
            _print(rows[-1:])
    finally:
        if not workdir:
            shutil.rmtree(base, ignore_errors=True)
    return rows


_printed_header = False


def _print(rows: Sequence[Row]) -> None:
    global _printed_header
    if not _printed_header:
        print(f"{'method':<44} {'stored':>11} {'insert/s':>10} {'p50 µs':>9} {'p99 µs':>9} {'B/fp':>7} {'recall':>7}  note")
        _printed_header = True
    for r in rows:
        disk = f"{r.bytes_per_fp:7.0f}" if r.bytes_per_fp is not None else f"{'-':>7}"
        print(f"{r.method:<44} {r.size:>11,} {r.insert_per_s:>10,.0f} {r.p50_us:>9.1f} {r.p99_us:>9.1f} {disk} {r.recall:>7.3f}  {r.note}", flush=True)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000000", help="comma-separated stored-fingerprint counts")
    parser.add_argument("--quick", action="store_true", help="100k stored, simhash baseline at 20k")
    parser.add_argument("--k", type=int, default=3)
    parser.add_argument("--plan", default="auto")
    parser.add_argument("--compression", default="lz4", choices=["none", "lz4", "zstd", "snappy"])
    parser.add_argument("--block-size", type=int, default=4096)
    parser.add_argument("--wal", action="store_true", help="keep RocksDB's write-ahead log on")
    parser.add_argument("--simhash-size", type=int, default=100_000, help="size for the pure-Python baseline (0 = skip)")
    parser.add_argument("--sweep", type=int, default=0, metavar="N", help="compare RocksDB options at N stored")
    parser.add_argument("--workdir", default=None, help="where the databases go (default: a temp dir)")
    args = parser.parse_args(argv)
    if args.sweep:
        sweep_options(args.sweep, k=args.k, plan="10x25" if args.plan == "auto" else args.plan, workdir=args.workdir)
        return
    sizes = [100_000] if args.quick else [int(s) for s in args.sizes.split(",") if s]
    bench_index(
        sizes, k=args.k, plan=args.plan, compression=args.compression, block_size=args.block_size,
        wal=args.wal, simhash_size=20_000 if args.quick else args.simhash_size, workdir=args.workdir,
    )


if __name__ == "__main__":
    main()
