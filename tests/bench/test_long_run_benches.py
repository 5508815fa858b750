"""``bench/soak.py`` and ``bench/races.py`` on the real broker, at a toy size.

CI does not run them at their real size, and both once measured nothing for months without
anyone noticing: races.py crashed at its first worker after a change of ``stream.running``,
and the soak's warm-up put every event of its stream late, so its index stored none.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _bench(kafka_bootstrap: str, *args: str) -> str:
    run = subprocess.run(
        [sys.executable, *args],
        cwd=REPO,
        env={**os.environ, "NEARDUP_BOOTSTRAP": kafka_bootstrap},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    return run.stdout


def test_the_soak_indexes_its_stream_and_reports_each_store(kafka_bootstrap: str) -> None:
    out = _bench(kafka_bootstrap, "bench/soak.py", "--events", "1500", "--rate", "500", "--days", "70")
    assert re.search(r"this: 1,500 verdicts, latency p50 \d+ ms, p99 \d+ ms, max \d+ ms; corrections \d+, late 0", out)
    assert "    index stores: " in out and "    verdict stores: " in out
    # The worker's memory by kind, read off its /metrics: the C heap in use is some of its RSS.
    rss = [int(n) for n in re.search(r"worker RSS \(MiB\) each \d+ s: ([\d ]+)", out).group(1).split()]  # type: ignore[union-attr]
    heap = [int(n) for n in re.search(r"    C heap in use: ([\d ]+)", out).group(1).split()]  # type: ignore[union-attr]
    assert len(heap) == len(rss) and 0 < heap[-1] < rss[-1]
    assert "    memtables: " in out and "    block cache: " in out


def test_the_races_bench_runs_and_finds_no_story_left_twice_unique(kafka_bootstrap: str) -> None:
    out = _bench(
        kafka_bootstrap,
        *("-m", "bench.races", "--stories", "20", "--producers", "2", "--rate", "40"),
        *("--workers", "1", "--lateness-ms", "20"),
    )
    assert re.search(r"1 worker +lateness +20 ms: 40 of 40 verdicts, .* 0 stories left with two unique copies", out)
