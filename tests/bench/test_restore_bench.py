"""``bench/restore.py`` on the real broker: it restores the changelog it wrote, then removes it.

The bench is not run by CI at its real size (a million events), so nothing else would notice
it falling behind the index's API, as it once did; and each run's changelog stays on the
broker's disk unless the bench deletes its topic.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from kafka import KafkaAdminClient

REPO = Path(__file__).resolve().parents[2]


def _restore_topics(bootstrap: str) -> set[str]:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        return {t for t in admin.list_topics() if t.startswith("restore")}
    finally:
        admin.close()


def test_restore_bench_restores_its_changelog_and_deletes_it(kafka_bootstrap: str) -> None:
    before = _restore_topics(kafka_bootstrap)
    run = subprocess.run(
        [sys.executable, str(REPO / "bench" / "restore.py"), "--events", "2000", "--per-record", "100"],
        env={**os.environ, "NEARDUP_BOOTSTRAP": kafka_bootstrap},
        capture_output=True,
        text=True,
        timeout=300,
    )
    # The bench itself exits non-zero when the restored store misses the last event written.
    assert run.returncode == 0, run.stderr
    assert "changelog: 2000 events" in run.stdout and "in 20 records" in run.stdout
    assert "restore: 2000 events" in run.stdout
    deadline = time.monotonic() + 15
    while _restore_topics(kafka_bootstrap) - before and time.monotonic() < deadline:
        time.sleep(0.5)  # topic deletion reaches the broker's metadata asynchronously
    assert _restore_topics(kafka_bootstrap) - before == set()
