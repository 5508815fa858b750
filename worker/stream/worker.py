"""One worker: its three stages and the glue between them, rebalances, the hold timer and shutdown
(:mod:`worker.stream.wiring` declares them to Faust).

Read top to bottom, this is the path of one event through the stream (docs/architecture.md,
"One event's path"): bytes in ``{p}.events``; :meth:`Worker.fingerprint_batch` fingerprints
a batch and gives each event one share per ``{p}.probes`` partition its block keys reach
(:mod:`worker.stream.fingerprint`; the shares of this worker's own partitions skip Kafka);
:meth:`Worker.index_step` matches and stores each share in that partition and answers the
event (:mod:`worker.stream.index`) on ``{p}.answers``; the verdict
stage gathers the answers, decides, and publishes to ``{p}.unique`` or ``{p}.duplicates``
once its store's changelog holds what it published (:mod:`worker.stream.verdict`).

State lives in stores this worker owns, one per (stage, partition) (the index partitions'
in one RocksDB store, :mod:`worker.state.shared`), each batch's changes logged as one
changelog record per partition (:mod:`worker.state.transaction`). Every stage
takes its input in batches (:mod:`worker.stream.batches`) and sends one message per
destination partition per batch, except to partitions this worker owns: those go straight
to the next stage in this process (:mod:`worker.stream.handoff`).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import faust
from faust.types import EventT

from topology.changelog import encode_ops
from topology.codec import decode_batch
from topology.stages import decode_probes
from worker.settings import Settings
from worker.state.changelog import StoreSet
from worker.state.layout import StoreMismatch
from worker.state.memory import SharedMemory
from worker.state.partition import IndexPartition, one_each, open_index
from worker.state.replay import ChangelogReader
from worker.state.shared import SharedIndex
from worker.state.shared import discard as discard_shared
from worker.state.transaction import Transaction
from worker.state.verdicts import VerdictPartition
from worker.stream.batches import Windows, take_batches
from worker.stream.fingerprint import FingerprintStage, ProbeMessage
from worker.stream.frontier import Frontier, Ticket, appended
from worker.stream.guard import Guard, OffsetHolds, log_batch
from worker.stream.handoff import Handoff
from worker.stream.helper import FingerprintHelper
from worker.stream.index import IndexStage
from worker.stream.inspect import Inspector
from worker.stream.metrics import Metrics
from worker.stream.peers import Peers
from worker.stream.sends import Sends
from worker.stream.stats import Sampler
from worker.stream.transactions import Transactions
from worker.stream.verdict import VERDICT_GROUP_S, VerdictStage

log = logging.getLogger("neardup.worker")
late_log = logging.getLogger("neardup.late")  # at most once a minute (worker.stream.app)

_TAKE_MAX = 500  # input events per fingerprint batch
_UNDER_WAY = 3  # input batches left under way once the next one starts (so up to four at once)
_LOG_TIMESTAMP_TYPE = 1  # Kafka: 0 = CreateTime, 1 = LogAppendTime
_DRAIN_TIMEOUT_S = 10.0  # how long shutdown waits for in-flight changelog acknowledgements
# Index changelog group commit: batches committed within this long share one record per
# partition. It delays only when source offsets become committable.
_CHANGELOG_GROUP_S = 0.05


@dataclass
class Order:
    """Where one input batch stands among those under way: ``after`` is done once the batch
    before it has been indexed, ``indexed`` once this one has (or has failed)."""

    after: asyncio.Future[None] | None
    indexed: asyncio.Future[None]

    def done(self, _: object = None) -> None:
        if not self.indexed.done():
            self.indexed.set_result(None)


class Worker:
    """The stages of one worker and the glue between them; :func:`install` declares its agents."""

    def __init__(
        self,
        app: faust.App,
        settings: Settings,
        datadir: Path,
        reader: ChangelogReader,
        windows: Windows,
        transactions: Transactions | None,
        name: str = "",
    ) -> None:
        self.app, self.settings, self.reader, self.windows = app, settings, reader, windows
        self.metrics = Metrics(histograms=settings.web_port > 0)
        self.sends = Sends(app, settings, self.metrics)
        self.names = self.sends.names
        self.guard = Guard(self.sends, self.metrics)
        self.handoff = Handoff(self.names, self.sends)
        plan, retention_ms = settings.block_plan, settings.retention_ms
        memory = self.memory = SharedMemory.of(settings.cache_mb, settings.memtable_mb)
        # One store for every index partition this worker owns (worker/state/shared.py).
        features, reorder_ms = settings.stored_features, settings.reorder_ms
        self.shared_index = SharedIndex(
            datadir / "stores" / "index",
            settings.partitions,
            self.names.index_changelog,
            lambda path: open_index(path, plan, retention_ms, reorder_ms=reorder_ms, features=features, memory=memory),
        )
        self.index_stores: StoreSet[IndexPartition] = StoreSet(
            self.shared_index.root,
            self.names.index_changelog,
            lambda path: self.shared_index.partition(int(path.name)),
            reader,
            _CHANGELOG_GROUP_S,
            encode_ops,
            discard=discard_shared,
        )
        verdict_stores: StoreSet[VerdictPartition] = StoreSet(
            datadir / "stores" / "verdict",
            self.names.verdict_changelog,
            lambda path: VerdictPartition(path, retention_ms, memory),
            reader,
            min(VERDICT_GROUP_S, settings.allowed_lateness_ms / 2000),
        )
        self.fingerprint = FingerprintStage(settings)
        self.helper = FingerprintHelper(settings)
        self.batches: set[asyncio.Task[None]] = set()  # input batches under way
        self.index = IndexStage(settings, self.names.events)
        self.verdict = VerdictStage(settings, verdict_stores, self.sends, transactions)
        # Held verdicts out early, and buckets expired, while alone.
        self.frontier = Frontier(settings.partitions, settings.reorder_ms / 1000)
        self.verdict.caught_up = self.frontier.caught_up_ms
        self.verdict.lagging = functools.partial(self.frontier.lagging_ms, self._input_highwaters)
        self.index_lock = asyncio.Lock()  # held by a batch, so shutdown never closes a store under it
        # The operator's side (worker.stream.web): samples, explain and check.
        self.closing = False
        self.restores_pending = 0  # restores that assignments started and that have not finished
        self.sampler = Sampler(
            app, self.metrics, self, name or datadir.name, settings.topic_prefix, topics_lost=self.sends.write_failed
        )
        self.peers = Peers(settings.connection.aiokafka(), settings.group, settings.web_address)
        self.inspector = Inspector(
            settings,
            self.handoff,
            (self.index_stores, verdict_stores),
            (self.fingerprint, self.index),
            reader,
            self.peers,
            self.helper.fingerprints,
        )

    # ------------------------------------------------------------ one event's path
    async def fingerprint_agent(self, stream: faust.StreamT[bytes]) -> None:
        """Raw events in batches, spaced by :class:`Windows` (longer while behind or sharing
        partitions), several under way: while the helper fingerprints a batch
        (:mod:`worker.stream.helper`) and the verdicts of the one before wait for the outputs
        before them, this process indexes another. Batches reach the index in the order they
        came; the next batch is taken once the one before has been indexed."""
        warned, last_size, last_waited, window = False, 0, 0.0, 0.0
        under_way: deque[asyncio.Task[None]] = deque()
        indexed: asyncio.Future[None] | None = None  # done once the batch before has been indexed

        def spacing() -> float:
            nonlocal window
            shared = len(self.handoff.index) < self.settings.partitions
            window = self.windows.after(last_size, shared, last_waited, window)
            return window

        self.helper.start()
        try:
            async for batch in take_batches(stream, _TAKE_MAX, spacing):
                last_size = len(batch)
                last_waited = time.time() - min(event.message.timestamp for event in batch)
                if any(e.message.timestamp_type != _LOG_TIMESTAMP_TYPE for e in batch):
                    self.frontier.reset(sole=False)  # producer clocks: a partition's times may go back
                    if not warned:
                        warned = True
                        log.warning(
                            "%s does not use LogAppendTime; the total order follows producer clocks", self.names.events
                        )
                # Held before this body returns and the batch is acked: its offsets stay
                # uncommitted until the task has taken the holds of what it sends.
                holds = OffsetHolds(batch)
                order = Order(after=indexed, indexed=asyncio.get_running_loop().create_future())
                body = functools.partial(self.fingerprint_batch, order=order, handed_on=holds.hold())
                batch_task = asyncio.ensure_future(self.guard.run("fingerprint", batch, body, holds))
                batch_task.add_done_callback(order.done)  # a batch that failed lets the next one on
                ticket = self.frontier.begin(*appended(event.message for event in batch))
                batch_task.add_done_callback(functools.partial(self._batch_ended, ticket))
                self.batches.add(batch_task)
                batch_task.add_done_callback(self.batches.discard)
                under_way.append(batch_task)
                if indexed is not None:
                    await indexed
                while len(under_way) > _UNDER_WAY:
                    await under_way.popleft()
                indexed = order.indexed
        finally:
            await self.stop_batches()

    async def fingerprint_batch(
        self, batch: Sequence[EventT], holds: OffsetHolds, order: Order, handed_on: Callable[[], None]
    ) -> None:
        started, cpu, clock = time.time(), time.thread_time(), time.perf_counter()
        parsed = self.fingerprint.parse([event.message for event in batch])
        prints = await self.helper.fingerprints(parsed.texts)
        took = time.perf_counter() - clock
        if order.after is not None:
            await order.after
        clock = time.perf_counter()
        fanout = self.fingerprint.fan_out_all(parsed, prints)
        self.metrics.stage_done("fingerprint", took + time.perf_counter() - clock)
        self.metrics.events += fanout.accepted
        await self.sends.dead_letter(fanout.dead)
        local = await self.handoff.probes(fanout, holds.hold())
        answers = None
        if local:
            async with self.index_lock:
                answers = await self.index_step(local, holds)
        order.done()
        if answers:
            async with self.verdict.lock:
                await self.verdict.run(answers, holds.hold())
        handed_on()
        if self.settings.log_batches:
            log_batch(batch, started, cpu)

    def _batch_ended(self, ticket: Ticket, task: asyncio.Task[None]) -> None:
        """An input batch is applied (or failed): held verdicts it was the last to wait for go now."""
        applied = not task.cancelled() and task.exception() is None
        if self.frontier.finish(ticket, applied):
            self.verdict.emit_owned()

    def _input_highwaters(self) -> dict[int, int]:
        """The offset after each assigned input partition's newest record, as the last fetch
        saw it (a partition not fetched yet is left out); the assignment read once."""
        consumer = self.app.consumer
        marks = {tp.partition: consumer.highwater(tp) for tp in consumer.assignment() if tp.topic == self.names.events}
        return {partition: mark for partition, mark in marks.items() if mark is not None}

    async def stop_batches(self) -> None:
        """Cancel the batches under way (their offsets stay uncommitted: read again on restart)."""
        for batch_task in list(self.batches):
            batch_task.cancel()
        await asyncio.gather(*self.batches, return_exceptions=True)

    async def index_batch(self, batch: Sequence[EventT], holds: OffsetHolds) -> None:
        messages = await self.guard.decoded("index", "probes", batch, decode_probes)
        async with self.index_lock:
            answers = await self.index_step(messages, holds)
        if answers:
            async with self.verdict.lock:
                await self.verdict.run(answers, holds.hold())

    async def index_step(
        self, messages: dict[int, list[ProbeMessage]], holds: OffsetHolds
    ) -> dict[int, list[dict[str, Any]]]:
        """Probes per index partition, from Kafka or this worker's fingerprint stage; returns
        the answers for the verdict partitions this worker owns, which the caller hands to the
        verdict stage once it has let go of the index (the next batch's index need not wait
        for these verdicts).

        The source offsets stay uncommitted until this batch's index record, its answers sent
        to other workers, and the verdict record of what it decided here are acknowledged
        (one hold each).
        """
        tx = Transaction(self.index_stores)
        for part in messages:
            await tx.open(part)
        started = time.perf_counter()
        result = self.index.process(tx.touched, messages)
        self.metrics.stage_done("index", time.perf_counter() - started)
        if result.late:
            self.metrics.late += result.late
            late_log.warning(
                "late events so far: %d, older than the retention window (%g days) behind the newest "
                "indexed: decided, not indexed, so nothing later matches them (old data replayed?)",
                self.metrics.late,
                self.settings.retention_days,
            )
        await self.sends.dead_letter(result.dead)
        local = await self.handoff.answers(result.replies, holds.hold())
        await tx.commit(self.sends.changelog(self.names.index_changelog), holds.hold(), self.sends.write_failed)
        self.index.upkeep(list(tx.touched.values()), self.frontier.settled_ms())
        return local

    async def verdict_batch(self, batch: Sequence[EventT], holds: OffsetHolds) -> None:
        decoded = await self.guard.decoded("verdict", "answers", batch, decode_batch)
        items = {part: [item for message in messages for item in message] for part, messages in decoded.items()}
        async with self.verdict.lock:
            await self.verdict.run(items, holds.hold())

    # ------------------------------------------------------- rebalances and timers
    def assigned(self, sender: Any, assigned: set[Any], **_: Any) -> None:
        self.handoff.assigned(assigned)
        every = set(range(self.settings.partitions))
        inputs = {tp.partition for tp in assigned if tp.topic == self.names.events}
        # The events topic may have its own count: only the internal topics are routed over ours.
        count = self.app.consumer.topic_partitions(self.names.events) or self.settings.partitions
        owns = inputs == set(range(count)) and self.handoff.index == every and self.handoff.verdict == every
        self.frontier.reset(sole=owns, partitions=count)
        self.sampler.assigned_once = True
        self.restores_pending += 1
        task = asyncio.ensure_future(self.restore_assigned())
        task.add_done_callback(self._restored)

    async def restore_assigned(self) -> None:
        """Restore every newly assigned partition now, not at its first batch: the worker is
        healthy only once it could answer for all it owns (``/healthz``, ``/explain``)."""
        async with self.index_lock:
            if self.closing:
                return
            for part in sorted(self.handoff.index - self.index_stores.owned()):
                await self.index_stores.restore(part)
        async with self.verdict.lock:
            if self.closing:
                return
            for part in sorted(self.handoff.verdict - self.verdict.stores.owned()):
                await self.verdict.take_over(part)

    def _restored(self, task: asyncio.Task[None]) -> None:
        self.restores_pending -= 1
        failure = None if task.cancelled() else task.exception()
        if isinstance(failure, StoreMismatch):  # every batch would fail the same way: stop
            log.error("restoring assigned partitions failed; stopping: %s", failure)
            self.sends.write_failed(failure)
        elif failure is not None:
            # The partitions' first batches restore them again, and fail the same way if they must.
            log.error("restoring assigned partitions failed", exc_info=failure)

    async def revoked(self, sender: Any, revoked: set[Any], **_: Any) -> None:
        """Another worker may write these partitions' changelogs once this returns: the verdict
        stage logs what it has sent first; restore again if they come back."""
        index, verdict = self.handoff.revoked(revoked)
        self.frontier.reset(sole=False)  # until the next assignment says who owns what
        self.index_stores.forget(index)
        await self.verdict.hand_over(verdict)

    async def hold_ticks(self) -> None:
        """Release due held verdicts every ``tick_s`` until the worker stops.

        A loop of our own rather than ``app.timer``: mode's timer warns whenever one run
        outlasts its interval, which a millisecond tick on a busy loop does a few times a
        second, burying the warnings that matter.
        """
        while not self.app.should_stop:
            await self.app.sleep(self.verdict.tick_s)
            try:
                await self.verdict.release_held()
            except Exception:  # the timer outlives one bad tick: held verdicts still need it
                log.exception("hold timer: a tick failed")

    async def close(self, sender: Any, **_: Any) -> None:
        """The consumer has stopped: no batch runs any more, so the stores can close."""
        self.closing = True
        await self.stop_batches()
        self.helper.close()
        async with self.index_lock, self.verdict.lock:
            for stores in (self.index_stores, self.verdict.stores):
                try:
                    await asyncio.wait_for(stores.drain(), _DRAIN_TIMEOUT_S)
                except TimeoutError:
                    log.warning("changelog records still unacknowledged at shutdown; their stores stay dirty")
            await self.verdict.close(_DRAIN_TIMEOUT_S)
            self.index_stores.close()
            self.shared_index.close()
            self.verdict.stores.close()
        await self.reader.close()
        await self.peers.close()

    # ------------------------------------------------------- the operator's side
    def recovering(self) -> bool:
        return bool(self.restores_pending or self.index_stores.restoring or self.verdict.stores.restoring)

    def index_entries(self) -> int:
        return sum(store.index.entry_count for store in self._owned_index_stores())

    def purges_pending(self) -> int:
        return sum(store.purges_pending for store in self._owned_index_stores())

    def _owned_index_stores(self) -> list[IndexPartition]:
        """A store of the owned partitions once each (they share one)."""
        owned = (self.index_stores.owned_store(part) for part in self.index_stores.owned())
        return one_each(store for store in owned if store is not None)

    def state_dirs(self) -> dict[str, Path]:
        return {"index": self.index_stores.root, "verdict": self.verdict.stores.root}

    def memory_bytes(self) -> dict[str, int]:
        return self.memory.usage()

    async def event_text(self, order: int) -> str | None:
        return await self.inspector.text(order)
