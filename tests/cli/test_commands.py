"""What a user meets first: a command that cannot reach Kafka, asks for help, or is mistyped.

Every command runs as a user runs it (``python -m worker.cli``), in a subprocess.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
import uuid
from importlib import metadata
from pathlib import Path

import pytest

from tests.kafka_broker import free_port_pair
from tests.stream_helpers import (
    REPO,
    OutputReader,
    WorkerProcess,
    send_lines,
    verdicts_by_id,
    wait_for_members,
    worker_env,
)
from topology.stages import Topics
from topology.topics import create_topics, describe_topics, topics
from worker.cli.parser import build_parser

KAFKA_COMMANDS = [
    ["topics", "create"],
    ["topics", "describe"],
    ["produce", "sample"],
    ["tail"],
    ["worker", "--name", "w"],
]


def neardup(*args: str, env: dict[str, str] | None = None) -> tuple[subprocess.CompletedProcess[str], float]:
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "worker.cli", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
    )
    return proc, time.monotonic() - started


@pytest.mark.parametrize("command", KAFKA_COMMANDS, ids=lambda c: " ".join(c[:2]))
def test_an_unreachable_broker_is_one_line_naming_it_and_what_to_do(command: list[str]) -> None:
    address = f"127.0.0.1:{free_port_pair()}"
    proc, took = neardup(*command, "--bootstrap", address)
    assert proc.returncode == 1
    assert took < 10
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    port = address.rsplit(":", 1)[1]
    assert (
        address in lines[0] and f"`KAFKA_PORT={port} make kafka-start`" in lines[0] and "NEARDUP_BOOTSTRAP" in lines[0]
    )
    assert proc.stdout == ""  # no summary of records it never read


def test_an_unreachable_remote_broker_is_not_told_to_start_a_local_one() -> None:
    proc, took = neardup("topics", "describe", "--bootstrap", "kafka.nosuchhost.invalid:9092")
    assert proc.returncode == 1 and took < 10
    (line,) = proc.stderr.strip().splitlines()
    assert "cannot reach Kafka at kafka.nosuchhost.invalid:9092" in line and "check the address" in line
    assert "make kafka-start" not in line


def test_a_mistyped_setting_is_named_and_the_command_still_runs() -> None:
    proc, _ = neardup("plan", env={"NEARDUP_MAX_DISTENCE": "3"})
    assert proc.returncode == 0 and proc.stdout.startswith("plan ")
    assert proc.stderr == (
        "neardup plan: NEARDUP_MAX_DISTENCE is not a setting of neardup and is ignored "
        "(did you mean NEARDUP_MAX_DISTANCE?)\n"
    )


def test_the_environment_picks_the_broker_too_and_debug_shows_the_traceback() -> None:
    address = f"127.0.0.1:{free_port_pair()}"
    proc, _ = neardup("tail", env={"NEARDUP_BOOTSTRAP": address})
    assert proc.returncode == 1 and address in proc.stderr and "Traceback" not in proc.stderr
    proc, _ = neardup("tail", "--debug", env={"NEARDUP_BOOTSTRAP": address})
    assert proc.returncode == 1 and "Traceback" in proc.stderr and address in proc.stderr


def test_a_blank_bootstrap_is_refused_by_name() -> None:
    proc, _ = neardup("topics", "describe", env={"NEARDUP_BOOTSTRAP": "  "})
    assert proc.returncode == 1
    assert (
        proc.stderr.strip()
        == "neardup topics: no Kafka bootstrap server given (--bootstrap host:port, or NEARDUP_BOOTSTRAP)"
    )


def test_topics_describe_fails_when_a_topic_is_missing(kafka_bootstrap: str) -> None:
    proc, _ = neardup(
        "topics", "describe", env={"NEARDUP_BOOTSTRAP": kafka_bootstrap, "NEARDUP_TOPIC_PREFIX": "nowhere"}
    )
    assert proc.returncode == 1
    assert proc.stdout.count(" missing\n") == 10
    assert proc.stderr.strip() == "neardup topics: 10 of 10 topics missing: `neardup topics create` makes them"


def test_a_partition_count_other_than_the_topics_is_refused_before_anything_runs(
    kafka_bootstrap: str, tmp_path: Path
) -> None:
    """A worker routing over 2 partitions beside peers routing over the topics' 4 sent shares and
    answers where nobody gathered them: those events never got a verdict, and nothing said so."""
    env = {"NEARDUP_BOOTSTRAP": kafka_bootstrap, "NEARDUP_TOPIC_PREFIX": f"pc{uuid.uuid4().hex[:8]}"}
    created, _ = neardup("topics", "create", "--partitions", "4", env=env)
    assert created.returncode == 0, created.stderr
    proc, took = neardup("worker", "--name", "w", "--partitions", "2", "--state", str(tmp_path), env=env)
    assert proc.returncode == 1 and took < 30
    [line] = proc.stderr.strip().splitlines()
    assert "probes has 4" in line and "routes over 2" in line and "start it with --partitions 4" in line
    proc, _ = neardup("topics", "describe", "--partitions", "8", env=env)
    assert proc.returncode == 1
    assert proc.stdout.count("(configured: 8)") == 4  # the internal topics and changelogs
    prefix = env["NEARDUP_TOPIC_PREFIX"]
    assert (
        f"{prefix}.probes, {prefix}.answers, " in proc.stderr and "have another partition count than 8" in proc.stderr
    )


def test_a_retention_longer_than_the_changelogs_keep_is_refused_before_anything_runs(
    kafka_bootstrap: str, tmp_path: Path
) -> None:
    """`topics create` keeps existing topics as they are, so a worker given a longer retention
    restored, after losing its state, only what the changelogs still held: fewer days, silently."""
    env = {"NEARDUP_BOOTSTRAP": kafka_bootstrap, "NEARDUP_TOPIC_PREFIX": f"rt{uuid.uuid4().hex[:8]}"}
    created, _ = neardup("topics", "create", env=env)
    assert created.returncode == 0, created.stderr
    longer = {**env, "NEARDUP_RETENTION_DAYS": "14"}
    proc, took = neardup("worker", "--name", "w", "--state", str(tmp_path), env=longer)
    assert proc.returncode == 1 and took < 30
    [line] = proc.stderr.strip().splitlines()
    assert "index-changelog keeps 7 days" in line and "NEARDUP_RETENTION_DAYS=7" in line, line


def test_topics_delete_refuses_while_a_worker_runs(kafka_bootstrap: str, tmp_path: Path) -> None:
    """Deleting a running deployment's topics took its verdicts and state in half a second,
    with no question asked; the workers then said healthy while their topics were gone."""
    prefix = f"td{uuid.uuid4().hex[:8]}"
    env = worker_env(kafka_bootstrap, prefix, 2, tmp_path / "state")
    create_topics(kafka_bootstrap, topics(prefix, 2, 1))
    worker = WorkerProcess.start(env, "w", tmp_path)
    try:
        worker.wait_ready()
        wait_for_members(kafka_bootstrap, f"{prefix}-worker", 1)
        proc, _ = neardup("topics", "delete", env=env)
        assert proc.returncode == 1 and proc.stdout == ""
        assert f"1 worker of {prefix}-worker running (http://" in proc.stderr and "--force" in proc.stderr
        assert " on 127.0.0.1); " in proc.stderr, proc.stderr  # its address, then the host it connects from
        assert all(row["exists"] for row in describe_topics(kafka_bootstrap, topics(prefix, 2, 1)))
        proc, _ = neardup("topics", "delete", "--force", env=env)
        assert proc.returncode == 0 and f"deleted {prefix}.events" in proc.stdout
    finally:
        worker.stop()


def test_version() -> None:
    proc, _ = neardup("--version")
    assert proc.returncode == 0
    assert proc.stdout.strip() == f"neardup {metadata.version('neardup')}"


def test_every_option_of_every_command_is_described() -> None:
    parser = build_parser()
    undescribed = []
    subcommands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, sub in subcommands.choices.items():
        for action in sub._actions:
            if not (action.help or "").strip():
                undescribed.append(f"{name} {'/'.join(action.option_strings) or action.dest}")
    assert undescribed == []
    assert {"worker", "produce", "tail", "topics"} <= {
        name for name, sub in subcommands.choices.items() if "--bootstrap" in sub.format_help()
    }


def test_a_mistyped_option_shows_the_subcommands_usage() -> None:
    proc, _ = neardup("plan", "--tables", "10")
    assert proc.returncode == 2
    assert proc.stderr.startswith("usage: neardup plan ")
    assert "unrecognized arguments: --tables 10" in proc.stderr


def test_an_option_cut_short_is_refused_not_read_as_the_one_it_begins(tmp_path: Path) -> None:
    """argparse reads "--stat" as "--state" by default: a typo made a state directory."""
    sample = REPO / "worker" / "data" / "sample_feed.jsonl"
    proc, _ = neardup("scan", str(sample), "-o", str(tmp_path / "out.jsonl"), "--stat", str(tmp_path / "x"))
    assert proc.returncode == 2
    assert "unrecognized arguments: --stat" in proc.stderr
    assert not (tmp_path / "x").exists()
    assert not (tmp_path / "out.jsonl").exists()


def test_an_impossible_plan_lists_each_valid_plan_once() -> None:
    proc, _ = neardup("plan", "--plan", "99x99")
    assert proc.returncode == 1
    listed = re.search(r"plans that do \(tables x key bits\): (.*)$", proc.stderr.strip())
    assert listed is not None, proc.stderr
    plans = listed.group(1).split(", ")
    assert len(plans) == len(set(plans)) >= 3


@pytest.mark.parametrize("rate", ["-5", "1e-300", "inf"])  # a tiny rate overflowed the pacing's sleep
def test_a_rate_out_of_range_is_refused_before_any_broker_is_asked(rate: str) -> None:
    proc, took = neardup("produce", "sample", "--rate", rate, "--bootstrap", f"127.0.0.1:{free_port_pair()}")
    assert proc.returncode == 2 and took < 10
    last = proc.stderr.strip().splitlines()[-1]
    assert last == f"neardup produce: error: argument --rate: {rate} is not a rate of at least 0.001 events/s"


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["produce", "x", "--rate", "abc"], "argument --rate: 'abc' is not a number"),
        (["tail", "--max", "-1"], "argument --max: -1 is not a number of records (1 or more)"),
        (["tail", "--max", "0"], "argument --max: 0 is not a number of records (1 or more)"),
        (["tail", "--max", "2.5"], "argument --max: '2.5' is not a whole number"),
        (["tail", "--timeout", "-5"], "argument --timeout: -5 is not a number of seconds (0 or more)"),
        (["tail", "--timeout", "soon"], "argument --timeout: 'soon' is not a number"),
    ],
)
def test_a_bad_value_is_refused_in_the_users_words(args: list[str], error: str) -> None:
    proc, took = neardup(*args, "--bootstrap", f"127.0.0.1:{free_port_pair()}")
    assert proc.returncode == 2 and took < 10
    assert proc.stderr.strip().splitlines()[-1] == f"neardup {args[0]}: error: {error}"
    assert "_positive" not in proc.stderr


def test_a_timeout_of_zero_is_taken_it_ends_tail_at_the_first_empty_poll() -> None:
    args = build_parser().parse_args(["tail", "--timeout", "0", "--max", "1"])
    assert (args.timeout, args.max) == (0.0, 1)


@pytest.mark.parametrize("command", [["plan"], ["scan", "sample"]], ids=lambda c: c[0])
def test_a_reader_that_goes_away_ends_the_command_quietly(command: list[str]) -> None:
    """``neardup … | head -1``: no "Broken pipe" message, the status of a command SIGPIPE ended."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "worker.cli", *command], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # gone before the first line is written
    stderr = proc.stderr.read()
    assert (proc.wait(timeout=60), stderr) == (141, "")


