"""``make demo`` on the real broker: verdicts read in the stream's order, explained, nothing left behind."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from kafka import KafkaAdminClient

from tests.stream.web_helpers import call, free_port
from tests.stream_helpers import REPO, wait_for_members

pytestmark = pytest.mark.kafka


def test_the_demo_shows_originals_first_explains_the_numbers_and_cleans_up(
    kafka_bootstrap: str, tmp_path: Path
) -> None:
    """With KEEP_WORKER the worker stays for a newcomer's `neardup explain` until Ctrl-C."""
    env = {
        **os.environ,
        "NEARDUP_BOOTSTRAP": kafka_bootstrap,
        "BIN": str(Path(sys.executable).parent),
        "RATE": "100",
        "TMPDIR": str(tmp_path),
        # Not the default port: another test's worker may hold it (CI failed so once).
        "NEARDUP_WEB_PORT": str(port := free_port()),
        "KEEP_WORKER": "1",
    }
    env.pop("NEARDUP_TOPIC_PREFIX", None)
    env.pop("NEARDUP_STATE_DIR", None)
    proc = subprocess.Popen(
        ["scripts/demo"], cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stderr is not None
    watchdog = threading.Timer(300, proc.kill)  # a demo that hangs ends the test, not the run
    watchdog.start()
    try:
        lines = []
        while (line := proc.stdout.readline()) and not line.startswith("== the worker keeps running"):
            lines.append(line.rstrip("\n"))
        assert line, "the demo ended without keeping its worker"
        duplicate = next(m.group(1) for text in lines if (m := re.match(r"duplicate +(\S+) +of ", text)))
        status, explained = call(f"http://127.0.0.1:{port}/explain/{duplicate}")
        assert status == 200 and explained["verdict"] == "duplicate", explained
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 0, proc.stderr.read()[-2000:]
    finally:
        watchdog.cancel()
        if proc.poll() is None:
            proc.kill()
    stdout = "\n".join(lines)
    assert any(line.startswith("distance: how many of the 64 fingerprint bits differ") for line in lines)
    assert f"== live page: http://127.0.0.1:{port}/" in stdout

    shown: set[str] = set()
    corrections = 0
    for line in lines:
        corrections += line.startswith("correction ")
        match = re.match(r"(unique|duplicate) +(\S+)(?: +of (\S+))?", line)
        if not match:
            continue
        kind, event_id, original = match.groups()
        assert event_id not in shown, f"{event_id} shown twice"
        if kind == "duplicate":
            assert original in shown, f"{event_id} shown before its original {original}"
            assert re.search(r"distance \d+/64 bits", line)
        shown.add(event_id)
    # The demo shows as many records as the sample has events; a rare race adds a correction
    # record, which then takes the place of the last verdict.
    sample = (REPO / "worker" / "data" / "sample_feed.jsonl").read_text(encoding="utf-8")
    assert len(shown) + corrections == len(sample.splitlines())
    assert corrections <= 5

    prefix = re.search(r"== topics \(prefix (\S+)\)", stdout)
    assert prefix is not None
    admin = KafkaAdminClient(bootstrap_servers=kafka_bootstrap)
    try:
        deadline = time.monotonic() + 15
        while (
            left := [t for t in admin.list_topics() if t.startswith(prefix.group(1))]
        ) and time.monotonic() < deadline:
            time.sleep(0.5)
    finally:
        admin.close()
    assert left == []
    assert [p.name for p in tmp_path.iterdir()] == []  # the state directory (and its log) is gone


def test_a_worker_that_cannot_start_ends_the_demo_before_its_replay(kafka_bootstrap: str, tmp_path: Path) -> None:
    """A taken web port stops the worker at once; the demo says so then, not after tail's
    quiet minute of waiting for verdicts that cannot come."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        env = {
            **os.environ,
            "NEARDUP_BOOTSTRAP": kafka_bootstrap,
            "BIN": str(Path(sys.executable).parent),
            "TMPDIR": str(tmp_path),
            "NEARDUP_WEB_PORT": str(taken.getsockname()[1]),
        }
        env.pop("NEARDUP_TOPIC_PREFIX", None)
        env.pop("NEARDUP_STATE_DIR", None)
        started = time.monotonic()
        proc = subprocess.run(["scripts/demo"], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
        took = time.monotonic() - started
    assert proc.returncode != 0
    assert "== the worker stopped early:" in proc.stderr
    assert "cannot serve HTTP" in proc.stderr, proc.stderr[-2000:]
    assert "== replaying" not in proc.stdout
    assert took < 60, f"the demo took {took:.0f} s to say its worker had stopped"


def test_a_worker_logging_to_a_file_writes_no_terminal_codes(kafka_bootstrap: str, tmp_path: Path) -> None:
    """At the default log level Faust draws a start-up spinner; into a file it wrote cursor codes."""
    env = {
        **os.environ,
        "NEARDUP_BOOTSTRAP": kafka_bootstrap,
        "NEARDUP_TOPIC_PREFIX": f"spin{os.getpid()}",
        "NEARDUP_STATE_DIR": str(tmp_path / "state"),
        "NEARDUP_WEB_PORT": "0",  # the default port may be another test's
    }
    log = tmp_path / "worker.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "worker.cli", "worker", "--name", "w"], cwd=REPO, env=env, stdout=out, stderr=out
        )
        try:
            # A stable group member has finished Faust's start-up, spinner and all.
            wait_for_members(kafka_bootstrap, f"{env['NEARDUP_TOPIC_PREFIX']}-worker", 1)
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    assert b"\x1b" not in log.read_bytes()
