"""Where one worker's latency goes, and the worker's CPU, at a steady load.

Run against a broker (``NEARDUP_BOOTSTRAP``), e.g.::

    python bench/stream_hops.py --events 2000 --rate 200

Starts one worker on fresh topics, warms it up, sends ``--events`` at ``--rate`` events/s
(``--rate 0``: a backlog) and reports, at the median and p99, the time from the input
record's append to its verdict, plus the share of one core the worker used from the first
send to the last verdict (its processes, and its main thread alone). One
worker owns every partition, so its probes and answers never cross Kafka (they go to the
next stage in-process); instead the worker logs each input batch (``NEARDUP_LOG_BATCHES``),
and the bench splits the latency into the wait before an event's batch starts (fetch,
window, the batch still running) and the batch itself — fingerprint to verdict, but not the
lateness hold of a held verdict — with the CPU our code spent per event in it.
(bench/stream.py gives the end-to-end figures next to the passthrough baseline; this one
explains them.) With ``--profile FILE`` (py-spy on the PATH), the worker is sampled while it
works through the measured events, the samples kept in FILE (collapsed stacks), and the
functions that took most of its time are listed: by their own time, and our code's by
the time spent in them and what they call. py-spy counts a thread waiting for the GIL as
busy, so the consumer thread's socket writes look expensive; ``--gil`` samples only the
thread holding it, which is where the CPU goes. The passthrough agent of bench/stream.py
then gets the same input at the same rate, as the floor measured in the same run.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import stream  # noqa: E402

_PARTITIONS = 4
_BATCH_LINE = re.compile(r"batch: (\d+) events, waited ([\d.]+)-([\d.]+) ms, took ([\d.]+) ms, ([\d.]+) ms CPU")


def _quantiles(values: list[float]) -> str:
    ordered = sorted(values)
    return f"p50 {stream.percentile(ordered, 0.5):5.0f} ms  p99 {stream.percentile(ordered, 0.99):5.0f} ms"


def _batch_lines(log_text: str) -> list[str]:
    """The worker's input batches, from its ``log_batches`` lines, as report lines."""
    batches = [tuple(map(float, m.groups())) for m in _BATCH_LINE.finditer(log_text)]
    if not batches:
        return ["input batches                  none logged"]
    events = sum(b[0] for b in batches)
    return [
        f"input batches                  {len(batches)}, {events / len(batches):.1f} events each",
        f"  newest event's wait          {_quantiles([b[1] for b in batches])}  (input record -> batch start)",
        f"  oldest event's wait          {_quantiles([b[2] for b in batches])}",
        f"  the batch itself             {_quantiles([b[3] for b in batches])}"
        f"  ({sum(b[4] for b in batches) / events * 1000:.0f} us of CPU an event in it)",
    ]


_FRAME = re.compile(r"^(?P<name>.*) \((?P<file>[^:]*)(?::\d+)?\)$")


def _frame(raw: str) -> str:
    """``function (path:line)`` as ``module.py:function``, the line dropped so its samples add up."""
    match = _FRAME.match(raw)
    if not match:
        return raw
    path = match["file"]
    for root in ("/worker/", "/topology/", "/site-packages/", "/lib/python3"):
        if root in path:
            path = path[path.index(root) + 1 :]
            break
    return f"{path}:{match['name']}"


def profile_lines(collapsed: Path, top: int = 18) -> list[str]:
    """The sampled functions with most time: own time (any code), and ours with what they call."""
    own: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    total = 0
    for line in collapsed.read_text(errors="replace").splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        frames = [_frame(f) for f in stack.split(";")]
        total += int(count)
        own[frames[-1]] += int(count)
        for frame in set(frames):
            if frame.startswith(("worker/", "topology/")):
                inclusive[frame] += int(count)
    if not total:
        return ["profile: no samples"]
    lines = [f"profile: {total} samples; own time"]
    lines += [f"  {100 * n / total:5.1f} %  {name}" for name, n in own.most_common(top)]
    lines.append("our functions, with what they call")
    lines += [f"  {100 * n / total:5.1f} %  {name}" for name, n in inclusive.most_common(top)]
    return lines


