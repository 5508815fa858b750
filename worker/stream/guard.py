"""One event's failure stays that event's; one batch's failure stays that batch's.

Each stage catches what goes wrong with one event itself and dead-letters that event alone.
:meth:`Guard.run` is the last line, for a step shared by a whole batch (a send, a commit):
its records are dead-lettered with the stage and the reason rather than retried, since a
retry of the same batch would fail the same way, and a stage that dies holding a batch stops
its partitions' offsets and the worker's shutdown (docs/reliability.md). Failures of Kafka
or the machine are not the records' fault: then the worker stops, their offsets
uncommitted, and whoever restores next reads them again.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

from aiokafka.errors import KafkaError, MessageSizeTooLargeError
from faust.types import EventT

from worker.state.layout import StoreMismatch
from worker.stream import deadletter
from worker.stream.batches import Message
from worker.stream.helper import HelperDied
from worker.stream.metrics import Metrics
from worker.stream.sends import Sends

log = logging.getLogger("neardup.worker")

_T = TypeVar("_T")


class OffsetHolds:
    """The references one batch holds on its source messages, so none outlives a failed batch.

    ``take_batches`` acks a batch when the agent's loop body returns; each :meth:`hold`
    takes one more reference on every message of the batch, so its offsets become
    committable only when the returned callback runs (once the batch's changelog records
    are acknowledged). A batch that fails :meth:`release_all` its holds: a reference left
    behind would stop offset commits on its partitions and make shutdown wait forever.
    """

    def __init__(self, batch: Sequence[EventT]) -> None:
        self._batch = batch
        self._open: list[Callable[[], None]] = []

    def hold(self) -> Callable[[], None]:
        for event in self._batch:
            event.message.incref()
        released = False

        def release() -> None:
            nonlocal released
            if not released:
                released = True
                for event in self._batch:
                    event.ack()

        self._open.append(release)
        return release

    def release_all(self) -> None:
        for release in self._open:
            release()


def infrastructure(exc: BaseException) -> bool:
    """Whether a batch failed through no fault of its records (Kafka, the machine). A record
    too large for Kafka is the records' fault: it would fail the same way after every restart."""
    if isinstance(exc, MessageSizeTooLargeError):
        return False
    return isinstance(exc, (KafkaError, OSError, asyncio.TimeoutError, HelperDied))


def source(message: Message) -> tuple[str, int, int]:
    return message.topic, message.partition, message.offset


class Guard:
    """Runs each stage's batches so that a failure dead-letters records instead of stopping a partition."""

    def __init__(self, sends: Sends, metrics: Metrics) -> None:
        self.sends = sends
        self.metrics = metrics

    async def run(
        self,
        stage: str,
        batch: Sequence[EventT],
        body: Callable[[Sequence[EventT], OffsetHolds], Awaitable[None]],
        holds: OffsetHolds | None = None,
    ) -> None:
        """Run one batch; if it fails outside any one event, dead-letter its records and go on.
        ``holds``: the batch's, when its caller took one before handing the batch on."""
        holds = holds or OffsetHolds(batch)
        flight = (stage, id(holds))  # a stage may have several batches under way
        self.metrics.in_flight[flight] = (len(batch), time.monotonic())
        try:
            await body(batch, holds)
        except Exception as exc:
            if infrastructure(exc) or isinstance(exc, StoreMismatch):
                why = "Kafka or the machine failed under a batch"
                if isinstance(exc, StoreMismatch):
                    why = "its stores do not fit this worker's settings"
                log.exception("%s stage: %s; stopping", stage, why)
                self.sends.write_failed(exc)
                return
            holds.release_all()
            log.exception("%s stage: batch of %d records failed; dead-lettering them", stage, len(batch))
            reason = f"{stage} stage failed on the batch: {deadletter.describe(exc)}"
            ids = [
                deadletter.input_id(e.message.value, self.sends.settings) if stage == "fingerprint" else None
                for e in batch
            ]
            await self.sends.dead_letter(
                [
                    deadletter.value(stage, reason, source(e.message), e.message.value, event_id, e.message.key)
                    for e, event_id in zip(batch, ids, strict=True)
                ],
                [e.message.key for e in batch],
            )
        finally:
            self.metrics.in_flight.pop(flight, None)

    async def decoded(
        self, stage: str, what: str, batch: Sequence[EventT], decode: Callable[[bytes], _T]
    ) -> dict[int, list[_T]]:
        """Each message of ``batch`` decoded, per partition; one that cannot be is dead-lettered."""
        decoded: dict[int, list[_T]] = defaultdict(list)
        dead: list[bytes] = []
        for event in batch:
            try:
                decoded[event.message.partition].append(decode(event.message.value or b""))
            except Exception as exc:
                reason = f"unreadable {what} message: {deadletter.describe(exc)}"
                dead.append(deadletter.value(stage, reason, source(event.message), event.message.value))
        await self.sends.dead_letter(dead)
        return decoded


def log_batch(batch: Sequence[EventT], started: float, cpu: float) -> None:
    """Where one input batch's latency went (``log_batches``; bench/stream_hops.py reads it).

    Waits run from each input record's time to the batch's start: the fetch, the window and
    any batch still running. What follows is this process's own work, up to the verdicts
    when it owns every partition; its CPU is this thread's, which includes that of the other
    batches under way meanwhile.
    """
    waits = [started - event.message.timestamp for event in batch]
    log.info(
        "batch: %d events, waited %.1f-%.1f ms, took %.1f ms, %.2f ms CPU",
        len(batch),
        min(waits) * 1000,
        max(waits) * 1000,
        (time.time() - started) * 1000,
        (time.thread_time() - cpu) * 1000,
    )
