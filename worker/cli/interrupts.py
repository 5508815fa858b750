"""Ctrl-C and SIGTERM for ``neardup scan``: the scan ends through every cleanup, between chunks.

By the default action SIGTERM left the helper blocked on its pipe forever and the temporary
index on disk, and said nothing; so it raises KeyboardInterrupt, as Ctrl-C does. Either one,
raised while a chunk was being decided, could land between an event's count and its line (a
write to the output fails with the signal when it has to flush), and the scan then said it had
decided one event more than its output held. So while a chunk is decided (:func:`deferred`)
the signal is only noted, and raised once the chunk's lines are written: a chunk takes tens of
milliseconds, and anywhere else (reading, waiting for the helper) it is raised at once.
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager


class _State:
    deferring = False
    pending = False


_STATE = _State()


def _interrupt(signum: int, frame: object) -> None:
    if _STATE.deferring:
        _STATE.pending = True
        return
    raise KeyboardInterrupt


@contextmanager
def deferred() -> Iterator[None]:
    """A stretch that Ctrl-C and SIGTERM do not cut (when :func:`interrupted_cleanly` is on)."""
    _STATE.deferring = True
    try:
        yield
    finally:
        _STATE.deferring = False
    if _STATE.pending:
        _STATE.pending = False
        raise KeyboardInterrupt


@contextmanager
def interrupted_cleanly(said: Callable[[], str]) -> Iterator[None]:
    """Ctrl-C and SIGTERM raise KeyboardInterrupt (deferred inside :func:`deferred`); when one
    ends the body, ``said()`` is printed on stderr after "interrupted; "."""
    main = threading.current_thread() is threading.main_thread()  # only it may set handlers
    before = {sig: signal.signal(sig, _interrupt) for sig in (signal.SIGTERM, signal.SIGINT)} if main else {}
    try:
        yield
    except KeyboardInterrupt:
        print(f"\nneardup scan: interrupted; {said()}", file=sys.stderr)
        raise
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)
        _STATE.pending = False