def test_every_command_says_what_it_does_in_its_help() -> None:
    subcommands = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    undescribed = [name for name, sub in subcommands.choices.items() if not (sub.description or "").strip()]
    assert undescribed == []
    proc, _ = neardup("plan", "--help")
    assert proc.returncode == 0 and "How the fingerprint is cut into block tables" in proc.stdout


def test_a_deployment_deleted_and_made_again_does_not_answer_from_a_workers_old_stores(
    kafka_bootstrap: str, tmp_path: Path
) -> None:
    """An operator deleted a deployment's topics, made them again, ran another worker, and then
    restarted the first on its state directory: its stores, restored from where their
    checkpoints pointed in the new changelogs (which had grown past them), called a new event a
    copy of one the new deployment never had."""
    prefix = f"re{uuid.uuid4().hex[:8]}"
    env = worker_env(kafka_bootstrap, prefix, 2, tmp_path / "state")
    names = Topics(prefix)
    story = "The city council voted on Tuesday to close the old harbour bridge to all traffic from next spring."
    logs: list[WorkerProcess] = []
    others = [f"Story number {n}: {' '.join(uuid.uuid4().hex[:6] for _ in range(12))}" for n in range(40)]

    def decide(name: str, events: dict[str, str]) -> dict[str, dict[str, object]]:
        worker = WorkerProcess.start(env, name, tmp_path)
        logs.append(worker)
        reader = OutputReader(kafka_bootstrap, names)
        try:
            worker.wait_ready()
            lines = [json.dumps({"id": i, "text": text}).encode() for i, text in events.items()]
            send_lines(kafka_bootstrap, names.events, lines)
            reader.wait_for(set(events), timeout=60)
            return {i: found[0] for i, found in verdicts_by_id(reader.records, names).items()}
        finally:
            reader.close()
            worker.stop()

    assert decide("w", {"first": story})["first"]["verdict"] == "unique"
    assert f"neardup worker w: created a new deployment {prefix} (" in logs[0].text()  # no `topics create` before
    assert neardup("topics", "delete", env=env)[0].returncode == 0
    assert neardup("topics", "create", env=env)[0].returncode == 0
    # Another worker fills the new changelogs past the old stores' checkpoints.
    decide("v", {f"o{n}": text for n, text in enumerate(others)})
    again = decide("w", {"again": story})["again"]
    assert again["verdict"] == "unique", again  # the deployment holds no "first"
    assert "its stores were of an earlier deployment" in logs[-1].text()
    assert "created" not in logs[-1].text()  # `topics create` made them
