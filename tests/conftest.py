"""Shared test configuration: the real-broker plugin and the opt-in soak flag."""

from __future__ import annotations

import pytest

pytest_plugins = ["tests.kafka_broker"]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--soak", action="store_true", default=False, help="also run long soak tests")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Soak tests are deselected (not skipped) unless --soak is given."""
    if config.getoption("--soak"):
        return
    kept = [item for item in items if "soak" not in item.keywords]
    dropped = [item for item in items if "soak" in item.keywords]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept
