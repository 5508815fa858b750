"""The fingerprint stage's helper process: the same fingerprints and routes, one text's failure
its own, and no process left behind when the worker is killed."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bench.stream import descendants
from worker.engine.fingerprint import Fingerprint, fingerprint, fingerprint_each
from worker.settings import Settings
from worker.stream.guard import infrastructure
from worker.stream.helper import FingerprintHelper, HelperDied
from worker.stream.routes import Routed, route

SETTINGS = Settings(partitions=2, topic_prefix="t")
TEXTS = [
    "The central bank raised its benchmark interest rate by a quarter point on Wednesday.",
    "央行周三宣布将基准利率上调25个基点，并表示如果物价增长不放缓，可能进一步加息。",
    "ok",
    "https://example.com/only-a-link",
]


def here(text: str, settings: Settings = SETTINGS) -> Routed:
    """A text's fingerprint and routes as this process makes them."""
    return route(fingerprint(text, settings), settings.block_plan, settings.partitions)


def test_the_helper_gives_the_fingerprints_this_process_gives_batch_after_batch() -> None:
    async def three_batches() -> list[list[Routed | str]]:
        helper = FingerprintHelper(SETTINGS)
        helper.start()
        try:  # the second and third go down the pipe before the first comes back
            return list(await asyncio.gather(*(helper.fingerprints(TEXTS[i:]) for i in range(3))))
        finally:
            helper.close()

    assert asyncio.run(three_batches()) == [[here(text) for text in TEXTS[i:]] for i in range(3)]


def test_without_the_helper_fingerprints_are_computed_here() -> None:
    helper = FingerprintHelper(Settings(fingerprint_helper=False))
    helper.start()
    assert asyncio.run(helper.fingerprints(TEXTS[:1])) == [here(TEXTS[0], Settings(fingerprint_helper=False))]


def test_a_text_that_fails_comes_back_as_its_reason_and_the_others_still_get_theirs() -> None:
    texts: list[object] = [TEXTS[0], None, TEXTS[1]]  # no text: fingerprinting it raises
    out = fingerprint_each(texts, SETTINGS)  # type: ignore[arg-type]
    assert out[0] == fingerprint(TEXTS[0], SETTINGS) and out[2] == fingerprint(TEXTS[1], SETTINGS)
    assert isinstance(out[1], str) and out[1].startswith("TypeError")


def test_a_panic_in_the_native_code_is_the_text_s_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    class PanicException(BaseException):  # what pyo3 raises for a Rust panic: not an Exception
        pass

    def panics(text: str, settings: Settings) -> Fingerprint:
        if text == "boom":
            raise PanicException("index out of bounds")
        return fingerprint(text, settings)

    monkeypatch.setattr("worker.engine.fingerprint.fingerprint", panics)
    out = fingerprint_each(["boom", TEXTS[0]], SETTINGS)
    assert out == ["PanicException: index out of bounds", fingerprint(TEXTS[0], SETTINGS)]


def test_a_helper_that_died_fails_its_batches_and_stops_the_worker_as_the_machine_would() -> None:
    async def killed() -> BaseException:
        helper = FingerprintHelper(SETTINGS)
        helper.start()
        try:
            await helper.fingerprints(TEXTS[:1])
            os.kill(helper.pid, signal.SIGKILL)
            try:
                await helper.fingerprints(TEXTS)
            except HelperDied as exc:
                return exc
            raise AssertionError("a batch sent to a dead helper got fingerprints")
        finally:
            helper.close()

    assert infrastructure(asyncio.run(killed()))


_WORKER = """
import asyncio, sys, time
from worker.settings import Settings
from worker.stream.helper import FingerprintHelper, HelperDied
from worker.stream.routes import Routed, route
helper = FingerprintHelper(Settings())
helper.start()
asyncio.run(helper.fingerprints(["warm"]))
print("ready", flush=True)
time.sleep(600)
"""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def test_the_helper_ends_when_its_worker_is_killed() -> None:
    worker = subprocess.Popen([sys.executable, "-c", _WORKER], stdout=subprocess.PIPE, text=True)
    try:
        assert worker.stdout is not None and worker.stdout.readline().strip() == "ready"
        helpers = descendants(worker.pid)
        assert helpers, "the helper runs in processes of its own"
        os.kill(worker.pid, signal.SIGKILL)
        worker.wait()
        deadline = time.monotonic() + 10
        while any(_alive(pid) for pid in helpers) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not any(_alive(pid) for pid in helpers), "a helper outlived its killed worker"
    finally:
        worker.kill()


def test_batches_sent_before_the_helper_is_connected_all_get_their_fingerprints() -> None:
    async def at_once() -> list[list[Routed | str]]:
        helper = FingerprintHelper(SETTINGS)
        helper.start()
        try:  # the first batch connects the pipes; the others arrive while it does
            return list(await asyncio.gather(*(helper.fingerprints([text]) for text in TEXTS)))
        finally:
            helper.close()

    assert asyncio.run(at_once()) == [[here(text)] for text in TEXTS]
