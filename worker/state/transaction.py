"""One batch's changes to one stage's stores: the partitions it touched, logged at commit.

A stage opens each partition it changes through :meth:`Transaction.open` (restored from
the changelog if need be, and marked dirty until this batch's record is acknowledged),
changes the stores, and calls :meth:`Transaction.commit` once: each touched partition's
operations become one changelog record, grouped with other batches' by the store set
(:mod:`worker.state.changelog`). Nothing here knows of Faust; the stages hand in how to send.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic

from worker.state.changelog import S, Send, StoreSet


class Transaction(Generic[S]):
    """The stores one batch changes, and their operations once :meth:`seal`-ed."""

    def __init__(self, stores: StoreSet[S]) -> None:
        self.stores = stores
        self.touched: dict[int, S] = {}
        self._ops: dict[int, list[Any]] = {}

    async def open(self, partition: int) -> S:
        """The partition's store, restored and marked as changed by this batch."""
        store = self.touched.get(partition)
        if store is None:
            await self.stores.restore(partition)
            store = self.touched[partition] = self.stores.begin(partition)
        return store

    def seal(self, partition: int) -> None:
        """Take the partition's operations now (the verdict store numbers a batch when they are taken)."""
        self._ops[partition] = self.touched[partition].take_ops()

    async def commit(
        self,
        send: Send,
        on_durable: Callable[[], None],
        on_failed: Callable[[BaseException], None],
        urgent: bool = False,
    ) -> None:
        """Log every touched partition's operations; ``on_durable`` runs once they are acknowledged."""
        for partition in self.touched:
            if partition not in self._ops:
                self.seal(partition)
        await self.stores.commit(self._ops, send, on_durable, on_failed, urgent=urgent)
