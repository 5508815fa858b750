"""Each stage's output goes to the next stage's partitions: through Kafka, or straight in-process.

The partitions of ``{p}.probes`` and ``{p}.answers`` this worker is assigned now are *local*:
a stage hands its output for one of them straight to the next stage in this process,
already decoded, instead of encoding it, sending it, and reading it back. A worker that owns
everything thus talks to Kafka only for input, outputs and changelogs; every other share is
sent as one message per destination partition per batch (split past the message size).

A batch's source offsets wait for those messages too: the caller's hold is released once
the broker has acknowledged every one of them, so a crash between the send and its
acknowledgement cannot commit the offsets of events whose share never reached Kafka.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from topology.codec import encode_chunks
from topology.stages import Topics, encode_probes
from worker.stream.fingerprint import Fanout, ProbeMessage
from worker.stream.sends import Sends


class Handoff:
    """Which internal partitions are local now, and the sends of the shares that are not."""

    def __init__(self, names: Topics, sends: Sends) -> None:
        self.names = names
        self.sends = sends
        self.index: set[int] = set()
        self.verdict: set[int] = set()
        self._acking: set[asyncio.Task[None]] = set()

    def assigned(self, assigned: Iterable[Any]) -> None:
        """``assigned`` is the whole new assignment (topic partitions)."""
        assigned = list(assigned)
        self.index = {tp.partition for tp in assigned if tp.topic == self.names.probes}
        self.verdict = {tp.partition for tp in assigned if tp.topic == self.names.answers}

    def revoked(self, revoked: Iterable[Any]) -> tuple[list[int], list[int]]:
        """Drop revoked partitions; returns the index and verdict partitions lost."""
        revoked = list(revoked)
        index = [tp.partition for tp in revoked if tp.topic == self.names.probes]
        verdict = [tp.partition for tp in revoked if tp.topic == self.names.answers]
        self.index.difference_update(index)
        self.verdict.difference_update(verdict)
        return index, verdict

    async def probes(self, fanout: Fanout, release: Callable[[], None]) -> dict[int, list[ProbeMessage]]:
        """Send each remote index partition its shares; return the local partitions' messages.
        ``release`` runs once the broker has acknowledged every message sent."""
        local: dict[int, list[ProbeMessage]] = {}
        sent: list[Awaitable[Any]] = []
        for part, shares in fanout.shares.items():
            if part in self.index:
                local[part] = [fanout.message(part)]
                continue
            for chunk in encode_probes(shares, fanout.intros[part]):
                sent.append(await self.sends.send(self.names.probes, None, chunk, part))
        self._release_when_acked(sent, release)
        return local

    async def answers(
        self, replies: dict[int, list[dict[str, Any]]], release: Callable[[], None]
    ) -> dict[int, list[dict[str, Any]]]:
        """Send each remote verdict partition its items; return the local partitions' items.
        ``release`` runs once the broker has acknowledged every message sent."""
        local: dict[int, list[dict[str, Any]]] = {}
        sent: list[Awaitable[Any]] = []
        for part, items in replies.items():
            if part in self.verdict:
                local[part] = items
                continue
            for chunk in encode_chunks(items):
                sent.append(await self.sends.send(self.names.answers, None, chunk, part))
        self._release_when_acked(sent, release)
        return local

    def _release_when_acked(self, sent: list[Awaitable[Any]], release: Callable[[], None]) -> None:
        if not sent:
            release()
            return
        task = asyncio.ensure_future(self._acked(sent, release))
        self._acking.add(task)
        task.add_done_callback(self._acking.discard)

    async def _acked(self, sent: list[Awaitable[Any]], release: Callable[[], None]) -> None:
        try:
            for delivery in sent:
                await delivery
        except Exception as exc:  # the message is lost: stop, its batch's offsets uncommitted
            self.sends.write_failed(exc)
            return
        release()