class _CpuSamples:
    """CPU seconds sampled every 50 ms while the events are sent and read back: the worker's
    processes' (with its helper) and its main thread's alone, the one that runs the event
    loop, Faust's delivery and the stages. A share is taken between the first send and the
    last verdict: the read-back after it (seconds, the worker idle) diluted it to 0.6-0.7 of
    a core when the main thread was in fact busy all the drain."""

    def __init__(self, pids: list[int]) -> None:
        self.pids = pids
        self.main = Path(f"/proc/{pids[0]}/task/{pids[0]}/stat")  # the thread whose id is the pid
        self.samples: list[tuple[float, float, float]] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self._take()

    def _take(self) -> None:
        self.samples.append((time.time(), stream.cpu_seconds(self.pids), stream.stat_cpu_seconds(self.main)))

    def _run(self) -> None:
        while not self.stop.wait(0.05):
            self._take()

    def __enter__(self) -> _CpuSamples:
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop.set()
        self.thread.join()

    def shares(self, start: float, end: float) -> tuple[float, float]:
        """Shares of one core between the samples nearest ``start`` and ``end``: every process,
        then the main thread."""
        first = min(self.samples, key=lambda s: abs(s[0] - start))
        last = min(self.samples, key=lambda s: abs(s[0] - end))
        wall = max(last[0] - first[0], 1e-9)
        return (last[1] - first[1]) / wall, (last[2] - first[2]) / wall


def _sample(pid: int, out: Path, gil: bool, native: bool) -> subprocess.Popen[bytes]:
    spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    cmd = [spy, "record", "--pid", str(pid), "--rate", "200", "--format", "raw", "--output", str(out)]
    # Native frames need the process paused while its stack is read.
    cmd += ["--native"] if native else ["--nonblocking"]
    cmd += ["--gil"] if gil else []
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=2000)
    parser.add_argument("--rate", type=float, default=200.0, help="events/s (0 = send as fast as possible)")
    parser.add_argument("--lateness-ms", type=int, default=20, help="NEARDUP_ALLOWED_LATENESS_MS of the worker")
    parser.add_argument("--feed", choices=stream.FEEDS, default="devset", help="the input (see bench/stream.py)")
    parser.add_argument("--profile", type=Path, metavar="FILE", help="sample the worker with py-spy (see above)")
    parser.add_argument("--gil", action="store_true", help="with --profile: only the thread holding the GIL")
    parser.add_argument("--native", action="store_true", help="with --profile: native frames too (RocksDB's own)")
    parser.add_argument("--partitions", type=int, default=_PARTITIONS, help="of every topic (NEARDUP_PARTITIONS)")
    args = parser.parse_args()
    bootstrap = os.environ.get("NEARDUP_BOOTSTRAP", "127.0.0.1:9092")
    tmp = stream.scratch_dir()
    prefix = f"hops{uuid.uuid4().hex[:6]}"
    names, env = stream.fresh_topics(bootstrap, prefix, args.partitions, tmp, args.lateness_ms)
    env["NEARDUP_LOG_BATCHES"] = "1"
    log = tmp / f"{prefix}.log"
    worker = stream._start(
        [sys.executable, "-m", "worker.cli.main", "worker", "--name", "w0", "--loglevel", "info"], env, log
    )
    try:
        stream._wait_ready(log)
        stream.warm_up(bootstrap, names)
        warmed = log.stat().st_size
        spy = _sample(worker.pid, args.profile, args.gil, args.native) if args.profile else None
        pids = [worker.pid, *stream.descendants(worker.pid)]  # and its fingerprint helper
        with _CpuSamples(pids) as samples:
            result = stream._measure(
                bootstrap,
                names,
                stream._events(args.events, feed=args.feed),
                [names.unique, names.duplicates],
                args.rate or None,
            )
        share, main = samples.shares(result["started"], result["started"] + result["seconds"])
        if spy is not None:
            spy.send_signal(signal.SIGINT)
            spy.wait(30)
    finally:
        worker.send_signal(signal.SIGTERM)
        worker.wait(30)
        stream.drop_run(bootstrap, prefix, tmp)
    batch_lines = _batch_lines(log.read_bytes()[warmed:].decode(errors="replace"))
    floor = stream.run(
        bootstrap,
        args.events,
        args.partitions,
        1,
        "faust",
        tmp,
        args.lateness_ms,
        rate=args.rate or None,
        feed=args.feed,
    )
    print(
        f"{result['events']} events at {result['events_per_s']:.0f} events/s, "
        f"worker CPU {share:.2f} of a core (its main thread {main:.2f})"
    )
    print(f"input -> verdict               p50 {result['p50_ms']:5.0f} ms  p99 {result['p99_ms']:5.0f} ms")
    print("\n".join(batch_lines))
    print(
        f"passthrough agent, same input and rate (this run's floor): p50 {floor['p50_ms']:5.0f} ms  p99 {floor['p99_ms']:5.0f} ms"
    )
    if args.profile:
        print("\n".join(profile_lines(args.profile)))


if __name__ == "__main__":
    main()
