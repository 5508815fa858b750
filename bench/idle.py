"""CPU an idle worker burns: neardup with 1 and 2 workers next to the passthrough agent.

A worker spends most of a quiet feed's day waiting, and what it costs then is its wake-ups
(batch windows, the hold timer, consumer fetches that long-poll for 10 ms). On a shared box
that CPU is also taken from the busy moments. Run against a broker::

    python bench/idle.py --seconds 20

Each configuration starts on fresh topics and is warmed up as in bench/stream.py, then
left without input for 2 s; the figure is the CPU time (user + system, from
``/proc/<pid>/stat``) its worker processes used over the next ``--seconds``, as a share of
one core, summed over the processes. The passthrough agent is the floor: Faust and its
consumer idling with nothing of ours on top. Each line also gives the memory the
configuration holds then (``VmRSS``): its worker processes', and apart from them their
helpers' (a neardup worker's fingerprint helper and the forkserver it came from). With
``--before REV`` the neardup configurations also run on that revision's code (a ``git
worktree``, as in bench/stream.py).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench import stream  # noqa: E402
from bench.baseline import worktree  # noqa: E402

_SETTLE_S = 2.0


def idle(
    bootstrap: str, partitions: int, workers: int, job: str, tmp: Path, seconds: float, tree: Path
) -> tuple[float, float, float]:
    """Share of a core the configuration's processes use while no input arrives, and the MiB
    its workers and their helpers hold at the end of it."""
    with stream.running(bootstrap, partitions, workers, job, tmp, lateness_ms=20, tree=tree):
        time.sleep(_SETTLE_S)
        pids = stream.children()
        start_cpu, start = stream.cpu_seconds(pids), time.monotonic()
        time.sleep(seconds)
        share = (stream.cpu_seconds(pids) - start_cpu) / (time.monotonic() - start)
        own = stream.own_children(os.getpid())  # the workers
        return share, _rss_mib(own), _rss_mib([pid for pid in stream.children() if pid not in own])


def _rss_mib(pids: list[int]) -> float:
    return sum(stream.rss_kib(pid) for pid in pids) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--before", metavar="REV", help="also run the neardup configurations of that revision")
    args = parser.parse_args()
    bootstrap = os.environ.get("NEARDUP_BOOTSTRAP", "127.0.0.1:9092")
    tmp = stream.scratch_dir()
    print(f"idle for {args.seconds:.0f} s, {args.partitions} partitions, broker {bootstrap}")
    runs = [(label, workers, job, stream.REPO) for label, workers, job in stream.CONFIGS]
    if args.before:
        before = worktree(args.before)
        runs += [
            (f"{label}, before", workers, job, before)
            for label, workers, job in stream.CONFIGS
            if job == stream.NEARDUP
        ]
    floor = 0.0
    for label, workers, job, tree in runs:
        share, workers_mib, helpers_mib = idle(bootstrap, args.partitions, workers, job, tmp, args.seconds, tree)
        if job != stream.NEARDUP and workers == 1:
            floor = share
        print(
            f"{label:<29} {share:6.3f} of a core (passthrough {floor:6.3f}) | "
            f"RSS: workers {workers_mib:5.0f} MiB, their helpers {helpers_mib:5.0f} MiB",
            flush=True,
        )


if __name__ == "__main__":
    main()
