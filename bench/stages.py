"""The worker's own CPU an event, stage by stage, without Kafka: what issue 30 asks to profile and cut.

``bench/stream.py`` measures a whole worker on a broker, where Faust's and aiokafka's share
and the machine's mood blur what our code costs. Here the three stages' ``process`` calls
(the same ones the worker makes, as in tests/stream/test_stages.py) take the dev stream of
``bench/stream.py`` (16,880 events, ``--events 20000``) in batches of 500 (``--batch``) from 4 input
partitions (``--partitions``), into 4 index and 4 verdict partitions of fresh RocksDB stores, one worker
owning them all, as the stream bench's one worker does. It prints the CPU time an event of
each stage: fingerprint (validate, fingerprint, fan out), index (probe, verify, store,
answer), verdict (gather, decide, store, hold) and changelog (each batch's records of the
index stores, encoded as the worker sends them), each the median of ``--rounds`` fresh
processes; *helper* is the part of the fingerprint stage the worker's helper process takes
(:mod:`worker.stream.helper`: the texts' fingerprints, pickled as it sends them back), *worker*
what is left to the worker's own process (loading them included), and *gc* how much of all
that the cyclic garbage collector's passes took. Where Linux lets the process count them
(:mod:`bench.instructions`), a second table gives the same split in instructions an event
of the stages' thread: a figure this box's load barely moves, where its CPU seconds move by
a fifth from one run to the next. With ``--before REV`` the same rounds run,
in turn, on that revision's code (a ``git worktree`` with the native extension of its own
source) and each figure gets its ratio. Last, each tree's index changelog: its bytes an event
and the CPU a restore takes to decode them.

With ``--feed quotes`` the input is :mod:`bench.quotes` instead (the stream tests' feed: texts
that share sentences, so a probe verifies dozens of candidates). The events are made once, by
this tree's code, and every round of either tree reads them. With several sizes
(``--batch 4,500``) each runs in turn in every round: a small one (the few events a batch a
worker takes at a moderate load) against a large one shows what a batch costs whatever its
size. Several partition counts (``--partitions 1,4``) run the same way: each partition an
event's shares reach is a query, a stored entry and a changelog item more, and 4 against 1
shows what a lone worker pays for the partitions that let others share its work.

    python bench/stages.py --rounds 3
    python bench/stages.py --rounds 3 --partitions 1,4
    python bench/stages.py --rounds 3 --before HEAD~3
    python bench/stages.py --rounds 3 --feed quotes --events 10000 --before HEAD~1
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import os
import pickle
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
STAGES = ("fingerprint", "index", "verdict", "changelog")
BATCH = 500
PARTITIONS = 4


@dataclass(frozen=True)
class _Message:
    """What a stage reads of an input record (as Faust's message)."""

    value: bytes
    offset: int
    partition: int
    timestamp: float
    topic: str = "bench.events"
    key: bytes | None = None


class _Sends:
    """What the verdict stage's ``process`` needs of the worker's sends: outputs are dropped."""

    def __init__(self, names: Any, metrics: Any) -> None:
        self.names = names
        self.metrics = metrics
        self.outputs = {"unique": names.unique, "duplicates": names.duplicates}

    async def output(self, role: str, key: bytes, value: bytes) -> None:
        return None

    def write_failed(self, exc: BaseException) -> None:
        raise RuntimeError(f"nothing is written here: {exc}")


def child(feed: Path, state: Path, batch: int = BATCH, partitions: int = PARTITIONS) -> dict[str, float]:
    """One round in this process, on the stage code importable here: CPU seconds an event by stage."""
    from topology.stages import Topics
    from worker.engine.fingerprint import warm_up

    try:  # what the helper process sends back: routed since worker/stream/routes.py
        from worker.stream.routes import routed_each as fingerprint_each
    except ImportError:
        try:
            from worker.engine.fingerprint import fingerprint_each
        except ImportError:  # a tree before the helper process
            fingerprint_each = None
    from worker.settings import Settings
    from worker.state.changelog import StoreSet
    from worker.state.verdicts import VerdictPartition
    from worker.stream.fingerprint import FingerprintStage
    from worker.stream.index import IndexStage
    from worker.stream.metrics import Metrics
    from worker.stream.verdict import VerdictStage

    settings = Settings(partitions=partitions, topic_prefix="bench")
    warm_up(settings)
    names = Topics(settings.topic_prefix)
    now = time.time()
    messages = [
        _Message(value, i // partitions, i % partitions, now + i / 10_000)
        for i, value in enumerate(feed.read_bytes().splitlines())
    ]
    plan, retention = settings.block_plan, settings.retention_ms
    index_stores = _index_stores(state, plan, retention, partitions, names.index_changelog)
    verdict_stores = {p: VerdictPartition(state / f"verdict-{p}", retention) for p in range(partitions)}
    fingerprint, index = FingerprintStage(settings), IndexStage(settings, names.events)
    unused = StoreSet(state / "unused", names.verdict_changelog, VerdictPartition, None)
    verdict = VerdictStage(settings, unused, _Sends(names, Metrics(histograms=False)), None)  # type: ignore[arg-type]
    spent = dict.fromkeys((*STAGES, "helper"), 0.0)
    executed = dict.fromkeys((*STAGES, "helper"), 0)
    counted = _thread_counter()
    instructions = counted or (lambda: 0)

    def clock() -> tuple[float, int]:
        return time.process_time(), instructions()

    def add(part: str, since: tuple[float, int], until: tuple[float, int]) -> None:
        spent[part] += until[0] - since[0]
        executed[part] += until[1] - since[1]

    encode, decode = _changelog_codec()
    logged: list[bytes] = []
    collecting = _settle_as_the_worker()
    for start in range(0, len(messages), batch):
        began = clock()
        if fingerprint_each is not None:
            parsed = fingerprint.parse(messages[start : start + batch])
            helped = clock()
            # Pickled as the helper process sends them back; the worker's process loads them.
            sent = pickle.dumps(fingerprint_each(parsed.texts, settings), pickle.HIGHEST_PROTOCOL)
            add("helper", helped, clock())
            prints = pickle.loads(sent)
            out = fingerprint.fan_out_all(parsed, prints)
        else:
            out = fingerprint.process(messages[start : start + batch])
        fingerprinted = clock()
        parts = out.shares if hasattr(out, "shares") else out.probes  # a tree before shares: probes
        result = index.process(index_stores, {p: [out.message(p)] for p in parts})
        indexed = clock()
        verdict.process(verdict_stores, dict(result.replies), int(now * 1000))
        decided = clock()
        for store in index_stores.values():  # the batch's index changelog records, as the worker makes them
            logged.extend(encode(store.take_ops()))
        add("fingerprint", began, fingerprinted)
        add("index", fingerprinted, indexed)
        add("verdict", indexed, decided)
        add("changelog", decided, clock())
    spent["gc"] = collecting()
    per_event = {part: seconds / len(messages) for part, seconds in spent.items()}
    began = time.process_time()
    for record in logged:  # what a restore of these records decodes
        decode(record)
    per_event["changelog decode"] = (time.process_time() - began) / len(messages)
    per_event["changelog bytes"] = sum(map(len, logged)) / len(messages)
    if counted is not None:
        per_event |= {f"{part} instructions": count / len(messages) for part, count in executed.items()}
    return {"events": len(messages)} | per_event


def _index_stores(state: Path, plan: Any, retention: int, partitions: int, topic: str) -> dict[int, Any]:
    """The index partitions as the worker keeps them: in one store (a tree before it: one each)."""
    try:
        from worker.state.partition import open_index
        from worker.state.shared import SharedIndex
    except ImportError:
        from worker.state.partition import IndexPartition

        return {p: IndexPartition(state / f"index-{p}", plan, retention) for p in range(partitions)}
    shared = SharedIndex(state / "index", partitions, topic, lambda path: open_index(path, plan, retention))
    return {p: shared.partition(p) for p in range(partitions)}


def _changelog_codec() -> tuple[Callable[[list[Any]], list[bytes]], Callable[[bytes], list[Any]]]:
    """How the tree measured writes and reads its index changelog records (asked of its
    partition store: an installed checkout may lend a tree before modules it lacks)."""
    from worker.state import partition

    if hasattr(partition, "IndexOp"):
        from topology.changelog import decode_ops, encode_ops

        return encode_ops, decode_ops
    from topology.codec import encode_chunks
    from worker.state.replay import decode_ops as decode_json

    return encode_chunks, decode_json


def _thread_counter() -> Callable[[], int] | None:
    """:func:`bench.instructions.thread_counter`, from this file's tree: a child's imports come
    from the tree it measures, which may predate it."""
    spec = importlib.util.spec_from_file_location("_instructions", Path(__file__).with_name("instructions.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    counter: Callable[[], int] | None = module.thread_counter()
    return counter


def _settle_as_the_worker() -> Callable[[], float]:
    """Set the garbage collector as the worker does at start (:mod:`worker.collector`; a tree
    before it only froze what was alive); returns how to read the CPU seconds the collector's
    passes took since (its thread's only: RocksDB's background threads work meanwhile)."""
    try:
        from worker.collector import settle
    except ImportError:
        settle = gc.freeze
    settle()
    taken = [0.0, 0.0]  # since the current collection began, in all

    def timed(phase: str, _: dict[str, int]) -> None:
        if phase == "start":
            taken[0] = time.thread_time()
        else:
            taken[1] += time.thread_time() - taken[0]

    gc.callbacks.append(timed)
    return lambda: taken[1]


def _lines(feed: str, events: int) -> list[bytes]:
    """The input events as JSON lines: the dev stream of ``bench/stream.py``, or :mod:`bench.quotes`."""
    if feed == "quotes":
        from bench import quotes

        return quotes.feed(events, "q")
    from bench.stream import _events

    return [value for _, value in _events(events)]


def _round(tree: Path, feed: Path, batch: int, partitions: int = PARTITIONS) -> dict[str, float]:
    """One round in a fresh process whose imports come from ``tree``."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    with tempfile.TemporaryDirectory(prefix="neardup-stages-") as state:
        command = [sys.executable, str(Path(__file__).resolve()), "--child", state, "--input", str(feed)]
        command += ["--batch", str(batch), "--partitions", str(partitions)]
        out = subprocess.run(command, cwd=tree, env=env, check=True, capture_output=True, text=True).stdout
    result: dict[str, float] = json.loads(out.splitlines()[-1])
    return result


def report(runs: dict[str, list[dict[str, float]]]) -> list[str]:
    """Median microseconds of CPU an event by stage, how much of the fingerprint stage a
    helper process takes off the worker's, and each tree's ratio to the first; then the same
    in instructions, where every round counted them."""
    lines = _table(runs, "", 1e6, "us of CPU an event")
    if all("index instructions" in r for rounds in runs.values() for r in rounds):
        lines += _table(runs, " instructions", 1e-3, "thousand instructions an event, user space, the stages' thread")
    for tree, rounds in runs.items():
        size = statistics.median(r["changelog bytes"] for r in rounds)
        decode = statistics.median(r["changelog decode"] for r in rounds) * 1e6
        lines.append(
            f"{tree}: index changelog {size:,.0f} bytes an event, {decode:.1f} us an event to decode (a restore's)"
        )
    return lines


def _table(runs: dict[str, list[dict[str, float]]], suffix: str, scale: float, unit: str) -> list[str]:
    trees = list(runs)
    first = trees[0]
    columns = (*STAGES, "total", "helper", "worker") + (() if suffix else ("gc",))
    lines = [f"{'tree':<10}" + "".join(f"{c:>13}" for c in columns) + f"   ({unit})"]
    medians: dict[str, dict[str, float]] = {}
    for tree, rs in runs.items():
        figures = {s: value * scale for s, value in _medians(rs, suffix).items()}
        figures["total"] = sum(figures[s] for s in STAGES)
        figures["worker"] = figures["total"] - figures["helper"]
        medians[tree] = figures
        lines.append(f"{tree:<10}" + "".join(f"{figures[c]:>13.1f}" for c in columns))
    for tree in trees[1:]:
        this, that = medians[first], medians[tree]
        ratios = "".join(f"{this[c] / that[c]:>13.2f}" if that[c] else f"{'':>13}" for c in columns)
        lines.append(f"{'ratio':<10}{ratios}   ({first} / {tree})")
    return lines


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--events", type=int, default=20_000, help="events asked for (the dev stream holds 16,880)")
    parser.add_argument("--feed", choices=("devset", "quotes"), default="devset")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--batch", default=str(BATCH), help="events a batch; several: 4,500")
    parser.add_argument("--before", metavar="REV", help="also run that revision's stages, in turn")
    parser.add_argument(
        "--partitions", default=str(PARTITIONS), help="input, index and verdict partitions; several: 1,4"
    )
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--input", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child is not None:
        print(json.dumps(child(args.input, args.child, int(args.batch), int(args.partitions))))
        return
    trees = {"this": ROOT}
    if args.before:
        from bench.baseline import worktree

        trees["before"] = worktree(args.before)
    sizes = [int(size) for size in args.batch.split(",")]
    counts = [int(count) for count in args.partitions.split(",")]
    if len(sizes) > 1 and len(counts) > 1:
        parser.error("give several batch sizes or several partition counts, not both")
    configs = {
        _config_name(name, size, count, sizes, counts): (tree, size, count)
        for name, tree in trees.items()
        for size in sizes
        for count in counts
    }
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in configs}
    with tempfile.NamedTemporaryFile(prefix="neardup-stages-", suffix=".jsonl") as feed:
        feed.write(b"\n".join(_lines(args.feed, args.events)))
        feed.flush()
        for number in range(args.rounds):
            # Each tree goes first in turn: the first process of a round ran slower often enough to tilt a ratio.
            for name, (tree, size, count) in list(configs.items())[:: -1 if number % 2 else 1]:
                runs[name].append(_round(tree, Path(feed.name), size, count))
    events = int(next(iter(runs.values()))[0]["events"])
    print(
        f"{events} events ({args.feed} feed), batches of {args.batch}, {args.partitions} partitions, {args.rounds} rounds"
    )
    print("\n".join(report(runs)))
    if len(sizes) > 1:
        print(_batch_cost(runs, min(sizes), max(sizes)))


def _config_name(tree: str, size: int, count: int, sizes: list[int], counts: list[int]) -> str:
    """A run's row: its tree, and its batch size or partition count where several are given."""
    if len(sizes) > 1:
        return f"{tree}/{size}"
    return f"{tree}/p{count}" if len(counts) > 1 else tree


def _medians(rounds: list[dict[str, float]], suffix: str = "") -> dict[str, float]:
    """CPU seconds an event of each stage, of the helper and of the collector (or with
    ``suffix`` " instructions", instructions an event of each stage and the helper): medians of the rounds."""
    parts = (*STAGES, "helper") + (() if suffix else ("gc",))
    return {s: statistics.median(r[s + suffix] for r in rounds) for s in parts}


def _batch_cost(runs: dict[str, list[dict[str, float]]], small: int, large: int) -> str:
    """What a batch costs this tree's stages whatever its size: the per-event figures of two
    sizes solved for a fixed cost a batch plus a cost an event."""
    medians = {size: _medians(runs[f"this/{size}"]) for size in (small, large)}
    weight = 1 / small - 1 / large
    parts = [(s, (medians[small][s] - medians[large][s]) / weight * 1e6) for s in (*STAGES, "helper")]
    listed = ", ".join(f"{s} {us:.0f}" for s, us in parts)
    return f"a batch's own cost, whatever its size (us of CPU): {listed}"


if __name__ == "__main__":
    if __package__ in (None, ""):
        sys.path.insert(0, os.environ.get("PYTHONPATH") or str(ROOT))
    main()
