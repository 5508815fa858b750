"""A worker that cannot start says why in one line before it joins its group: a port, an
address, a name in use."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from tests.stream_helpers import refused_worker
from worker.cli.commands import check_web_port
from worker.settings import Settings
from worker.stream.app import state_dir_held


def test_a_taken_port_names_the_setting_another_worker_needs() -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        with pytest.raises(OSError, match=f"127.0.0.1:{port} .*needs its own NEARDUP_WEB_PORT"):
            check_web_port(Settings(web_port=port))


@pytest.mark.parametrize("bind", ["999.1.1.1", "10.254.254.254"])
def test_an_address_not_of_this_host_names_the_bind_setting(bind: str) -> None:
    with pytest.raises(OSError, match="NEARDUP_WEB_BIND must be an address of this host"):
        check_web_port(Settings(web_bind=bind, web_port=6099))


def test_a_second_worker_of_one_name_is_refused_before_it_touches_the_stores(tmp_path: Path) -> None:
    """It shared the first one's state directory: RocksDB's lock failed in each stage, and the
    events it was given were dead-lettered or lost while /healthz said healthy."""
    with state_dir_held(tmp_path / "w1", "w1"):
        env = {**os.environ, "NEARDUP_STATE_DIR": str(tmp_path), "NEARDUP_BOOTSTRAP": "127.0.0.1:1"}
        line = refused_worker(env, "w1")
    assert line.startswith("neardup worker: worker name 'w1' is in use: pid ")
    assert "own --name" in line
    with state_dir_held(tmp_path / "w1", "w1"):  # the first let go: the name is free again
        pass


def test_a_worker_that_cannot_start_leaves_no_state_directory_behind(tmp_path: Path) -> None:
    """No broker listens at the address: the one line says so, and the directories the worker
    would have kept its state in are not left behind, empty, for an operator to wonder at."""
    state = tmp_path / "state"
    env = {**os.environ, "NEARDUP_STATE_DIR": str(state), "NEARDUP_BOOTSTRAP": "127.0.0.1:1"}
    line = refused_worker(env, "w1")
    assert "127.0.0.1:1" in line
    assert not state.exists()


def test_a_refused_start_keeps_a_state_directory_it_did_not_make(tmp_path: Path) -> None:
    kept = tmp_path / "w1" / "stores"
    kept.mkdir(parents=True)
    env = {**os.environ, "NEARDUP_STATE_DIR": str(tmp_path), "NEARDUP_BOOTSTRAP": "127.0.0.1:1"}
    refused_worker(env, "w1")
    assert kept.is_dir()


def test_index_stores_of_another_plan_or_retention_are_refused_before_joining(tmp_path: Path) -> None:
    """Opened anyway, each restore failed and every batch was dead-lettered while /healthz said
    healthy; the worker must say which setting differs before it touches Kafka."""
    from worker.state.index import BlockIndex
    from worker.stream.app import check_stores

    settings = Settings()
    with BlockIndex(tmp_path / "stores" / "index" / "1", settings.block_plan, retention_ms=settings.retention_ms):
        pass
    check_stores(settings, tmp_path)  # its own settings fit
    with pytest.raises(ValueError, match=r"/1 was built with a retention of 7 days \(time buckets of 86400000 ms\), "):
        check_stores(settings.replace(retention_days=1), tmp_path)
    with pytest.raises(
        ValueError, match=r"not a retention of 3 days \(buckets of 37028572 ms\).*NEARDUP_RETENTION_DAYS"
    ):
        check_stores(settings.replace(retention_days=3), tmp_path)
    with pytest.raises(ValueError, match=r"built with plan 10x.* not 4x16 .*NEARDUP_EXPECTED_FINGERPRINTS"):
        check_stores(settings.replace(expected_fingerprints=1000), tmp_path)


def test_index_stores_of_other_fingerprint_settings_are_refused_before_joining(tmp_path: Path) -> None:
    """A worker restarted with another NEARDUP_SHORT_CHARS stored and probed other keys than
    its store holds: the copies of a whole window passed as unique, with nothing said."""
    from worker.state.partition import IndexPartition
    from worker.stream.app import check_stores

    settings = Settings()
    plan, features = settings.block_plan, settings.stored_features
    store = IndexPartition(tmp_path / "stores" / "index" / "0", plan, settings.retention_ms, features=features)
    store.close()
    check_stores(settings, tmp_path)
    with pytest.raises(ValueError, match=r"/0 was built with NEARDUP_SHORT_CHARS=300, not 100 .*shape fingerprints"):
        check_stores(settings.replace(short_chars=100), tmp_path)
