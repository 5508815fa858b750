"""How every client of neardup reaches Kafka, derived once from the settings.

The worker (Faust), its own aiokafka clients (changelog restore, exactly-once producers),
``neardup produce``, ``tail`` and topic admin (kafka-python) all connect through one
:class:`Connection`, so a security setting cannot reach some clients and miss others.
"""

from __future__ import annotations

import socket
import ssl
import struct
import time
from dataclasses import dataclass
from typing import Any

PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
_DEFAULT_PORT = 9092


class Unreachable(ConnectionError):
    """No bootstrap server accepted a connection; the message says which were tried and what to do."""


@dataclass(frozen=True)
class Connection:
    """Bootstrap servers and security, checked; rendered for each client library."""

    servers: tuple[str, ...]
    protocol: str = "PLAINTEXT"
    sasl_mechanism: str = ""
    sasl_username: str = ""
    sasl_password: str = ""
    ssl_cafile: str = ""

    def __post_init__(self) -> None:
        if not self.servers:
            raise ValueError("no Kafka bootstrap server given (--bootstrap host:port, or NEARDUP_BOOTSTRAP)")
        for server in self.servers:
            _host_port(server)  # refuses a bad port now, not at the first connection
        if self.protocol not in PROTOCOLS:
            raise ValueError(f"unknown NEARDUP_SECURITY_PROTOCOL {self.protocol!r} (one of {', '.join(PROTOCOLS)})")
        if self.protocol.startswith("SASL") and not self.sasl_mechanism:
            raise ValueError(f"NEARDUP_SECURITY_PROTOCOL={self.protocol} needs NEARDUP_SASL_MECHANISM")

    @classmethod
    def parse(
        cls, bootstrap: str, protocol: str, mechanism: str, username: str, password: str, cafile: str
    ) -> Connection:
        servers = tuple(h.strip() for h in bootstrap.split(",") if h.strip())
        return cls(servers, protocol.strip().upper(), mechanism, username, password, cafile)

    @property
    def bootstrap(self) -> str:
        return ",".join(self.servers)

    def _ssl_context(self) -> ssl.SSLContext | None:
        return ssl.create_default_context(cafile=self.ssl_cafile or None) if "SSL" in self.protocol else None

    def faust_broker(self) -> list[str]:
        """Faust's ``kafka://host:port`` URLs."""
        return [h if "://" in h else f"kafka://{h}" for h in self.servers]

    def faust_credentials(self) -> Any:
        """Faust's broker credentials (None for PLAINTEXT)."""
        import faust

        if self.protocol == "SSL":
            return faust.SSLCredentials(self._ssl_context())
        if self.protocol.startswith("SASL"):
            return faust.SASLCredentials(
                username=self.sasl_username,
                password=self.sasl_password,
                mechanism=self.sasl_mechanism,
                ssl_context=self._ssl_context(),
            )
        return None

    def aiokafka(self) -> dict[str, Any]:
        """Keyword arguments of an aiokafka client, bootstrap included."""
        kwargs: dict[str, Any] = {"bootstrap_servers": list(self.servers), "security_protocol": self.protocol}
        if "SSL" in self.protocol:
            kwargs["ssl_context"] = self._ssl_context()
        if self.protocol.startswith("SASL"):
            kwargs.update(
                sasl_mechanism=self.sasl_mechanism,
                sasl_plain_username=self.sasl_username,
                sasl_plain_password=self.sasl_password,
            )
        return kwargs

    def kafka_python(self) -> dict[str, Any]:
        """Keyword arguments of a kafka-python client, bootstrap included."""
        options: dict[str, Any] = {"bootstrap_servers": list(self.servers), "security_protocol": self.protocol}
        if self.protocol.startswith("SASL"):
            options.update(
                sasl_mechanism=self.sasl_mechanism,
                sasl_plain_username=self.sasl_username,
                sasl_plain_password=self.sasl_password,
            )
        if self.ssl_cafile:
            options["ssl_cafile"] = self.ssl_cafile
        return options

    def kafka_python_security(self) -> dict[str, Any]:
        """:meth:`kafka_python` without the bootstrap servers (for helpers that take those apart)."""
        return {k: v for k, v in self.kafka_python().items() if k != "bootstrap_servers"}

    def check_reachable(self, timeout_s: float) -> None:
        """Fail fast, in one line, when no bootstrap server accepts a TCP connection.

        Kafka's clients retry an unreachable bootstrap for 30 s or more and end in a long
        traceback; a plain connection attempt tells within ``timeout_s`` whether any broker
        listens at all.
        """
        deadline = time.monotonic() + timeout_s
        failures: list[str] = []
        ports: set[int] = set()
        taken: set[int] = set()  # ports another program answers on
        local = True
        for server in self.servers:
            host, port = _host_port(server)
            ports.add(port)
            local = local and _is_local(host)
            given = ":" in server.split("://", 1)[-1].rsplit("]", 1)[-1]
            named = server if given else f"{server} (port {port} assumed)"
            try:
                with socket.create_connection((host, port), timeout=max(0.1, deadline - time.monotonic())) as conn:
                    if self.protocol != "PLAINTEXT" or _answers_as_kafka(conn, deadline):
                        return
                    failures.append(f"{named} (it accepts connections but does not answer as a Kafka broker)")
                    taken.add(port)
            except OSError as exc:
                failures.append(f"{named} ({exc.strerror or type(exc).__name__.lower()})")
        # The local broker listens on the default port unless told: name another, so that the hint starts one there.
        (port,) = ports if len(ports) == 1 else (_DEFAULT_PORT,)
        start = "make kafka-start" if port == _DEFAULT_PORT else f"KAFKA_PORT={port} make kafka-start"
        # A cluster elsewhere: a broker started here would not be it; a port another program
        # holds (a worker's HTTP port, say) is no place to start one.
        if not local:
            hint = "check the address and that this machine can reach it"
        elif port in taken:
            hint = f"port {port} is another program's: is that the broker's address? (`make kafka-start` starts one on {_DEFAULT_PORT})"
        else:
            hint = f"start the local broker with `{start}`"
        raise Unreachable(
            f"cannot reach Kafka at {', '.join(failures)}; {hint}, or point NEARDUP_BOOTSTRAP or --bootstrap at your cluster"
        )


