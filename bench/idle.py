"""CPU an idle worker burns: neardup with 1 and 2 workers next to the passthrough agent.

A worker spends most of a quiet feed's day waiting, and what it costs then is its wake-ups
(batch windows, the hold timer, consumer fetches that long-poll for 10 ms). On a shared box
that CPU is also taken from the busy moments. Run against a broker::

    python bench/idle.py --seconds 20

Each configuration starts on fresh topics and is warmed up as in bench/stream.py, then
left without input for 2 s; the figure is the CPU time (user + system, from
``/proc/<pid>/stat``) its worker processes used over the next ``--seconds``, as a share of
one core, summed over the processes. The passthrough agent is the floor: Faust and its
consumer idling with nothing of ours on top.
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

_SETTLE_S = 2.0


def idle_share(bootstrap: str, partitions: int, workers: int, passthrough: bool, tmp: Path, seconds: float) -> float:
    """Share of a core the configuration's processes use while no input arrives."""
    with stream.running(bootstrap, partitions, workers, passthrough, tmp, lateness_ms=20):
        time.sleep(_SETTLE_S)
        pids = stream.children()
        start_cpu, start = stream.cpu_seconds(pids), time.monotonic()
        time.sleep(seconds)
        return (stream.cpu_seconds(pids) - start_cpu) / (time.monotonic() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--partitions", type=int, default=4)
    args = parser.parse_args()
    bootstrap = os.environ.get("NEARDUP_BOOTSTRAP", "127.0.0.1:9092")
    tmp = stream.scratch_dir()
    print(f"idle for {args.seconds:.0f} s, {args.partitions} partitions, broker {bootstrap}")
    floor = 0.0
    for label, workers, passthrough in stream.CONFIGS:
        share = idle_share(bootstrap, args.partitions, workers, passthrough, tmp, args.seconds)
        if passthrough and workers == 1:
            floor = share
        print(f"{label:<21} {share:6.3f} of a core (passthrough {floor:6.3f})", flush=True)


if __name__ == "__main__":
    main()
