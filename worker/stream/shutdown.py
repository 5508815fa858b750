"""A Faust worker whose stop on a signal takes at most ``shutdown_timeout_s``.

Faust stops by waiting until every message a stage started on is acknowledged; a stage
stuck on one batch (a store that does not answer, a bug) made SIGTERM wait for minutes. The
deadline runs on a thread of its own, so it holds even when the event loop is blocked.
Abandoning is safe for the data: what was not committed is read again by the next owner
(at-least-once, docs/reliability.md); what it costs is a restore of the stores that were
left dirty.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
from collections.abc import Callable
from typing import Any

import faust

log = logging.getLogger("neardup.worker")


_deadline: threading.Timer | None = None


def start_deadline(seconds: float, running: Callable[[], str], app: Any = None) -> None:
    """End the process ``seconds`` from now unless it has ended by then (the first call counts).

    Called when a stop begins: on SIGTERM or SIGINT, and when the worker crashes itself
    (a lost changelog or output record, a broker error inside a batch).
    """
    global _deadline
    if _deadline is None:
        _deadline = threading.Timer(seconds, _abandon, (seconds, running, app))
        _deadline.daemon = True
        _deadline.start()


def _abandon(seconds: float, running: Callable[[], str], app: Any) -> None:
    """Runs on the deadline thread: say what is left, then end the process."""
    try:
        unacked = len(getattr(app.consumer, "_unacked_messages", ())) if app is not None else -1
    except Exception:  # the consumer may be half torn down; the log line matters more
        unacked = -1
    log.error(
        "shutdown did not finish in %.0f s; exiting and abandoning: %s; %d input messages unacknowledged "
        "(their offsets are not committed: the next owner reads them again)",
        seconds,
        running(),
        unacked,
    )
    for handler in logging.getLogger().handlers + log.handlers:
        handler.flush()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(1)


class BoundedWorker(faust.Worker):
    """``faust.Worker`` whose stop on a signal takes at most ``deadline_s``."""

    def __init__(
        self, app: faust.App, *args: Any, deadline_s: float, running: Callable[[], str], **kwargs: Any
    ) -> None:
        super().__init__(app, *args, **kwargs)
        if not self.stdout.isatty():
            # Faust's start-up spinner writes cursor escape codes even into a log file.
            self.spinner = None
        self._deadline_s = deadline_s
        self._running = running
        self._signal: str | None = None

    def _schedule_shutdown(self, signal: signal.Signals) -> None:
        self._signal = self._signal or signal.name
        start_deadline(self._deadline_s, self._running, self.app)
        super()._schedule_shutdown(signal)

    def stopped_by(self) -> str:
        """Why the worker stopped, for its last line: at the default log level nothing else
        tells a signal from a crash (a lost topic, a failed write) or the end of its loop."""
        reason = getattr(self.app, "crash_reason", None)
        if reason is not None:
            return f"after a crash: {reason}"
        return f"on {self._signal}" if self._signal else "as its event loop ended"