# Hosts a broker started on this machine answers at (and any 127.x address, and its own name).
_LOCAL_HOSTS = ("localhost", "::1", "0.0.0.0", "")


def _is_local(host: str) -> bool:
    host = host.lower()
    return host in _LOCAL_HOSTS or host.startswith("127.") or host == socket.gethostname().lower()


# An ApiVersions request, version 0, correlation id 0x6E44 ("nD"), no client id: every broker
# answers it, with an error code when it no longer serves that version, so that clients can
# find the versions it does.
_API_VERSIONS = struct.pack(">ihhih", 10, 18, 0, 0x6E44, -1)


def _answers_as_kafka(conn: socket.socket, deadline: float) -> bool:
    """Whether the server on ``conn`` answers an ApiVersions request as a Kafka broker does:
    a port that accepts connections (a worker's HTTP port, say) otherwise held the clients
    for their own 30-second timeouts and ended in "Unable to bootstrap"."""
    conn.settimeout(max(0.1, deadline - time.monotonic()))
    try:
        conn.sendall(_API_VERSIONS)
        head = b""
        while len(head) < 8:
            chunk = conn.recv(8 - len(head))
            if not chunk:
                return False
            head += chunk
    except OSError:
        return False
    size, correlation = struct.unpack(">ii", head)
    return size >= 4 and correlation == 0x6E44


def _host_port(server: str) -> tuple[str, int]:
    """``kafka://host:port``, ``host:port``, ``[v6]:port`` or ``host`` as (host, port); a port
    given that is not a number from 1 to 65535 is refused (it was looked up as part of a host name)."""
    address = server.split("://", 1)[-1]
    if address.startswith("["):
        host, _, rest = address[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else None
    else:
        host, sep, port_or_none = address.rpartition(":")
        host, port = (host, port_or_none) if sep else (address, None)
    if port is None:
        return host, _DEFAULT_PORT
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"bootstrap server {server!r} has no valid port (host:port, port 1-65535)")
    return host, int(port)
