"""A deployment's settings record, on a real broker: its first worker writes it, and a worker of
other settings is refused before it joins, even with no store of its own to compare with."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from kafka import KafkaProducer

from tests.stream_helpers import MAX_TEXT, WorkerProcess, refused_worker, worker_env
from topology.topics import create_topics, group_members, topics
from worker.cli import deployment
from worker.cli import topics as topics_command
from worker.cli.deployment import DeploymentMismatch, agree_on_decision, check
from worker.settings import Settings

pytestmark = pytest.mark.kafka


def _deployment(bootstrap: str) -> Settings:
    prefix = f"d{uuid.uuid4().hex[:8]}"
    create_topics(bootstrap, topics(prefix, 2, 1))
    return Settings(bootstrap=bootstrap, topic_prefix=prefix, partitions=2)


def _records(bootstrap: str, topic: str) -> list[dict[str, object]]:
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, group_id=None)
    try:
        tp = TopicPartition(topic, 0)
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        end = consumer.end_offsets([tp])[tp]
        out: list[dict[str, object]] = []
        while consumer.position(tp) < end:
            for batch in consumer.poll(timeout_ms=1000).values():
                out.extend(json.loads(r.value) for r in batch)
        return out
    finally:
        consumer.close()


def _settings_records(bootstrap: str, settings: Settings) -> list[dict[str, object]]:
    """The settings records, without the thresholds each start records."""
    return [r for r in _records(bootstrap, f"{settings.topic_prefix}.settings") if "plan" in r]


def test_the_first_worker_records_its_settings_and_others_are_refused(kafka_bootstrap: str) -> None:
    settings = _deployment(kafka_bootstrap)
    check(settings, has_stores=False)
    [record] = _settings_records(kafka_bootstrap, settings)
    assert record["features"] == settings.stored_features and record["retention_ms"] == settings.retention_ms
    check(settings, has_stores=False)  # the same settings: let in, not recorded again
    assert len(_settings_records(kafka_bootstrap, settings)) == 1
    with pytest.raises(DeploymentMismatch, match=r"runs with NEARDUP_SHINGLE_N=2, not 1 \(recorded in d\w+\.settings"):
        check(settings.replace(shingle_n=1), has_stores=False)
    with pytest.raises(DeploymentMismatch, match=r"runs with plan 10x25\.\.26 \(k=3\), not 4x16 \(k=3\)"):
        check(settings.replace(expected_fingerprints=1000), has_stores=False)
    with pytest.raises(DeploymentMismatch, match=r"runs with NEARDUP_RETENTION_DAYS=7, not 2 "):
        check(settings.replace(retention_days=2), has_stores=False)


def test_of_two_first_workers_the_first_record_written_wins(kafka_bootstrap: str) -> None:
    settings = _deployment(kafka_bootstrap)
    check(settings.replace(short_bands=4), has_stores=False)
    producer = KafkaProducer(bootstrap_servers=kafka_bootstrap)  # the other's record, a moment later
    producer.send(
        f"{settings.topic_prefix}.settings", json.dumps({"plan": {}, "retention_ms": 1, "features": {}}).encode()
    )
    producer.flush()
    producer.close()
    check(settings.replace(short_bands=4), has_stores=False)
    with pytest.raises(DeploymentMismatch, match=r"NEARDUP_SHORT_BANDS=4, not 8"):
        check(settings, has_stores=False)


def test_a_deployment_from_before_the_record_is_recorded_by_a_worker_whose_stores_fit(kafka_bootstrap: str) -> None:
    """Its changelogs hold state of unknown settings: a worker without stores cannot vouch for
    them (let in with other fingerprint settings, it decided beside its peers unnoticed), one
    whose stores passed their own check can."""
    settings = _deployment(kafka_bootstrap)
    producer = KafkaProducer(bootstrap_servers=kafka_bootstrap)
    producer.send(f"{settings.topic_prefix}.index-changelog", b"[]", partition=1)
    producer.flush()
    producer.close()
    with pytest.raises(DeploymentMismatch, match=r"holds state but records no settings .* record-settings"):
        check(settings.replace(shingle_n=1), has_stores=False)
    assert _records(kafka_bootstrap, f"{settings.topic_prefix}.settings") == []
    check(settings, has_stores=True)
    assert [r["features"] for r in _settings_records(kafka_bootstrap, settings)] == [settings.stored_features]
    check(settings, has_stores=False)  # recorded now: a worker without stores is let in


def test_an_operator_records_the_settings_of_a_deployment_whose_workers_lost_their_state(
    kafka_bootstrap: str, tmp_path: Path
) -> None:
    settings = _deployment(kafka_bootstrap)
    env = worker_env(kafka_bootstrap, settings.topic_prefix, 2, tmp_path / "state")

    def record_settings(shingle_n: int) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "worker.cli", "topics", "record-settings"]
        shingles = {"NEARDUP_SHINGLE_N": str(shingle_n)}
        return subprocess.run(command, env={**env, **shingles}, capture_output=True, text=True, timeout=120)

    done = record_settings(1)
    assert done.returncode == 0 and '"NEARDUP_SHINGLE_N": 1' in done.stdout, done.stderr
    again = record_settings(2)
    assert again.returncode == 1 and "already records NEARDUP_SHINGLE_N=1, not 2" in again.stderr, again.stderr
    assert len(_settings_records(kafka_bootstrap, settings)) == 1


def test_a_worker_of_other_settings_without_stores_stops_in_one_line_before_joining(
    kafka_bootstrap: str, tmp_path: Path
) -> None:
    """Its stores could not tell it: it has none. Beside its peers it sent shares keyed by other
    tables, and copies of what they had stored passed as unique."""
    settings = _deployment(kafka_bootstrap)
    check(settings, has_stores=False)
    env = worker_env(kafka_bootstrap, settings.topic_prefix, 2, tmp_path / "state", 20)
    env["NEARDUP_SHORT_CHARS"] = "100"
    line = refused_worker(env, "w")
    assert line.startswith(
        f"neardup worker: deployment {settings.topic_prefix} runs with NEARDUP_SHORT_CHARS=300, not 100"
    )
    assert group_members(kafka_bootstrap, f"{settings.topic_prefix}-worker") == []


def test_thresholds_change_between_runs_but_not_beside_running_workers(
    kafka_bootstrap: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two workers of other thresholds decided an event by whichever held its partitions. Alone,
    a worker may decide anew (nothing stored depends on them); beside a running one it is refused."""
    monkeypatch.setattr(deployment, "_JOINING_S", 0.0)  # no start counts as joining: the next test's
    settings = _deployment(kafka_bootstrap)
    topic = f"{settings.topic_prefix}.settings"
    check(settings, has_stores=False)
    assert _records(kafka_bootstrap, topic)[0]["decision"] == settings.decision
    # No worker running: the new ones recorded (with the input limit the test's workers run with).
    changed = settings.replace(min_resemblance=0.7, max_text_bytes=MAX_TEXT)
    check(changed, has_stores=True)
    assert _records(kafka_bootstrap, topic)[-1]["decision"] == changed.decision
    env = worker_env(kafka_bootstrap, settings.topic_prefix, 2, tmp_path / "state", 20)
    env["NEARDUP_MIN_RESEMBLANCE"] = "0.7"
    worker = WorkerProcess.start(env, "w1", tmp_path)
    try:
        worker.wait_ready()
        strict = {**env, "NEARDUP_MIN_RESEMBLANCE": "0.99", "NEARDUP_MAX_DISTANCE": "2", "NEARDUP_MAX_ID_CHARS": "64"}
        line = refused_worker(strict, "w2")
        assert line.startswith(
            f"neardup worker: the running workers of deployment {settings.topic_prefix} decide with "
            "NEARDUP_MAX_DISTANCE=12, not 2 and NEARDUP_MIN_RESEMBLANCE=0.7, not 0.99 and "
            "NEARDUP_MAX_ID_CHARS=256, not 64 ("
        ), line
        assert len(group_members(kafka_bootstrap, f"{settings.topic_prefix}-worker")) == 1
    finally:
        worker.stop()
    check(settings, has_stores=True)  # every worker stopped: the defaults again
    assert _records(kafka_bootstrap, topic)[-1]["decision"] == settings.decision
    # A record of fewer of them (an older neardup's, naming no record it builds on) is compared
    # on those it names, and completed.
    older = {name: value for name, value in settings.decision.items() if name != "NEARDUP_MAX_DEPTH"}
    producer = KafkaProducer(bootstrap_servers=kafka_bootstrap)
    producer.send(topic, key=b"decision", value=json.dumps({"decision": older}).encode())
    producer.close()
    check(settings, has_stores=True)
    assert _records(kafka_bootstrap, topic)[-1]["decision"] == settings.decision


