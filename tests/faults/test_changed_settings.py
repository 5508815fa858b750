"""A worker started with settings that do not fit the deployment's stores: it must stop, saying
why, and lose nothing; it dead-lettered every event while /healthz said healthy."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from kafka import KafkaAdminClient

from tests.faults.deployment import make_deployment
from tests.stream_helpers import OutputReader, WorkerProcess, ids_of, real_feed, refused_worker, send_lines
from topology.stages import Topics

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
        line = refused_worker(shorter, "w")
        assert "time buckets of" in line and "NEARDUP_RETENTION_DAYS" in line, line

        # No stores left, another plan: the deployment's record refuses it before it joins.
        shutil.rmtree(tmp_path / "state" / "w")
        send_lines(kafka_bootstrap, dep.names.events, later)
        other_plan = {**dep.env, "NEARDUP_EXPECTED_FINGERPRINTS": "1000"}
        line = refused_worker(other_plan, "w")
        assert f"deployment {dep.prefix} runs with plan 10x" in line and "not 4x16" in line, line

        # A deployment from before that record (its topic gone): a worker without stores cannot
        # show its settings, and is refused until they are recorded.
        _delete_topic(kafka_bootstrap, dep.names.settings)
        assert "holds state but records no settings" in refused_worker(other_plan, "w")
        # Recorded wrong by hand: the changelogs' entries do not fit the plan; it stops, and the
        # events sent meanwhile are neither decided nor dead-lettered by it.
        subprocess.run([sys.executable, "-m", "worker.cli", "topics", "record-settings"], env=other_plan, check=True)
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

        # The record made right and the deployment's own settings again: every event gets its verdict.
        _delete_topic(kafka_bootstrap, dep.names.settings)
        subprocess.run([sys.executable, "-m", "worker.cli", "topics", "record-settings"], env=dep.env, check=True)
        worker = WorkerProcess.start(dep.env, "w", tmp_path)
        try:
            worker.wait_ready()
            reader.wait_for(ids_of(first) | ids_of(later), timeout=180)
        finally:
            worker.stop()
        assert not [r for r in reader.records if r.topic == dep.names.deadletter]
    finally:
        reader.close()


def _delete_topic(bootstrap: str, name: str) -> None:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        admin.delete_topics([name])
        deadline = time.monotonic() + 30
        while name in admin.list_topics():
            assert time.monotonic() < deadline, f"{name} still listed 30 s after its deletion"
            time.sleep(0.2)
    finally:
        admin.close()


def _run(
    dep_env: dict[str, str], names: Topics, bootstrap: str, tmp: Path, lines: list[bytes], rate: float | None
) -> str:
    """One worker named "same" through ``lines``: its log; the deployment's verdicts must all come."""
    reader = OutputReader(bootstrap, names)
    worker = WorkerProcess.start(dep_env, "same", tmp)
    try:
        worker.wait_ready()
        send_lines(bootstrap, names.events, lines, rate=rate)
        reader.wait_for(ids_of(lines), timeout=120)
    finally:
        worker.stop()
        reader.close()
    return worker.text()


def test_a_state_directory_of_another_deployment_is_rebuilt_not_reused(kafka_bootstrap: str, tmp_path: Path) -> None:
    """Two deployments run from one directory share ``./state/<host>``: a store checkpointed in one
    was caught up with the other's changelog from that offset on, and called the other's events
    copies of events it never saw (its changelog had grown past the checkpoint meanwhile)."""
    a = make_deployment(kafka_bootstrap, tmp_path, partitions=1)
    b = make_deployment(kafka_bootstrap, tmp_path, partitions=1)
    a_env_elsewhere = {**a.env, "NEARDUP_STATE_DIR": str(tmp_path / "a-state")}
    a_lines, b_lines = real_feed(30, "a", seed=6), real_feed(30, "b", seed=8)
    copies = [json.dumps({**json.loads(line), "id": "copy-" + json.loads(line)["id"]}).encode() for line in b_lines]
    _run(a_env_elsewhere, a.names, kafka_bootstrap, tmp_path, a_lines, rate=30)  # a long changelog
    _run(b.env, b.names, kafka_bootstrap, tmp_path, b_lines, rate=None)  # a short one, in the shared directory
    log = _run(a.env, a.names, kafka_bootstrap, tmp_path, copies, rate=None)  # a again, in the shared directory
    reader = OutputReader(kafka_bootstrap, a.names)
    reader.settle()
    reader.close()
    named = {r.value["duplicate_of"] for r in reader.records if r.topic == a.names.duplicates}
    assert not named & ids_of(b_lines), sorted(named & ids_of(b_lines))[:5]
    assert f"its stores were of deployment {b.prefix}, which shares this state directory: removed" in log
