"""What a started worker logs of its Kafka client's retries: a retried lookup is no error."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
from aiokafka import errors

from worker.stream.app import _filter_logs, _Repeats, _RetriedLookups


class _Kept(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture
def coordinator_log() -> Iterator[_Kept]:
    logger = logging.getLogger("aiokafka.consumer.group_coordinator")
    kept = _Kept()
    logger.addHandler(kept)
    _filter_logs()
    _filter_logs()  # twice, as two apps in one process would: one filter
    yield kept
    logger.removeHandler(kept)


def test_a_fresh_brokers_missing_coordinator_is_a_warning_that_says_it_is_retried(coordinator_log: _Kept) -> None:
    logger = logging.getLogger("aiokafka.consumer.group_coordinator")
    # The call aiokafka makes (consumer/group_coordinator.py, ensure_coordinator_known).
    logger.error("Group Coordinator Request failed: %s", errors.GroupCoordinatorNotAvailableError())
    logger.error("Group Coordinator Request failed: %s", errors.GroupAuthorizationFailedError("g"))
    retried, refused = coordinator_log.records
    assert (retried.levelname, refused.levelname) == ("WARNING", "ERROR")
    assert retried.getMessage().endswith("(retriable: retrying)")
    assert "retrying" not in refused.getMessage()
    assert sum(isinstance(f, _RetriedLookups) for f in logger.filters) == 1


def test_a_connection_error_repeated_while_the_broker_is_away_passes_once_every_ten_seconds() -> None:
    """About 120 lines a second while the broker was down: the first is seen at once, then one
    every ten seconds that counts the ones left out."""
    now = [0.0]
    repeats = _Repeats(every_s=10.0, clock=lambda: now[0])
    logger = logging.getLogger("test.repeats")
    logger.propagate = False
    kept = _Kept()
    logger.addHandler(kept)
    logger.addFilter(repeats)
    try:
        for i in range(1200):  # ten seconds of them
            now[0] = i / 120
            logger.error("Unable connect to node with id %s: %s", i % 3, "Connect call failed")
        logger.error("another message")
        now[0] = 10.5
        logger.error("Unable connect to node with id %s: %s", 1, "Connect call failed")
    finally:
        logger.removeHandler(kept)
        logger.removeFilter(repeats)
    assert [r.getMessage() for r in kept.records] == [
        "Unable connect to node with id 0: Connect call failed",
        "another message",
        "Unable connect to node with id 1: Connect call failed (1199 more like it in the last 10 s)",
    ]


def test_the_kafka_clients_and_the_late_events_logs_get_one_such_filter_each() -> None:
    """On the loggers aiokafka's modules really log on (its client's is "aiokafka", not
    "aiokafka.client": a filter there let ~110 lines a second through while a broker was away)."""
    from aiokafka import client, conn
    from aiokafka.consumer import fetcher, group_coordinator

    _filter_logs()
    _filter_logs()
    for module in (client, conn, fetcher, group_coordinator):
        assert sum(isinstance(f, _Repeats) for f in module.log.filters) == 1, module.__name__
    [late] = [f for f in logging.getLogger("neardup.late").filters if isinstance(f, _Repeats)]
    assert late.every_s == 60.0, "late events: a line a minute with the running count"


def test_a_crash_with_a_reason_and_no_exception_under_way_logs_no_empty_traceback() -> None:
    """A worker stopping itself crashes its app outside any ``except``: its one line says why."""
    _filter_logs()
    logger = logging.getLogger("faust.app.base")
    kept = _Kept()
    logger.addHandler(kept)
    try:
        logger.exception("Crashed reason=%r", RuntimeError("topics missing"))  # as mode's Service.crash
        try:
            raise ValueError("a real one")
        except ValueError:
            logger.exception("Crashed reason=%r", "a bug")
    finally:
        logger.removeHandler(kept)
    formatter = logging.Formatter()
    reason, bug = (formatter.format(record) for record in kept.records)
    assert reason == "Crashed reason=RuntimeError('topics missing')"
    assert bug.startswith("Crashed reason='a bug'\nTraceback") and "ValueError: a real one" in bug
