"""Ctrl-C and SIGTERM in ``neardup scan``: raised at once, or after the chunk being decided."""

from __future__ import annotations

import os
import signal

import pytest

from worker.cli.interrupts import deferred, interrupted_cleanly


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_inside_a_deferred_stretch_is_raised_when_it_ends(
    sig: int, capsys: pytest.CaptureFixture[str]
) -> None:
    written: list[int] = []
    with pytest.raises(KeyboardInterrupt), interrupted_cleanly(lambda: f"{len(written)} written"):
        with deferred():
            os.kill(os.getpid(), sig)
            for line in range(1000):  # what the signal would have cut: every line is written
                written.append(line)
        written.append(-1)  # never reached
    assert written == list(range(1000))
    assert capsys.readouterr().err.strip() == "neardup scan: interrupted; 1000 written"


def test_a_signal_outside_is_raised_at_once_and_the_handlers_are_restored() -> None:
    before = signal.getsignal(signal.SIGTERM)
    reached = False
    with pytest.raises(KeyboardInterrupt), interrupted_cleanly(lambda: ""):
        os.kill(os.getpid(), signal.SIGTERM)
        for _ in range(1000):  # the handler runs at the first check of the loop
            pass
        reached = True
    assert not reached
    assert signal.getsignal(signal.SIGTERM) is before
    with deferred():  # no handler of ours: nothing deferred, nothing left pending
        pass
