"""One verdict partition's share of a verdict batch: the decisions, revisions and corrections.

Applies the intros, answers and notes of one batch to the partition's store
(:mod:`worker.state.verdicts`) by the rules of :mod:`worker.stream.gather`, reading each
id's state once and writing it once (:meth:`VerdictBatch.save`).
"""

from __future__ import annotations

import logging
from typing import Any

from topology.stages import order_time
from topology.verdicts import Intro, Output, Pending, Published, Ref
from worker.state.verdicts import VerdictPartition
from worker.stream import deadletter, gather
from worker.stream.hold import HeldEntry, Hold
from worker.stream.metrics import Metrics

log = logging.getLogger("neardup.worker")
resent_log = logging.getLogger("neardup.resent")  # at most once a minute (worker.stream.app)

# One outbox entry of a verdict batch: its key in the verdict store and its outputs.
OutboxEntry = tuple[str, list[Output]]


class VerdictBatch:
    """One partition's share of a verdict batch: states read once, written once at :meth:`save`.

    An event is decided when its gather completes; its first verdict is stored at once and
    its outputs held (:mod:`worker.stream.hold`) until ``lateness_ms`` has passed. A note for a held
    verdict revises it; for a sent one it gives a correction.
    """

    def __init__(
        self, store: VerdictPartition, metrics: Metrics, hold: Hold, lateness_ms: int, now: int, events_topic: str
    ) -> None:
        self.store = store
        self.events_topic = events_topic
        self.metrics = metrics
        self.hold = hold
        self.lateness_ms = lateness_ms
        self.now = now
        self.out: list[Output] = []  # sent once this batch's changelog record is acknowledged
        self.held_ids: list[str] = []  # outputs held with this batch's entry, one per id and copy
        self.decided: set[str] = set()  # ids whose first verdict this batch decided
        self.revised: list[str] = []  # held verdicts of earlier batches revised in this one
        self.states: dict[str, Pending | None] = {}
        self.stored: set[str] = set()
        self.arrivals: dict[str, int] = {}  # the order of each id's first item in this batch
        self.published: dict[str, Published | None] = {}
        self.dirty_states: set[str] = set()
        self.dirty_published: set[str] = set()
        self.failed: set[str] = set()  # ids dead-lettered by this batch: their other items are skipped

    def state_of(self, event_id: str) -> Pending | None:
        if event_id not in self.states:
            state = self.store.pending(event_id)
            self.states[event_id] = state
            if state is not None:
                self.stored.add(event_id)
        return self.states[event_id]

    def verdict_of(self, event_id: str) -> Published | None:
        if event_id not in self.published:
            self.published[event_id] = self.store.verdict(event_id)
        return self.published[event_id]

    def is_held(self, event_id: str) -> bool:
        return event_id in self.decided or self.hold.holds(event_id)

    def settle(self, event_id: str, state: Pending) -> None:
        """Keep a gathering state; decide a complete one and hold its outputs."""
        self.states[event_id] = state
        self.dirty_states.add(event_id)
        if not gather.is_complete(state):
            return
        first = gather.decide(state)
        self._set_verdict(event_id, first)
        self.states[event_id] = None
        self.decided.add(event_id)
        original = None if first.current is None else first.current.order
        self.metrics.decided(event_id, first.order, original, state.intro.event.get("text") if state.intro else None)
        self.held_ids.extend([event_id] * (1 + state.copies))

    def _set_verdict(self, event_id: str, published: Published) -> None:
        self.published[event_id] = published
        self.dirty_published.add(event_id)

    def _count_resent(self, event_id: str, changed: bool) -> None:
        """A re-sent id: its first verdict goes out again; another text is not decided (warned)."""
        self.metrics.republished += 1
        if changed:
            self.metrics.resent_changed += 1
            resent_log.warning(
                "id %r re-sent with another text: its first verdict is published again, the "
                "new text is not decided (re-sent ids with another text so far: %d)",
                event_id,
                self.metrics.resent_changed,
            )

    def item(self, item: dict[str, Any]) -> None:
        kind = item.get("kind")
        event_id = str(item["id"])
        if kind in ("event", "answer", "earlier"):  # each names the id's order: when its input arrived
            self.arrivals.setdefault(event_id, int(item["order"]))
        first = self.verdict_of(event_id)
        if kind == "event":
            if first is not None:
                order = int(item["order"])
                if first.answered(order):  # its input read again: the verdict is out, or in the outbox
                    self.metrics.replayed += 1
                    return
                self._set_verdict(event_id, first._replace(copies=(*first.copies, order)))
                self._count_resent(event_id, item.get("fingerprint") != first.fingerprint)
                if self.is_held(event_id):  # goes out with (after) its first verdict, as that is then
                    self.held_ids.append(event_id)
                else:
                    self.out.append(first.output(event_id))
                return
            intro, state = Intro.from_dict(item), self.state_of(event_id)
            gathered = gather.add_intro(state, intro)
            if state is not None and state.intro is not None and gathered.copies > state.copies:
                # Re-sent before its first copy was decided: counted as a copy of a decided one is.
                self._count_resent(event_id, intro.fingerprint != state.intro.fingerprint)
            self.settle(event_id, gathered)
        elif kind == "answer":
            if first is not None:
                return  # a re-sent copy's or a replayed probe's answer
            refs = [Ref.from_dict(r) for r in item["earlier"]]
            tables = [int(t) for t in item["tables"]]
            state = gather.add_answer(self.state_of(event_id), int(item["order"]), tables, refs)
            self.settle(event_id, state)
        elif kind == "earlier":
            ref = Ref.from_dict(item["match"])
            if first is None:
                self.settle(event_id, gather.add_note(self.state_of(event_id), ref))
            elif self.is_held(event_id):
                revised = gather.revise(first, ref)
                if revised is not None:
                    self._set_verdict(event_id, revised)
                    self.metrics.decided(event_id, revised.order, ref.order)
                    if event_id not in self.decided:
                        self.revised.append(event_id)
            else:
                fixed = gather.correct(first, ref)
                if fixed is not None:
                    corrected, correction = fixed
                    self._set_verdict(event_id, corrected)
                    self.out.append(("corrections", event_id, correction))
        else:
            log.warning("ignoring an internal message of unknown kind %r", kind)

    def run(self, items: list[dict[str, Any]]) -> tuple[OutboxEntry | None, HeldEntry | None]:
        """Apply ``items``, write what changed, and put the batch's outbox entries.

        Returns the entry to send once this batch's record is acknowledged (``(key,
        outputs)``, or None), and the entry to hold (or None). Call :meth:`hold_entry` after
        the store's ``take_ops``, which numbers the batch.
        """
        for item in items:
            event_id = str(item.get("id"))
            if event_id in self.failed:
                continue
            try:
                self.item(item)
            except Exception as exc:  # one id's failure is that id's alone
                self.fail(event_id, item.get("order"), exc)
        self.save()
        after_record = (self.store.put_outbox(self.out), self.out) if self.out else None
        held = None
        if self.held_ids:
            outputs = [self._verdict(event_id).output(event_id) for event_id in self.held_ids]
            key = self.store.put_outbox(outputs)
            held = HeldEntry(key, self.now + self.lateness_ms, 0, self.held_ids, self._latest_arrival(self.held_ids))
        return after_record, held

    def _latest_arrival(self, ids: list[str]) -> int | None:
        """When the latest input of ``ids`` was appended (ms): a note for any of them comes from
        an event appended no later (:mod:`worker.stream.frontier`). None if one is unknown."""
        orders = [self.arrivals.get(event_id) for event_id in ids]
        known = [order for order in orders if order is not None]
        return order_time(max(known)) if known and len(known) == len(orders) else None

    def _verdict(self, event_id: str) -> Published:
        """The verdict this batch holds for an id it decided, revised or republishes."""
        published = self.published[event_id]
        assert published is not None
        return published

    def hold_entry(self, held: HeldEntry | None, seq: int) -> None:
        """Hold this batch's entry, the ``seq``-th batch of its store, and mark revisions."""
        if held is not None:
            held.seq = seq
            self.hold.add(held, {event_id: self._verdict(event_id) for event_id in self.decided})
        for event_id in self.revised:
            self.hold.revise(event_id, self._verdict(event_id), seq)

    def fail(self, event_id: str, order: Any, exc: BaseException) -> None:
        """Dead-letter ``event_id`` and undo what this batch did to it; the store keeps its state before."""
        log.error("verdict stage: event %r failed: %s", event_id, deadletter.failure(exc), exc_info=exc)
        self.failed.add(event_id)
        if event_id in self.decided:
            self.decided.discard(event_id)
            self.metrics.undecided(event_id)
        for cache in (self.states, self.published):
            cache.pop(event_id, None)
        self.dirty_states.discard(event_id)
        self.dirty_published.discard(event_id)
        self.held_ids = [i for i in self.held_ids if i != event_id]
        self.revised = [i for i in self.revised if i != event_id]
        self.out = [output for output in self.out if output[1] != event_id]
        self.out.append(
            ("deadletter", event_id, deadletter.for_event("verdict", event_id, order, exc, self.events_topic))
        )

    def save(self) -> None:
        """Write each changed state and verdict once (and log it for the changelog)."""
        for event_id in list(self.dirty_states):
            state = self.states[event_id]
            try:
                if state is not None:  # a new state goes under expiry
                    arrival = None if event_id in self.stored else self.arrivals.get(event_id)
                    self.store.set_pending(event_id, state, arrival)
                elif event_id in self.stored:
                    self.store.set_pending(event_id, None)
            except Exception as exc:
                self.fail(event_id, state.intro.order if state and state.intro else None, exc)
        for event_id in list(self.dirty_published):
            record = self.published[event_id]
            try:
                if record is not None:
                    self.store.set_verdict(event_id, record)
            except Exception as exc:
                self.fail(event_id, None if record is None else record.order, exc)
