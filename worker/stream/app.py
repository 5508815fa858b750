"""The Faust application of one neardup worker, built from :class:`~worker.settings.Settings`.

Every worker of a deployment shares the app id (``{prefix}-worker``, hence the consumer
group) and splits the partitions with the others; each keeps its RocksDB stores in its own
directory, ``<state_dir>/<worker name>/stores``, so two workers can run on one host.
"""

from __future__ import annotations

import fcntl
import logging
import os
import re
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import faust

from topology.stages import Topics
from worker import collector
from worker.engine.fingerprint import warm_up
from worker.settings import Settings
from worker.state.layout import misfit
from worker.state.replay import ChangelogReader
from worker.stream.batches import Windows
from worker.stream.metrics import Metrics
from worker.stream.scheduling import AppendTimeOrder
from worker.stream.transactions import Transactions
from worker.stream.web import MAX_BODY, App, init_server
from worker.stream.wiring import install

# Each internal hop waits this long for more records to share a produce request.
_PRODUCER_LINGER_S = 0.002
# How long the broker may hold a fetch that found no data. Faust hard-codes 1500 ms; one
# consumer reads three topics, and while a fetch waits on the idle ones the busy ones are
# not fetched again, so every hop cost up to 1.5 s (measured: p50 2-7 s at half load).
_FETCH_MAX_WAIT_MS = 10
# ...and how much data it waits for within that time. With 1 byte, every trickle of records
# ended a fetch at once, and at moderate load fetch round trips were a fifth of the worker's
# CPU (100 events/s, measured as bench/stream_hops.py does: worker CPU 0.82 -> 0.64 of a core
# with 64 KiB, latency unchanged within noise); under a backlog 64 KiB arrive at once and
# nothing waits.
_FETCH_MIN_BYTES = 64 * 1024
# How long the group waits for a silent member before handing its partitions to others. Faust's
# 60 s default stalls every partition of a worker killed with SIGKILL (or a restarted one,
# which joins under a new member id) for a minute; 10 s is 3 missed heartbeats and above the
# broker's 6 s minimum (group.min.session.timeout.ms).
_SESSION_TIMEOUT_S = 10.0
_HEARTBEAT_S = 3.0


def _shorten_fetch_wait() -> None:
    """Make Faust's consumer long-poll for at most ``_FETCH_MAX_WAIT_MS`` or ``_FETCH_MIN_BYTES`` (idempotent)."""
    from faust.transport.drivers import aiokafka as driver

    create = driver.AIOKafkaConsumerThread._create_worker_consumer
    if getattr(create, "_neardup_short_fetch", False):
        return

    def create_worker_consumer(self: Any, transport: Any) -> Any:
        consumer = create(self, transport)
        consumer._fetch_max_wait_ms = _FETCH_MAX_WAIT_MS  # read when the consumer starts its fetcher
        consumer._fetch_min_bytes = _FETCH_MIN_BYTES
        return consumer

    create_worker_consumer._neardup_short_fetch = True  # type: ignore[attr-defined]
    driver.AIOKafkaConsumerThread._create_worker_consumer = create_worker_consumer  # type: ignore[method-assign]


_NAME = re.compile(r"[A-Za-z0-9._-]{1,64}")


def worker_name(explicit: str | None = None) -> str:
    """``--name``, else ``NEARDUP_WORKER_NAME``, else the host name: names the state directory,
    so it is one path component ("../etc" would put a worker's stores outside ``state_dir``)."""
    name = explicit or os.environ.get("NEARDUP_WORKER_NAME") or socket.gethostname()
    if not _NAME.fullmatch(name) or name in (".", ".."):
        raise ValueError(
            f"worker name {name!r} (--name or NEARDUP_WORKER_NAME) must be letters, digits, '.', '_' or '-' "
            "(at most 64, not '.' or '..'): it names the worker's state directory"
        )
    return name


def worker_dir(settings: Settings, name: str) -> Path:
    """The state directory of the worker called ``name`` (:func:`worker_name`)."""
    return Path(settings.state_dir) / name


