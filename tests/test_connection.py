"""What a command says when the bootstrap address is wrong, before any Kafka client waits on it."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest

from worker.stream.connection import Connection, Unreachable


@contextmanager
def server(reply: Callable[[socket.socket], None]) -> Iterator[str]:
    """A TCP server on a free port that runs ``reply`` on each connection; its address."""
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve() -> None:
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            with conn:
                reply(conn)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        thread.join()
        listener.close()


def http_reply(conn: socket.socket) -> None:
    conn.recv(1024)
    conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")


def silence(conn: socket.socket) -> None:
    time.sleep(1.5)


def connection(bootstrap: str) -> Connection:
    return Connection.parse(bootstrap, "PLAINTEXT", "", "", "", "")


@pytest.mark.parametrize("reply", [http_reply, silence])
def test_a_port_that_is_not_a_kafka_broker_is_named_within_the_timeout(reply: Callable[[socket.socket], None]) -> None:
    """A worker's HTTP port given as the bootstrap held the clients 30 s, then "Unable to bootstrap"."""
    with server(reply) as address:
        started = time.monotonic()
        with pytest.raises(
            Unreachable, match=f"{address} \\(it accepts connections but does not answer as a Kafka"
        ) as err:
            connection(address).check_reachable(timeout_s=1.0)
        assert time.monotonic() - started < 1.5
    # Not told to start a broker on a port another program holds (an operator's try was).
    assert "is another program's" in str(err.value) and "KAFKA_PORT" not in str(err.value), err.value


@pytest.mark.parametrize("bootstrap", ["host:notaport", "host:70000", "kafka://host:0", "[::1]:x"])
def test_a_bootstrap_server_without_a_valid_port_is_refused_by_name(bootstrap: str) -> None:
    with pytest.raises(ValueError, match="has no valid port"):
        connection(bootstrap)


def test_hosts_without_a_port_and_ipv6_addresses_are_kept() -> None:
    assert connection("broker1, [::1]:9093,kafka://b:19092").servers == ("broker1", "[::1]:9093", "kafka://b:19092")


def test_a_host_given_without_a_port_is_named_with_the_port_assumed(monkeypatch: pytest.MonkeyPatch) -> None:
    """``NEARDUP_BOOTSTRAP=localhost`` said "cannot reach Kafka at localhost", not which port it tried."""
    with server(http_reply) as address:
        port = int(address.rsplit(":", 1)[1])
        monkeypatch.setattr("worker.stream.connection._DEFAULT_PORT", port)
        with pytest.raises(Unreachable, match=f"at 127.0.0.1 \\(port {port} assumed\\) \\(it accepts"):
            connection("127.0.0.1").check_reachable(timeout_s=1.0)
