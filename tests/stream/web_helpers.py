"""Talking to a worker's HTTP side as an operator would: JSON requests, Prometheus scrapes, a browser."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib import error, request

from prometheus_client.parser import text_string_to_metric_families

REPO = Path(__file__).resolve().parents[2]
# Where tests leave what a person may want to look at (the live page's screenshot).
ARTIFACTS = Path(os.environ.get("NEARDUP_TEST_ARTIFACTS", REPO / "test-artifacts"))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def call(
    url: str,
    body: Any = None,
    raw: bytes | None = None,
    method: str | None = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, Any]:
    """(status, JSON) of a request; an error status is returned, not raised."""
    data = raw if raw is not None else None if body is None else json.dumps(body).encode()
    sent = {"Content-Type": "application/json", **(headers or {})}
    req = request.Request(url, data=data, method=method, headers=sent)
    try:
        with request.urlopen(req, timeout=30) as response:
            return response.status, json.loads(response.read())
    except error.HTTPError as exc:
        payload = exc.read()
        assert exc.headers.get_content_type() == "application/json", payload[:300]
        return exc.code, json.loads(payload)


def raw_call(url: str, data: bytes) -> tuple[int, Any]:
    """(status, JSON) of bytes sent as they are, for requests no HTTP client would make."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(data)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    head, _, payload = answer.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    content_type = next(line for line in header_lines if line.lower().startswith("content-type:"))
    assert "application/json" in content_type, answer[:300]
    return int(status_line.split()[1]), json.loads(payload)


def scrape(url: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of ``url/metrics``, keyed by name and sorted labels."""
    with request.urlopen(url + "/metrics", timeout=30) as response:
        text = response.read().decode()
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def total(samples: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str, **labels: str) -> float:
    """The sum of ``name``'s samples whose labels include ``labels``."""
    wanted = set(labels.items())
    return sum(value for (n, found), value in samples.items() if n == name and wanted <= set(found))


def wait_http(url: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with request.urlopen(url + "/healthz", timeout=2):
                return
        except error.HTTPError:
            return  # it answers (503 while starting is an answer)
        except OSError:
            time.sleep(0.1)
    raise AssertionError(f"{url} did not answer in {timeout:.0f} s")


def chromium() -> str:
    """Debian's Chromium (``scripts/install-browser``, run by ``make setup``); a failure, never a skip."""
    found = shutil.which(os.environ.get("CHROMIUM", "chromium"))
    assert found, "no Chromium: run `make setup` (scripts/install-browser installs Debian's chromium)"
    return found


def browse(url: str, *, screenshot: Path | None = None, budget_ms: int = 4000) -> str:
    """Load ``url`` in headless Chromium, let its scripts run ``budget_ms`` (virtual time), and
    return the rendered DOM; with ``screenshot``, then save what it shows as a PNG too. The DOM
    comes first: it is what a test reads, and a live page's figures are the caller's moment's
    (each load is a Chromium start, seconds on a loaded machine)."""
    with tempfile.TemporaryDirectory() as profile:
        base = [
            chromium(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            f"--user-data-dir={profile}",
            "--window-size=1280,1000",
            f"--virtual-time-budget={budget_ms}",
        ]
        run = subprocess.run([*base, "--dump-dom", url], capture_output=True, timeout=120, check=False)
        assert run.returncode == 0, run.stderr[-2000:]
        if screenshot is not None:
            screenshot.parent.mkdir(parents=True, exist_ok=True)
            shot = subprocess.run([*base, f"--screenshot={screenshot}", url], capture_output=True, timeout=120)
            assert screenshot.exists() and screenshot.stat().st_size > 10_000, shot.stderr[-2000:]
        return run.stdout.decode()