@contextmanager
def state_dir_held(path: Path, name: str) -> Iterator[None]:
    """Hold ``path`` (a worker's state directory) for this process while the block runs.

    Two workers of one name share it: the second failed on RocksDB's lock in each stage and
    dead-lettered, or lost, what it was given, while saying it was healthy. The lock goes with
    the process however it ends (``flock``), so a worker killed with -9 restarts at once.
    A worker that refuses to start (a broker not reachable, a setting that differs) leaves no
    directory behind that it made for itself and never used."""
    made = [p for p in (path, *path.parents) if not p.exists()]
    path.mkdir(parents=True, exist_ok=True)
    try:
        with open(path / "worker.lock", "a+", encoding="utf-8") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                handle.seek(0)
                holder = handle.read().strip() or "another process"
                raise ValueError(
                    f"worker name {name!r} is in use: {holder} holds {path}; "
                    "give this worker its own --name (or NEARDUP_WORKER_NAME)"
                ) from None
            handle.seek(0)
            handle.truncate()
            handle.write(f"pid {os.getpid()} on {socket.gethostname()}")
            handle.flush()
            yield
    except BaseException:
        _remove_unused(path, made)
        raise


def _remove_unused(path: Path, made: list[Path]) -> None:
    """Remove the directories in ``made`` (deepest first) while they hold nothing but the lock."""
    if made and [entry.name for entry in path.iterdir()] == ["worker.lock"]:
        (path / "worker.lock").unlink()
    for directory in made:
        try:
            directory.rmdir()
        except OSError:  # not empty: the worker used it
            return


def check_stores(settings: Settings, path: Path) -> bool:
    """Refuse, before joining the group, index stores (under a worker's ``path``) built with
    another plan or retention (restored, they failed every batch while /healthz said healthy),
    or other fingerprint settings (copies of what they hold would pass as unique). Whether
    the worker has any."""
    stores = sorted((path / "stores" / "index").glob("*"))
    plan, features = settings.block_plan, settings.stored_features
    misfits = [why for store in stores if (why := misfit(store, plan, settings.retention_ms, features))]
    if misfits:
        raise ValueError(
            f"the index store {misfits[0]} (NEARDUP_PLAN, NEARDUP_K and NEARDUP_EXPECTED_FINGERPRINTS "
            "give the plan, NEARDUP_RETENTION_DAYS the buckets; the settings named shape fingerprints): "
            "a deployment keeps the ones it was created with; start this worker with them (new ones "
            "need a new deployment, with its own NEARDUP_TOPIC_PREFIX; if this deployment's topics were "
            f"deleted and made again, its old stores are stale: remove {path})"
        )
    return bool(stores)


class _RetriedLookups(logging.Filter):
    """aiokafka logs a failed coordinator lookup as an error and then retries it; a fresh
    broker fails the first ones while it makes its offsets topic, so a newcomer's first worker
    opened with an ERROR line. A retriable failure is a warning that says it is retried."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.args[0] if isinstance(record.args, tuple) and record.args else None
        if record.levelno == logging.ERROR and getattr(error, "retriable", False):
            record.levelno, record.levelname = logging.WARNING, "WARNING"
            record.msg = f"{record.msg} (retriable: retrying)"
        return True


class _Repeats(logging.Filter):
    """A message logged again and again (aiokafka's "Unable connect to node" about 120 times a
    second while the broker is down) passes once every ``every_s`` seconds, saying how many
    like it were left out since: the first failure is seen at once, and a log stays readable."""

    def __init__(self, every_s: float = 10.0, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.every_s, self.clock = every_s, clock
        self._last: dict[str, tuple[float, int]] = {}  # message template -> (when it last passed, left out since)

    def filter(self, record: logging.LogRecord) -> bool:
        now, template = self.clock(), str(record.msg)
        passed, left_out = self._last.get(template, (float("-inf"), 0))
        if now - passed < self.every_s:
            self._last[template] = (passed, left_out + 1)
            return False
        if left_out:
            record.msg = f"{record.msg} ({left_out} more like it in the last {now - passed:.0f} s)"
        self._last[template] = (now, 0)
        return True


class _NoEmptyTraceback(logging.Filter):
    """A worker that stops itself (its topics lost, a changelog write failed) crashes its app
    with the reason, outside any ``except``: mode logs that with ``log.exception``, which then
    printed "NoneType: None" under the one line that says why."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and record.exc_info[0] is None:
            record.exc_info = None
        return True


