"""Stage 3, verdict: gather an id's intro and answers, decide once, publish after the changelog.

:meth:`VerdictStage.process` applies a batch's items to each partition's store
(:class:`~worker.stream.verdict_batch.VerdictBatch`); :meth:`VerdictStage.run` wraps it in
one store transaction and hands outputs to the outbox only once the batch's changelog
record is acknowledged (:mod:`worker.stream.outbox`), so no output is ever sent that a
restore could decide differently. Decided verdicts wait out the lateness hold first
(:mod:`worker.stream.hold`); the hold timer calls :meth:`VerdictStage.release_held`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from topology.verdicts import Output
from worker.settings import Settings
from worker.state.changelog import StoreSet
from worker.state.transaction import Transaction
from worker.state.verdicts import VerdictPartition
from worker.stream import deadletter
from worker.stream.hold import HeldEntry, Hold, unknown
from worker.stream.outbox import Outbox
from worker.stream.sends import Sends
from worker.stream.transactions import TransactionalOutbox, Transactions
from worker.stream.verdict_batch import VerdictBatch

log = logging.getLogger("neardup.worker")

# Grouped verdict changelog records wait at most this long (a batch with outputs to send
# after its record flushes at once, taking the grouped ones along); kept under the hold, so a
# held verdict's record is usually acknowledged when its hold ends.
VERDICT_GROUP_S = 0.01
# The hold timer deletes acknowledged outbox entries only after no batch has run this long.
_IDLE_DELETE_S = 0.05
# How long a revocation waits to log the deletes of what this worker sent (a rebalance waits
# with it; past this, the next owner sends those outputs again, as at-least-once allows).
_HAND_OVER_S = 3.0
# Least time between two slices of verdict expiry, and the fewest and most verdicts one slice
# of a partition deletes: EXPIRE_PER_FILED for each id filed since its last slice, so expiry
# keeps pace with the stream at any rate (twice what was filed lets it catch up after a
# backlog or a restart), and no slice is a long pause.
_EXPIRE_S = 1.0
_EXPIRE_SLICE = 500
_EXPIRE_MOST = 20_000
EXPIRE_PER_FILED = 2


def _nothing_to_release() -> None:
    """Batches of the hold timer and of shutdown have no source messages."""


@dataclass
class VerdictResult:
    """One verdict batch applied: outputs to send after its record, and the partitions' deciders."""

    after_record: list[tuple[int, str, list[Output]]] = field(default_factory=list)
    decided: list[tuple[int, VerdictBatch, HeldEntry | None]] = field(default_factory=list)


