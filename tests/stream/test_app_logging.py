"""What a started worker logs of its Kafka client's retries: a retried lookup is no error."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
from aiokafka import errors

from worker.stream.app import _quiet_retried_lookups


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
    _quiet_retried_lookups()
    _quiet_retried_lookups()  # twice, as two apps in one process would: one filter
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
    assert len(logger.filters) == 1