# The loggers aiokafka reports a lost broker on, each error once a connection, a metadata
# refresh, a fetch or a coordinator lookup is retried: about 110 lines a second in all.
KAFKA_CLIENT_LOGS = (
    "aiokafka",
    "aiokafka.conn",
    "aiokafka.cluster",  # "Topic %s not found in cluster metadata": 230 a second with the topics deleted
    "aiokafka.consumer.fetcher",
    "aiokafka.consumer.group_coordinator",
)


def _filter_logs() -> None:
    """Install the filters above, once a process (two apps in one process share loggers)."""
    _add_once("aiokafka.consumer.group_coordinator", _RetriedLookups, _RetriedLookups)
    _add_once("faust.app.base", _NoEmptyTraceback, _NoEmptyTraceback)  # mode.Service.crash of the app
    for name in KAFKA_CLIENT_LOGS:
        _add_once(name, _Repeats, _Repeats)
    _add_once("neardup.late", _Repeats, lambda: _Repeats(every_s=60.0))  # worker.Worker.index_step
    _add_once("neardup.resent", _Repeats, lambda: _Repeats(every_s=60.0))  # verdict_batch.VerdictBatch.item


def _add_once(name: str, kind: type[logging.Filter], make: Callable[[], logging.Filter]) -> None:
    logger = logging.getLogger(name)
    if not any(isinstance(f, kind) for f in logger.filters):
        logger.addFilter(make())


def create_app(
    settings: Settings, name: str | None = None, windows: Windows | None = None
) -> tuple[faust.App, Metrics]:
    """A configured app with the three stages installed (see :mod:`worker.stream.worker`), and their metrics."""
    name = worker_name(name)
    datadir = worker_dir(settings, name)
    datadir.mkdir(parents=True, exist_ok=True)
    app = App(
        settings.group,
        broker=settings.connection.faust_broker(),
        broker_credentials=settings.connection.faust_credentials(),
        datadir=str(datadir),
        topic_partitions=settings.partitions,
        topic_replication_factor=settings.replication,
        consumer_auto_offset_reset="earliest",
        processing_guarantee="at_least_once",
        web_enabled=settings.web_port > 0,
        web_port=settings.web_port or 6066,
        web_bind=settings.web_bind,
        canonical_url=settings.web_address,
        # The group's description names each member by its client id: other workers find the
        # owner of a partition's URL there (worker.stream.peers).
        broker_client_id=settings.web_address,
        # Faust's own pages (its router, tables, graph, stats) are not neardup's.
        web_router_enabled=False,
        web_tables_enabled=False,
        web_graph_enabled=False,
        web_stats_enabled=False,
        web_application_options={"client_max_size": MAX_BODY},
        autodiscover=False,
        # The stages keep their state in their own stores (worker.state); no Faust tables.
        table_standby_replicas=0,
        # Faust commits every 2.8 s by default; a shorter interval bounds what a crash replays.
        broker_commit_interval=1.0,
        producer_linger=_PRODUCER_LINGER_S,
        broker_session_timeout=_SESSION_TIMEOUT_S,
        broker_heartbeat_interval=_HEARTBEAT_S,
        # A fetched backlog read in append time across partitions, not partition by partition in turn.
        ConsumerScheduler=AppendTimeOrder,
    )
    _shorten_fetch_wait()
    _filter_logs()
    # Load the dictionaries and tables now, not on the first event after joining; with the
    # fingerprint helper on, only the helper fingerprints (/check and /explain too), and this
    # process does without its own copy of them.
    if not settings.fingerprint_helper:
        warm_up(settings)
    # Everything alive now (modules, tables, the app) lives as long as the process: keep it out
    # of the cyclic collector, whose full passes over it took ~40 ms each — straight into the
    # latency of every event in flight; and let a batch's temporaries die young.
    collector.settle()
    client = settings.connection.aiokafka()
    reader = ChangelogReader(client, read_committed=settings.exactly_once)
    transactions = None
    if settings.exactly_once:
        names = Topics(settings.topic_prefix)
        transactions = Transactions(client, settings.topic_prefix, names.verdict_changelog)
    metrics = install(app, settings, datadir, reader, windows or Windows(), transactions, name)
    if settings.web_port:
        init_server(app)
    return app, metrics