def test_a_worker_of_other_thresholds_is_refused_while_one_started_a_moment_ago(kafka_bootstrap: str) -> None:
    """A worker joins its group seconds after its check: not in the group yet, it is still running
    with the thresholds it recorded."""
    settings = _deployment(kafka_bootstrap)
    check(settings, has_stores=False)
    with pytest.raises(
        DeploymentMismatch,
        match=r"a worker of deployment d\w+ started \d+ s ago deciding with NEARDUP_MIN_RESEMBLANCE=0\.6, not 0\.7, "
        r"and may still be joining its group: .* a starting one counts for 30 s",
    ):
        check(settings.replace(min_resemblance=0.7), has_stores=True)
    check(settings, has_stores=True)  # its own thresholds: let in


def test_of_two_workers_starting_at_once_with_other_thresholds_the_first_recorded_wins(
    kafka_bootstrap: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both read the same thresholds and found no worker running; each records its own, built on
    what it read. Without the order of the records both started, and decided apart."""
    monkeypatch.setattr(deployment, "_JOINING_S", 0.0)  # the window is the test above's
    settings = _deployment(kafka_bootstrap)
    topic = f"{settings.topic_prefix}.settings"
    check(settings, has_stores=False)
    _, read_by_both, _ = deployment.read(settings, topic, "")
    check(settings.replace(min_resemblance=0.7), has_stores=True)  # the first to record
    with pytest.raises(
        DeploymentMismatch,
        match=r"another worker of deployment d\w+ started at the same moment deciding with "
        r"NEARDUP_MIN_RESEMBLANCE=0\.7, not 0\.8, and recorded them first",
    ):
        agree_on_decision(settings.replace(min_resemblance=0.8), topic, read_by_both)
    agree_on_decision(settings.replace(min_resemblance=0.7), topic, read_by_both)  # the winner's: let in
    _, in_force, _ = deployment.read(settings, topic, "")
    assert in_force.values == settings.replace(min_resemblance=0.7).decision


def test_an_operator_sees_the_thresholds_in_force(kafka_bootstrap: str, capsys: pytest.CaptureFixture[str]) -> None:
    settings = _deployment(kafka_bootstrap)
    topic = f"{settings.topic_prefix}.settings"
    assert topics_command.run(settings, "describe") == 0
    assert f"{topic}: no thresholds recorded yet" in capsys.readouterr().out
    check(settings.replace(min_resemblance=0.7), has_stores=False)
    assert topics_command.run(settings, "describe") == 0
    [line] = [line for line in capsys.readouterr().out.splitlines() if line.startswith(f"{topic}: deciding")]
    assert '"NEARDUP_MIN_RESEMBLANCE": 0.7' in line and "recorded by a start" in line, line
