"""``bench/store_memory.py``'s measuring run, on a small feed: its figures are of the stores it ran.

The bench is run by hand at its real size (400,000 events); this holds its child to what its
report says it measured.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from bench.store_memory import child, report


def _feed(path: Path) -> Path:
    rng = random.Random(5)
    words = [f"w{n}" for n in range(3000)]
    lines = [json.dumps({"id": f"e{n}", "text": " ".join(rng.choices(words, k=60))}) for n in range(500)]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_run_reports_the_stores_it_wrote(tmp_path: Path) -> None:
    state = tmp_path / "state"
    result = child(_feed(tmp_path / "feed.jsonl"), state, events=2_000, windows=3, partitions=2)
    assert result["events"] == 2_000
    assert 0 < result["disk_end"] <= result["disk_peak"]
    assert sorted(p.name for p in state.iterdir()) == ["index-0", "index-1"]
    assert 0 < result["p50_ms"] <= result["p99_ms"] <= result["max_ms"]
    assert result["cpu_us"] > 0 and result["rss_peak"] >= result["rss_end"]
    lines = report({"this": [result], "before": [result]})
    assert lines[-1].split()[1:4] == ["1.00", "1.00", "1.00"]
