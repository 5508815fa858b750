"""Where ``neardup scan``'s sequential decision spends its time, part by part, with RocksDB's counts.

The feed is ``bench/scan_speed.py``'s (the development set replayed under fresh ids over 18
days). Fingerprints are computed first and not timed, as the scan's helper computes them
ahead; then one :class:`worker.cli.deduplicator.Deduplicator` decides every event against a
fresh index in a temporary directory, as ``neardup scan`` does: a chunk of lines at a time in
one deferred block, whose probes' exact keys are read as it opens (in no part below, but in
the decision's total) and whose adds are staged and written at its end. Each part of the index's
work is timed where the deduplicator calls it (timers wrapped around the index's methods),
and RocksDB's own statistics give what a decision reads:

    python bench/scan_profile.py --size 200000

Parts overlap: ``block write`` includes ``purge`` (an expired bucket's rows are deleted in the
write that expires it); ``add`` is the staging of an event's keys. Run it alone on the
machine: the seconds are wall-clock.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.scan_speed import STORIES, write_feed
from topology.validate import parse_event
from worker import collector
from worker.cli.deduplicator import Deduplicator
from worker.cli.scan import CHUNK_LINES, SCAN_RECENT_ENTRIES
from worker.engine.fingerprint import fingerprint, warm_up
from worker.settings import Settings
from worker.state.index import BlockIndex

PARTS = {
    "query_exact_many": "exact probe",
    "query": "table probe",
    "add_many": "add",
    "_write_pending": "block write",
    "_purge": "purge",
    "get_record": "verdict lookup",
}
TICKERS = {
    "rocksdb.number.db.seek": "seeks",
    "rocksdb.number.multiget.keys.read": "multi-get keys",
    "rocksdb.db.iter.bytes.read": "iterator bytes",
    "rocksdb.number.keys.read": "point reads",
}


def timed(method: Callable[..., Any], spent: dict[str, float], name: str) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        began = time.perf_counter()
        try:
            return method(*args, **kwargs)
        finally:
            spent[name] += time.perf_counter() - began

    return wrapper


def profile(size: int, stories: int) -> None:
    settings = Settings()
    with tempfile.TemporaryDirectory(prefix="neardup-scan-profile-") as tmp:
        feed = Path(tmp, "feed.jsonl")
        write_feed(feed, size, stories)
        events = [parse_event(line, settings) for line in feed.read_bytes().splitlines()]
        warm_up(settings)
        probes = [fingerprint(event.text, settings) for event in events]
        index = BlockIndex(
            Path(tmp, "state"),
            settings.block_plan,
            retention_ms=settings.retention_ms,
            cache_bytes=settings.cache_mb << 20,
            recent_entries=SCAN_RECENT_ENTRIES,
            statistics=True,
        )
        spent = dict.fromkeys(PARTS, 0.0)
        for name in PARTS:  # instance attributes: the deduplicator's and the index's own calls
            setattr(index, name, timed(getattr(index, name), spent, name))
        dedup = Deduplicator(index, settings)
        collector.settle()  # as the scan does
        began = time.perf_counter()
        for start in range(0, size, CHUNK_LINES):
            chunk = slice(start, start + CHUNK_LINES)
            with index.deferred(key for probe in probes[chunk] for key in probe.probe_keys):
                for event, probe in zip(events[chunk], probes[chunk], strict=True):
                    dedup.decide_encoded(event, probe=probe)
        total = time.perf_counter() - began
        counts = {label: index.counter(ticker) for ticker, label in TICKERS.items()}
        short = sum(not probe.in_tables for probe in probes)
        index.close()
    print(f"{size:,} events ({short:,} short texts), decision {total:.1f} s, {total / size * 1e6:.0f} µs an event")
    for name, label in PARTS.items():
        print(f"  {label:<16}{spent[name]:>8.1f} s{spent[name] / total:>8.0%}")
    print("  an event reads: " + ", ".join(f"{n / size:,.1f} {label}" for label, n in counts.items()))


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=200_000, help="events")
    parser.add_argument("--stories", type=int, default=STORIES, help="dev-set events replayed")
    args = parser.parse_args(argv)
    profile(args.size, args.stories)


if __name__ == "__main__":
    main()
