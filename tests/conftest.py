"""Shared test configuration: the real-broker plugin, the opt-in soak flag, the tests' order."""

from __future__ import annotations

import pytest

pytest_plugins = ["tests.kafka_broker"]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--soak", action="store_true", default=False, help="also run long soak tests")


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Soak tests are deselected (not skipped) unless --soak is given; the fault tests go first."""
    _faults_first(items)
    if config.getoption("--soak"):
        return
    kept = [item for item in items if "soak" not in item.keywords]
    dropped = [item for item in items if "soak" in item.keywords]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


# The fault tests that keep a worker busy on a backlog: each needs most of the machine (two of
# them at once took the burst test past its limit), so under ``pytest -n 2`` they run one
# after another on one process (``--dist loadgroup``) while the other takes the rest.
_BACKLOGS = ("tests/faults/test_burst.py", "tests/faults/test_exactly_once.py", "tests/faults/test_kill.py")


def _faults_first(items: list[pytest.Item]) -> None:
    """The fault tests first: they are most of a run's time and mostly wait (on sessions timing
    out, brokers coming back), so a two-process run (``make test``) is shortest when the long
    tests start at once and the short ones fill in around them."""
    for item in items:
        if item.nodeid.startswith(_BACKLOGS):
            item.add_marker(pytest.mark.xdist_group("backlog"))
    faults = [item for item in items if "tests/faults/" in item.nodeid]
    items[:] = faults + [item for item in items if "tests/faults/" not in item.nodeid]