class VerdictStage:
    """The verdict partitions this worker owns: their stores, holds and outbox."""

    def __init__(
        self, settings: Settings, stores: StoreSet[VerdictPartition], sends: Sends, transactions: Transactions | None
    ) -> None:
        self.names = sends.names
        self.lateness_ms = settings.allowed_lateness_ms
        self.stores = stores
        self.sends = sends
        self.metrics = sends.metrics
        self.transactions = transactions
        self.holds: dict[int, Hold] = defaultdict(Hold)
        self.outbox: Outbox | TransactionalOutbox = Outbox(sends.output, sends.write_failed, self.metrics.sent)
        if transactions is not None:
            self.outbox = TransactionalOutbox(
                transactions, sends.outputs, stores.begin, self._published, sends.write_failed, self.metrics.sent
            )
        # Batches and the hold timer's outbox deletes both change the stores; one lock keeps them apart.
        self.lock = asyncio.Lock()
        self.last_batch = 0.0  # when a batch last finished (it deletes acknowledged entries too)
        self._last_expiry = 0.0
        # Held verdicts go out within a fifth of the hold (at least 4 ms) of falling due.
        self.tick_s = max(0.004, self.lateness_ms / 5000)
        # Before it, when no earlier input can still come; after it, while an input partition
        # lags (the worker's Frontier tells).
        self.caught_up: Callable[[], int | None] = unknown
        self.lagging: Callable[[], int | None] = unknown
        # Partitions being handed over: what they hold is the next owner's to send (hand_over).
        self._leaving: set[int] = set()

    async def run(self, by_partition: dict[int, list[dict[str, Any]]], release: Callable[[], None]) -> None:
        """Intros, answers and notes per verdict partition, from Kafka or this worker's index stage.

        The hold timer calls this with no items for partitions whose acknowledged outbox
        entries are to be deleted.
        """
        if any(by_partition.values()):
            await self.outbox.settled()
        tx = Transaction(self.stores)
        for part in by_partition:
            await self.take_over(part)
            await tx.open(part)
        started = time.perf_counter()
        result = self.process(tx.touched, by_partition, int(time.time() * 1000))
        self.metrics.stage_done("verdict", time.perf_counter() - started)
        for part, decider, held in result.decided:
            tx.seal(part)
            decider.hold_entry(held, decider.store.taken)
        taken = [(part, store, store.taken) for part, store in tx.touched.items()]

        def durable() -> None:
            for _, store, seq in taken:
                store.settled_through(seq)
            release()
            for part, key, outputs in result.after_record:
                if part not in self._leaving:
                    self.outbox.emit(part, key, outputs)
            for part, store, _ in taken:
                self.emit_due(part, store)  # with no hold, this batch's verdicts are due now

        # Grouped when no output waits for this record alone: held verdicts wait for their
        # hold, which is at least twice the group time; without items no source offset stays
        # uncommitted to make a rebalance wait for this record.
        # Nor when this worker releases held verdicts early: they wait for this record alone.
        grouped = not result.after_record and any(by_partition.values()) and self.caught_up() is None
        await tx.commit(
            self.sends.changelog(self.names.verdict_changelog), durable, self.sends.write_failed, not grouped
        )
        if any(by_partition.values()):  # the hold timer's deletes do not count as a batch
            self.last_batch = time.monotonic()
            self.expire(list(tx.touched.values()))

    def expire(self, stores: list[VerdictPartition]) -> None:
        """Now and then, a slice of the verdicts that left the retention window
        (:meth:`~worker.state.verdicts.VerdictPartition.expire`), sized to what each store filed
        since its last: a fixed 500 a second fell behind a partition taking more than that."""
        if self.last_batch - self._last_expiry < _EXPIRE_S:
            return
        self._last_expiry = self.last_batch
        for store in stores:
            store.expire(expiry_slice(store.take_filed()))

    def process(
        self, stores: dict[int, VerdictPartition], by_partition: dict[int, list[dict[str, Any]]], now: int
    ) -> VerdictResult:
        """Apply each partition's items to its store: first its due held entries go out (a note
        in this batch for one of them is a correction), then the items are decided."""
        result = VerdictResult()
        for part, items in by_partition.items():
            store = stores[part]
            self.emit_due(part, store)
            decider = VerdictBatch(store, self.metrics, self.holds[part], self.lateness_ms, now, self.names.events)
            after_record, held = decider.run(items)
            if after_record is not None:
                result.after_record.append((part, *after_record))
            store.drop_outbox(self.outbox.take_acked(part))
            result.decided.append((part, decider, held))
        return result

    async def take_over(self, part: int) -> None:
        """A partition new to this worker: fence its previous owner, restore it, send its outbox again."""
        if part in self.stores.owned():
            return
        # A transaction this worker began before the partition was revoked may still be under
        # way. Its commit deletes its entries from the local store (``_published``), and a
        # restore whose checkpoint already lies past its changelog record relies on that
        # delete: restoring before it lands would find those entries unsent and publish them
        # a second time. Restores at assignment come here without a batch's wait for this.
        await self.outbox.settled()
        if self.transactions is not None:
            await self.transactions.open(part)  # fences a previous owner before reading the log's end
        store = await self.stores.restore(part)
        self.holds.pop(part, None)
        unsent = store.outbox()  # durable, perhaps never sent (held ones too): send now
        if unsent:
            records = sum(len(outputs) for _, outputs in unsent)
            log.info("%s[%d]: sending %d outbox records again", self.names.answers, part, records)
        for key, outputs in unsent:
            self.outbox.emit(part, key, outputs)
        where = (self.names.verdict_changelog, part, -1)
        await self.sends.dead_letter(
            [
                deadletter.value("verdict", f"unreadable outbox value: {why}", where, raw)
                for _, raw, why in store.unreadable
            ]
        )

    def emit_due(self, part: int, store: VerdictPartition, everything: bool = False) -> None:
        """Hand the partition's held entries whose hold ran out (all, with ``everything``) and
        whose records are acknowledged to the outbox."""
        hold = self.holds.get(part)
        if hold and part not in self._leaving:
            now = int(time.time() * 1000)
            for key, outputs, by in hold.take_due(
                now, store.settled, store.verdict, everything, self.caught_up(), self.lagging
            ):
                self.metrics.holds_ended[by] += 1
                self.outbox.emit(part, key, outputs)

    def emit_owned(self, everything: bool = False) -> None:
        """:meth:`emit_due` for every partition this worker owns and has restored."""
        for part in sorted(self.holds):
            store = self.stores.owned_store(part)
            if store is not None:
                self.emit_due(part, store, everything)

    async def release_held(self) -> None:
        """Send held verdicts whose hold ran out; delete acknowledged outbox entries while no
        batch has run for a while (batches delete them as they go)."""
        self.emit_owned()
        if not self.outbox.acked_partitions() or self.lock.locked():
            return
        if time.monotonic() - self.last_batch < _IDLE_DELETE_S:
            return
        async with self.lock:
            await self._delete_acked()

    async def _delete_acked(self, parts: list[int] | None = None) -> None:
        """One batch without items over the partitions (of ``parts``) this worker owns whose
        outbox entries were acknowledged: it deletes those entries, in its changelog record."""
        acked = self.outbox.acked_partitions() & self.stores.owned()
        if parts is not None:
            acked &= set(parts)
        if acked:
            await self.run({part: [] for part in sorted(acked)}, _nothing_to_release)

    async def hand_over(self, lost: list[int]) -> None:
        """Partitions revoked, before anyone else is given them: log the deletes of their outbox
        entries this worker sent and saw acknowledged, within ``_HAND_OVER_S``. The next owner
        sends again whatever its restore finds in the outbox: without this, a rebalance repeated
        the outputs of the last moments (a newcomer's try: 4-5 of 400 each time a worker
        rejoined). Exactly once needs none of it: the next owner fences this one.

        Meanwhile nothing more of theirs is sent from here: a held verdict that fell due during
        the hand-over (released by the batch that logs the deletes, or by the hold's timer) went
        out after the deletes were counted, and the next owner sent it again."""
        owned = [part for part in lost if part in self.stores.owned()]
        self._leaving.update(lost)
        try:
            if owned and self.transactions is None:
                try:
                    await self._log_sent(owned, time.monotonic() + _HAND_OVER_S)
                except TimeoutError:
                    log.info("revoked %s: outbox deletes not logged in time; the next owner sends them again", owned)
            self.forget(lost)
        finally:
            self._leaving.difference_update(lost)

    async def _log_sent(self, parts: list[int], deadline: float) -> None:
        """Only the waits are bounded, as in :meth:`close`: a verdict batch cancelled half-way
        through its commit would leave its stores to whoever comes next in that state."""
        await asyncio.wait_for(self.outbox.settled(), deadline - time.monotonic())
        await asyncio.wait_for(self.lock.acquire(), deadline - time.monotonic())
        try:
            await self._delete_acked(parts)
        finally:
            self.lock.release()
        await asyncio.wait_for(self.stores.drain(), max(0.0, deadline - time.monotonic()))

    def forget(self, lost: list[int]) -> None:
        """Partitions revoked: another worker may write their changelogs now."""
        self.stores.forget(lost)
        self.outbox.forget(lost)
        if self.transactions is not None:
            for part in lost:  # detached now: the next open() of it fences whatever is in flight
                asyncio.ensure_future(self.transactions.close(part))
        for part in lost:
            self.holds.pop(part, None)

    def _published(self, partition: int, keys: list[str]) -> None:
        """Exactly once: a transaction deleted these entries in the changelog; delete them here too,
        also in a store revoked meanwhile: a later restore of it starts from its checkpoint,
        which may already lie past the transaction's record."""
        store = self.stores.open_store(partition)
        if store is not None:
            for key in keys:
                store.published(key)
        self.stores.settle_unlogged(partition)

    async def close(self, drain_timeout_s: float) -> None:
        """Shutdown, with no batch running: send what is durable, delete what is acknowledged."""
        self.emit_owned(everything=True)  # durable already: no reason to keep them back now
        try:
            await asyncio.wait_for(self.outbox.settled(), drain_timeout_s)
            await self._delete_acked()
            await asyncio.wait_for(self.stores.drain(), drain_timeout_s)
        except TimeoutError:
            log.warning("outputs still unacknowledged at shutdown; the next owner sends them again")
        await self.outbox.close()
        if self.transactions is not None:
            await self.transactions.close_all()


def expiry_slice(filed: int) -> int:
    """How many verdicts a partition's expiry slice deletes after ``filed`` ids were filed."""
    return min(max(_EXPIRE_SLICE, EXPIRE_PER_FILED * filed), _EXPIRE_MOST)
