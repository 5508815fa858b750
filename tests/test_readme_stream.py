"""The README's streaming commands, run as written on the real broker, end with its scan example's verdicts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from tests.test_readme import README, _transcript

pytestmark = pytest.mark.kafka


def _commands() -> list[list[str]]:
    block = README.split("## The streaming worker", 1)[1].split("```sh\n", 1)[1].split("\n```", 1)[0]
    return [line.split("#", 1)[0].split() for line in block.splitlines() if line.split("#", 1)[0].strip()]


def test_the_streaming_commands_give_the_scan_examples_verdicts(kafka_bootstrap: str, tmp_path: Path) -> None:
    commands = _commands()
    assert [c[:2] for c in commands] == [
        ["scripts/kafka-local", "start"],  # the test's own broker stands in for it
        ["neardup", "topics"],
        ["neardup", "worker"],
        ["neardup", "produce"],
        ["neardup", "tail"],
    ]
    assert "--from-beginning" in commands[4]  # a reader who starts it after produce sees the verdicts
    scan_steps = _transcript("## `neardup scan`")
    feed = scan_steps[0][0].split()[1]
    (tmp_path / feed).write_text("\n".join(scan_steps[0][1]) + "\n", encoding="utf-8")
    env = {
        **os.environ,
        "NEARDUP_BOOTSTRAP": kafka_bootstrap,
        "NEARDUP_TOPIC_PREFIX": f"rd{uuid.uuid4().hex[:8]}",
        "NEARDUP_STATE_DIR": str(tmp_path / "state"),
        # No web server: the README's worker would take the default port, which the demo's
        # test, maybe running at the same time, needs (a second worker there refuses to start).
        "NEARDUP_WEB_PORT": "0",
    }

    def neardup(args: list[str], *extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "worker.cli", *args[1:], *extra],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )

    assert neardup(commands[1]).returncode == 0
    with (tmp_path / "worker.log").open("wb") as log:
        worker = subprocess.Popen(
            [sys.executable, "-m", "worker.cli", *commands[2][1:]], cwd=tmp_path, env=env, stdout=log, stderr=log
        )
    try:
        produced = neardup(commands[3])
        assert produced.returncode == 0, produced.stderr
        # Piped, tail prints JSON lines; it is told when to stop, as a reader at a terminal would be.
        tailed = neardup(commands[4], "--timeout", "15")
    finally:
        worker.terminate()
        worker.wait(timeout=30)
    # At the default log level, the one line that says the worker came up and where it reads.
    lines = (tmp_path / "worker.log").read_text(encoding="utf-8").splitlines()
    started, stopped = lines[0], lines[-1]
    assert started.startswith(f"neardup worker w1: reading {env['NEARDUP_TOPIC_PREFIX']}.events from {kafka_bootstrap}")
    assert started.endswith("HTTP off")
    # And, stopped by a signal, the one line that says what the run did.
    valid = len(scan_steps[2][1])
    assert stopped.startswith(
        f"neardup worker w1: stopped on SIGTERM; this run: events {valid}, dead-lettered 1, verdicts {valid}"
    )
    records = [json.loads(line) for line in tailed.stdout.splitlines()]
    verdicts = {r["key"]: r["value"] for r in records if r["topic"].endswith((".unique", ".duplicates"))}
    # Four partitions: a1 and a2 may race to their shared buckets, and a2 be published unique
    # before a1 arrives; then a correction follows. What a reader ends up with is scan's verdict.
    for record in records:
        if record["topic"].endswith(".corrections"):
            fixed = record["value"]
            verdicts[record["key"]] = {**verdicts[record["key"]], **fixed, "verdict": "duplicate"}
    shown = {v["id"]: v for v in map(json.loads, scan_steps[2][1])}
    fields = ("verdict", "duplicate_of", "distance", "similarity", "fingerprint")
    assert {i: {k: v[k] for k in fields} for i, v in verdicts.items()} == {
        i: {k: v[k] for k in fields} for i, v in shown.items()
    }
    [dead] = [r["value"] for r in records if r["topic"].endswith(".deadletter")]
    assert "field 'id' must be a string" in dead["reason"]
