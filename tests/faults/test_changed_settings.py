"""A worker started with settings that do not fit the deployment's stores: it must stop, saying
why, and lose nothing; it dead-lettered every event while /healthz said healthy."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.faults.deployment import make_deployment
from tests.stream_helpers import OutputReader, WorkerProcess, ids_of, real_feed, send_lines

pytestmark = pytest.mark.kafka


def test_a_worker_whose_settings_do_not_fit_the_stores_stops_and_loses_nothing(
    kafka_bootstrap: str, tmp_path: Path
) -> None:
    dep = make_deployment(kafka_bootstrap, tmp_path, partitions=2)
    first, later = real_feed(200, "fit", seed=3), real_feed(60, "later", seed=4)
    reader = OutputReader(kafka_bootstrap, dep.names)
    try:
        worker = WorkerProcess.start(dep.env, "w", tmp_path)
        worker.wait_ready()
        send_lines(kafka_bootstrap, dep.names.events, first)
        reader.wait_for(ids_of(first), timeout=120)
        worker.stop()

        # Its own stores, another retention: refused before it joins the group, in one line.
        shorter = {**dep.env, "NEARDUP_RETENTION_DAYS": "1"}
        refused = subprocess.run(
            [sys.executable, "-m", "worker.cli", "worker", "--name", "w"],
            env=shorter,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert refused.returncode == 1, refused.stderr
        [line] = refused.stderr.strip().splitlines()
        assert "time buckets of" in line and "NEARDUP_RETENTION_DAYS" in line, line

        # No stores left, another plan: the changelogs' entries do not fit it; it stops, and the
        # events sent meanwhile are neither decided nor dead-lettered by it.
        shutil.rmtree(tmp_path / "state" / "w")
        send_lines(kafka_bootstrap, dep.names.events, later)
        other_plan = {**dep.env, "NEARDUP_EXPECTED_FINGERPRINTS": "1000"}
        mismatched = WorkerProcess.start(other_plan, "w", tmp_path)
        deadline = time.monotonic() + 120
        while mismatched.alive():
            assert time.monotonic() < deadline, mismatched.tail()
            time.sleep(0.5)
        assert mismatched.proc.returncode != 0
        assert "do not fit this worker's settings" in mismatched.text() or "stopping:" in mismatched.text()
        reader.settle()
        assert not [r for r in reader.records if r.topic == dep.names.deadletter]
        assert not ids_of(later) & reader.verdicted

        # The deployment's own settings again: every event gets its verdict.
        worker = WorkerProcess.start(dep.env, "w", tmp_path)
        try:
            worker.wait_ready()
            reader.wait_for(ids_of(first) | ids_of(later), timeout=180)
        finally:
            worker.stop()
        assert not [r for r in reader.records if r.topic == dep.names.deadletter]
    finally:
        reader.close()
