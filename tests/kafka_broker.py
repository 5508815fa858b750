"""Pytest plugin giving tests a real Kafka broker: ``kafka_bootstrap`` and ``@pytest.mark.kafka``.

With ``NEARDUP_BOOTSTRAP`` set, tests use that cluster. Otherwise one private single-node broker
is started through ``scripts/kafka-local`` for the session (own port, own fresh data directory)
and stopped at the end. A broker that cannot be had is a test failure, never a skip: a green run
must mean the Kafka paths really ran.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
KAFKA_LOCAL = REPO / "scripts" / "kafka-local"
FIRST_PORT = 19092
# The first start resolves the broker from Maven Central; later ones take seconds.
START_TIMEOUT_S = 600.0


@dataclass(frozen=True)
class LocalBroker:
    """A broker started by ``scripts/kafka-local``; ``env`` is what addresses it for stop."""

    bootstrap: str
    log_file: Path
    env: dict[str, str]


def _free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port_pair(first: int | None = None, attempts: int = 50) -> int:
    """A client port whose controller port (port + 1) is free too, so parallel sessions coexist
    (each of pytest-xdist's processes looks in its own range, so two never take the same pair)."""
    if first is None:
        first = FIRST_PORT + 2 * attempts * int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw") or 0)
    for port in range(first, first + 2 * attempts, 2):
        if _free(port) and _free(port + 1):
            return port
    raise RuntimeError(f"no free pair of ports in {first}..{first + 2 * attempts}")


def _wait_released(port: int, timeout_s: float = 60.0) -> None:
    """Until ``port`` and its controller port are free, or ``timeout_s``: a broker started again
    on its old port (a restart) must not race the old one's exit on a loaded machine."""
    deadline = time.monotonic() + timeout_s
    while not (_free(port) and _free(port + 1)) and time.monotonic() < deadline:
        time.sleep(0.5)


def start_local_broker(workdir: Path, port: int | None = None) -> LocalBroker:
    """Start a private broker with its data and log under ``workdir``; raises with the log on failure."""
    if port is None:
        port = free_port_pair()
    else:
        _wait_released(port)
    run_dir = workdir / "run"
    env = {
        **os.environ,
        "KAFKA_PORT": str(port),
        "KAFKA_CONTROLLER_PORT": str(port + 1),
        "KAFKA_DATA_DIR": str(workdir / "data"),
        "KAFKA_RUN_DIR": str(run_dir),
        "PYTHON": sys.executable,
    }
    broker = LocalBroker(bootstrap=f"127.0.0.1:{port}", log_file=run_dir / "kafka.log", env=env)
    try:
        result = subprocess.run(
            [str(KAFKA_LOCAL), "start"],
            env=env,
            capture_output=True,
            text=True,
            timeout=START_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        stop_local_broker(broker)
        raise RuntimeError(
            f"scripts/kafka-local start took over {START_TIMEOUT_S:.0f}s; log: {broker.log_file}"
        ) from exc
    if result.returncode != 0:
        raise RuntimeError(
            f"scripts/kafka-local start exited {result.returncode}; log: {broker.log_file}\n{result.stderr}"
        )
    return broker


def stop_local_broker(broker: LocalBroker) -> None:
    """Stop the broker (SIGTERM, then SIGKILL after 30 s) so no JVM outlives the session."""
    subprocess.run([str(KAFKA_LOCAL), "stop"], env=broker.env, capture_output=True, timeout=60, check=False)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "kafka: needs the real Kafka broker (fails, never skips, without one)")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests that ask for the broker are marked ``kafka`` so ``-m "not kafka"`` can leave them out."""
    for item in items:
        if "kafka_bootstrap" in getattr(item, "fixturenames", ()) and item.get_closest_marker("kafka") is None:
            item.add_marker(pytest.mark.kafka)


@pytest.fixture(scope="session")
def kafka_bootstrap(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Bootstrap servers of a real broker for the whole session."""
    external = os.environ.get("NEARDUP_BOOTSTRAP", "").strip()
    if external:
        yield external
        return
    try:
        broker = start_local_broker(tmp_path_factory.mktemp("kafka"))
    except (RuntimeError, OSError) as exc:
        pytest.fail(f"no Kafka broker for the tests: {exc}", pytrace=False)
    try:
        yield broker.bootstrap
    finally:
        stop_local_broker(broker)


@pytest.fixture(autouse=True)
def _kafka_for_marked_tests(request: pytest.FixtureRequest) -> None:
    """``@pytest.mark.kafka`` alone is enough to bring the broker up before the test."""
    if request.node.get_closest_marker("kafka") is not None:
        request.getfixturevalue("kafka_bootstrap")
