"""A worker that cannot serve HTTP says why in one line before it joins its group."""

from __future__ import annotations

import socket

import pytest

from worker.cli.main import _check_web_port
from worker.settings import Settings


def test_a_taken_port_names_the_setting_another_worker_needs() -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        with pytest.raises(OSError, match=f"127.0.0.1:{port} .*needs its own NEARDUP_WEB_PORT"):
            _check_web_port(Settings(web_port=port))


@pytest.mark.parametrize("bind", ["999.1.1.1", "10.254.254.254"])
def test_an_address_not_of_this_host_names_the_bind_setting(bind: str) -> None:
    with pytest.raises(OSError, match="NEARDUP_WEB_BIND must be an address of this host"):
        _check_web_port(Settings(web_bind=bind, web_port=6099))
