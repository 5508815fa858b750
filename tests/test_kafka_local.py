"""``scripts/kafka-local`` keeps what it downloads under ``NEARDUP_CACHE``, Maven's repository too."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.kafka_broker import free_port_pair

ROOT = Path(__file__).resolve().parents[1]


def test_maven_resolves_the_broker_into_the_cache_not_home(tmp_path: Path) -> None:
    """A first start with an empty cache runs Maven; a stand-in ``mvn`` on PATH records how it
    is called (and fails, so nothing is fetched: the arguments are what this test is about)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "mvn-args"
    (bin_dir / "mvn").write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > {calls}\nexit 1\n', encoding="utf-8")
    (bin_dir / "mvn").chmod(0o755)
    cache = tmp_path / "cache"
    port = free_port_pair()
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "NEARDUP_CACHE": str(cache),
        "KAFKA_PORT": str(port),
        "KAFKA_CONTROLLER_PORT": str(port + 1),
    }
    proc = subprocess.run(
        [str(ROOT / "scripts" / "kafka-local"), "start"], env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode != 0 and "maven could not resolve" in proc.stderr
    assert f"-Dmaven.repo.local={cache}/m2" in calls.read_text(encoding="utf-8").splitlines()


def test_help_is_an_answer_not_an_error() -> None:
    proc = subprocess.run([str(ROOT / "scripts" / "kafka-local"), "--help"], capture_output=True, text=True, timeout=10)
    assert proc.returncode == 0 and proc.stdout.startswith("usage:") and "start|stop|status" in proc.stdout
    wrong = subprocess.run([str(ROOT / "scripts" / "kafka-local"), "begin"], capture_output=True, text=True, timeout=10)
    assert wrong.returncode == 2 and wrong.stderr.startswith("usage:")
