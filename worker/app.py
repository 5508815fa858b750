"""The Faust application of one neardup worker, built from :class:`~worker.settings.Settings`.

Every worker of a deployment shares the app id (``{prefix}-worker``, hence the consumer
group and the changelog topics) and splits the partitions with the others; each keeps its
RocksDB state in its own directory, ``<state_dir>/<worker name>``, so two workers can run
on one host.
"""

from __future__ import annotations

import os
import socket
import ssl
from pathlib import Path
from typing import Any

import faust

from worker.settings import Settings


def worker_name(explicit: str | None = None) -> str:
    """``--name``, else ``NEARDUP_WORKER_NAME``, else the host name: names the state directory."""
    return explicit or os.environ.get("NEARDUP_WORKER_NAME") or socket.gethostname()


def broker_urls(bootstrap: str) -> list[str]:
    """Faust's ``kafka://host:port`` form of a comma-separated bootstrap list."""
    hosts = [h.strip() for h in bootstrap.split(",") if h.strip()]
    if not hosts:
        raise ValueError("NEARDUP_BOOTSTRAP names no broker")
    return [h if "://" in h else f"kafka://{h}" for h in hosts]


def credentials(settings: Settings) -> Any:
    """Faust broker credentials for the configured security protocol (None for PLAINTEXT)."""
    protocol = settings.security_protocol.upper()
    context = ssl.create_default_context(cafile=settings.ssl_cafile or None) if "SSL" in protocol else None
    if protocol == "PLAINTEXT":
        return None
    if protocol == "SSL":
        return faust.SSLCredentials(context)
    if protocol in ("SASL_PLAINTEXT", "SASL_SSL"):
        if not settings.sasl_mechanism:
            raise ValueError(f"NEARDUP_SECURITY_PROTOCOL={protocol} needs NEARDUP_SASL_MECHANISM")
        return faust.SASLCredentials(
            username=settings.sasl_username,
            password=settings.sasl_password,
            mechanism=settings.sasl_mechanism,
            ssl_context=context,
        )
    raise ValueError(f"unknown NEARDUP_SECURITY_PROTOCOL {settings.security_protocol!r}")


def create_app(settings: Settings, name: str | None = None) -> faust.App:
    """A configured app with the three stages installed (see :mod:`worker.agents`)."""
    from worker.agents import install

    datadir = Path(settings.state_dir) / worker_name(name)
    datadir.mkdir(parents=True, exist_ok=True)
    app = faust.App(
        f"{settings.topic_prefix}-worker",
        broker=broker_urls(settings.bootstrap),
        broker_credentials=credentials(settings),
        store="rocksdb://",
        datadir=str(datadir),
        topic_partitions=settings.partitions,
        topic_replication_factor=settings.replication,
        consumer_auto_offset_reset="earliest",
        processing_guarantee="at_least_once",
        web_enabled=False,
        autodiscover=False,
        # Standby replicas would make every worker also replay the others' changelogs; a
        # restarted worker restores its own partitions from the changelog instead.
        table_standby_replicas=0,
        # Faust commits every 2.8 s by default; a shorter interval bounds what a crash replays.
        broker_commit_interval=1.0,
        producer_linger=0.002,
    )
    install(app, settings)
    return app
