"""Stage 2, index: match each probe in its bucket, store it there, answer the event.

An index partition holds the buckets routed to it (:mod:`worker.state.partition`). For each
event whose share (:class:`~topology.stages.Share`) reached this partition in a batch,
:meth:`IndexStage.process` queries its buckets once, verifies candidates and picks the
earliest by the one rule (:mod:`worker.engine.match`), stores the event, and answers it
with that match. An event found here that is *later* in the total order than the probing
one (partitions race) gets a *note* instead: the verdict stage revises or corrects it
(:mod:`worker.stream.gather`).
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from dataclasses import dataclass, field
from itertools import chain
from typing import Any

from topology import codec
from topology.stages import Share, SlotKinds, answer_item, answer_partition, note_item
from topology.verdicts import Ref
from worker.engine import match
from worker.engine.fingerprint import Fingerprint
from worker.engine.match import Candidate, Entry
from worker.engine.sketch import plausible
from worker.settings import Settings
from worker.state.layout import Packed, pack
from worker.state.partition import IndexPartition, one_each
from worker.state.reads import Keep
from worker.stream import deadletter
from worker.stream.fingerprint import ProbeMessage

log = logging.getLogger("neardup.worker")

# Least time between two steps of bucket upkeep (one column family created or dropped holds
# the GIL for tens of ms): steps one batch apart added up to a stall as long as the one they
# replace.
_UPKEEP_S = 0.25
# Rows of an expired bucket's purge an upkeep step deletes for each entry the batch before it
# added: an entry is an entry row and about one log row to purge a window later, so twice that
# lets a purge that fell behind (a backlog, a restart) catch up while the stream runs.
PURGE_ROWS_PER_ADD = 4

# (probe id, probe order, stored id, stored order) -> similarity, or None if it failed.
Verified = dict[tuple[str, int, str, int], float | None]


@dataclass
class _Answer:
    """One event's answer from one index batch: the tables it probed here, its earliest match."""

    tables: list[int] = field(default_factory=list)
    earliest: Ref | None = None

    def add(self, tables: list[int], earlier: list[Ref]) -> None:
        self.tables.extend(tables)
        if earlier:
            self.earliest = match.first([*earlier, self.earliest] if self.earliest else earlier)


Key = tuple[str, int]  # an event's id and order


@dataclass
class _Seen:
    """One event as its shares of one store use it: verification's probe, the filter of
    candidates by numbers, and the entry packed once for the store and every partition's log."""

    probe: Fingerprint
    keep: Keep
    packed: Packed | None = None

    def pack(self, share: Share) -> Packed:
        if self.packed is None:
            self.packed = pack(Entry(share.id, share.fingerprint, share.order, share.ts, share.sketch))
        return self.packed


@dataclass
class _Event:
    """One event's shares of the partitions of one store (:mod:`worker.state.shared`), handled
    as one: its slots of them all, and each partition's, which each logs."""

    share: Share
    slots: SlotKinds
    pieces: list[tuple[int, SlotKinds]]
    introduced: bool  # one of the shares carries the event's intro

    @classmethod
    def of(cls, share: Share, pieces: list[tuple[int, SlotKinds]], introduced: bool) -> _Event:
        if len(pieces) == 1:
            return cls(share, pieces[0][1], pieces, introduced)
        slots = SlotKinds(
            *(list(chain.from_iterable(lists)) for lists in zip(*(kinds for _, kinds in pieces), strict=True))
        )
        return cls(share, slots, pieces, introduced)


@dataclass
class IndexResult:
    """What one index batch sends on: items per verdict partition, and dead letters."""

    replies: dict[int, list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))
    dead: list[bytes] = field(default_factory=list)
    # Events not stored, late (older than the window behind the newest): each counted by the
    # partition that carries its intro, so once whichever workers hold its other shares.
    late: int = 0


@dataclass
class _Run:
    """One index batch as its stores' events share it."""

    out: IndexResult = field(default_factory=IndexResult)
    answers: dict[Key, _Answer] = field(default_factory=lambda: defaultdict(_Answer))
    verified: Verified = field(default_factory=dict)  # each (probe, candidate) pair once, whichever partitions meet it


class IndexStage:
    """Matches and stores probes in open index stores; no Kafka, so :meth:`process` is tested as is."""

    def __init__(self, settings: Settings, events_topic: str) -> None:
        self.settings = settings
        self.partitions = settings.partitions
        self.retention_ms = settings.retention_ms
        self.events_topic = events_topic
        self._last_upkeep = 0.0

    def process(self, stores: dict[int, IndexPartition], messages: dict[int, list[ProbeMessage]]) -> IndexResult:
        """Probes and intros per index partition, from Kafka or this worker's fingerprint stage."""
        run = _Run()
        for parts in _by_store(stores, messages):
            events = self._events(parts, messages, run.out)
            store = stores[parts[0]]
            # The store's adds in one write, seen by the next event at once; its exact keys in one read.
            with store.deferred(key for event in events.values() for key in event.slots.read):
                # In arrival order: each sees the events before it, as in scan, and needs no note.
                for event in sorted(events.values(), key=_arrival):
                    share = event.share
                    try:
                        late = self._index_event(stores, event, run)
                        run.out.late += late and event.introduced
                    except Exception as exc:  # one event's failure is that event's alone
                        log.exception("index stage: event %r failed", share.id)
                        dead = deadletter.for_event("index", share.id, share.order, exc, self.events_topic)
                        run.out.dead.append(codec.dumps(dead))
        for (event_id, order), answer in run.answers.items():
            earlier = [] if answer.earliest is None else [answer.earliest.to_dict()]
            item = answer_item(event_id, order, answer.tables, earlier)
            run.out.replies[answer_partition(event_id, self.partitions)].append(item)
        return run.out

    def _events(self, parts: list[int], messages: dict[int, list[ProbeMessage]], out: IndexResult) -> dict[Key, _Event]:
        """The events of these partitions' messages, each event's shares as one; the intros
        forwarded to the verdict stage with the answers."""
        pieces: dict[Key, tuple[Share, list[tuple[int, SlotKinds]]]] = {}
        introduced: set[Key] = set()
        for part in parts:
            shares: dict[Key, Share] = {}
            for batch, intros in messages[part]:
                for share in batch:
                    key = (share.id, share.order)
                    shares[key] = share if key not in shares else shares[key].joined(share)
                for intro in intros:
                    out.replies[answer_partition(str(intro["id"]), self.partitions)].append(intro)
                    introduced.add((str(intro["id"]), int(intro["order"])))
            for key, share in shares.items():
                pieces.setdefault(key, (share, []))[1].append((part, share.kinds()))
        return {key: _Event.of(share, mine, key in introduced) for key, (share, mine) in pieces.items()}

    def _index_event(self, stores: dict[int, IndexPartition], event: _Event, run: _Run) -> bool:
        """One event's shares of one store: match its buckets, store it there, answer it.
        True when the store did not store it: late."""
        share, slots = event.share, event.slots
        key = (share.id, share.order)
        seen = _Seen(_probe(share), plausible(share.sketch, share.id))
        store = stores[event.pieces[0][0]]
        tables = [kinds.tables for _, kinds in event.pieces]
        found = self._found(store, share, slots.looked_up, tables, seen.keep)
        earlier, later, present = self._match(store, share, found, run.verified, seen.probe)
        # A replayed share, or a re-sent id, does not re-add (its first order stays); a share of
        # lookups alone stores nothing here.
        late = False
        if present and len(event.pieces) > 1:
            late = self._add_absent(stores, event, seen)
        elif not present and (slots.tables or slots.stored):
            late = not store.store(seen.pack(share), slots.tables, slots.stored)
            for part, kinds in event.pieces:
                if kinds.tables or kinds.stored:
                    stores[part].log(seen.pack(share), kinds.tables, kinds.stored)
        run.answers[key].add(slots.answered, earlier)
        for later_id, later_order, ref in later:
            note = note_item(later_id, later_order, ref.to_dict())
            run.out.replies[answer_partition(later_id, self.partitions)].append(note)
        return late

    def _add_absent(self, stores: dict[int, IndexPartition], event: _Event, seen: _Seen) -> bool:
        """Store and log an event found stored under some of its partitions' slots (a replay)
        under each of the others, as a store of each partition would: each one's presence asked
        of its own slots. True when one was late."""
        share, late = event.share, False
        for part, kinds in event.pieces:
            store = stores[part]
            found = self._found(store, share, kinds.looked_up, [kinds.tables], seen.keep)
            present = any(c.entry.event_id == share.id for c in found)  # as :meth:`_match` says it
            if not present and (kinds.tables or kinds.stored):
                late |= not store.add(seen.pack(share), kinds.tables, kinds.stored)
        return late

    def _found(
        self, store: IndexPartition, share: Share, looked_up: list[int], tables: list[list[int]], keep: Keep | None
    ) -> list[Candidate]:
        """The stored entries near one event: by each of ``tables`` (a partition's block tables,
        queried apart: a read skips a fingerprint's rows in later tables once it read one, which
        holds within what one partition added at once), then the exact keys it looks up, those
        ``keep`` refuses left unread (:func:`~worker.engine.sketch.plausible`; None reads all,
        as ``/check`` shows them). Each event once."""
        fingerprint = share.fingerprint
        exact = store.exact_candidates(fingerprint, looked_up, keep, share.order) if looked_up else []
        if not any(tables):
            return exact
        found: dict[Key, Candidate] = {}
        for some in tables:
            for candidate in store.candidates(fingerprint, some, self.settings.max_distance, share.order):
                found.setdefault((candidate.entry.event_id, candidate.entry.order), candidate)
        for candidate in exact:
            found.setdefault((candidate.entry.event_id, candidate.entry.order), candidate)
        return list(found.values())

    def check(self, store: IndexPartition, share: Share) -> tuple[Ref | None, list[dict[str, Any]]]:
        """What :meth:`process` would answer for one event's share of this partition, without
        storing it: its earliest earlier match, and every candidate with its similarity, or why
        verification refused it (``/check``). The event's own entry, stored when the stream
        decided it, is no candidate of itself (as :meth:`_match` leaves it out)."""
        kinds = share.kinds()
        found = [
            c for c in self._found(store, share, kinds.looked_up, [kinds.tables], None) if c.entry.event_id != share.id
        ]
        probe = _probe(share)
        judged = [match.judge(probe, candidate, self.settings) for candidate in found]
        # The matching reads these similarities instead of verifying each pair again.
        verified: Verified = {
            (share.id, share.order, c.entry.event_id, c.entry.order): j.similarity
            for c, j in zip(found, judged, strict=True)
        }
        earlier, _, _ = self._match(store, share, found, verified, probe)
        oldest_ts = share.ts - self.retention_ms
        shown = [judgement.shown(candidate, oldest_ts) for candidate, judgement in zip(found, judged, strict=True)]
        return (earlier[0] if earlier else None), shown

    def _match(
        self, store: IndexPartition, share: Share, candidates: list[Candidate], verified: Verified, probe: Fingerprint
    ) -> tuple[list[Ref], list[tuple[str, int, Ref]], bool]:
        """The bucket's matches of ``share`` (whose sketch ``probe`` holds) by :mod:`worker.engine.match`:
        its earliest earlier match, every later event it matches (each needs a note: one whose
        window, when it arrived, held this event), and whether it is stored here already."""
        others = [c for c in candidates if c.entry.event_id != share.id]
        if not others:  # most shares: nothing stored near them here
            return [], [], len(others) < len(candidates)

        def similarity_of(candidate: Candidate) -> float | None:
            stored = candidate.entry
            pair = (share.id, share.order, stored.event_id, stored.order)
            if pair not in verified:
                verified[pair] = match.accepts(probe, candidate, self.settings)
            return verified[pair]

        found = match.earliest(others, similarity_of, share.ts - self.retention_ms, before_order=share.order)
        earlier = (
            [] if found is None else [Ref(found[0].entry.event_id, found[0].entry.order, found[0].distance, found[1])]
        )
        later: list[tuple[str, int, Ref]] = []
        for candidate in sorted(others, key=lambda c: match.precedence(c.entry.order, c.distance)):
            if candidate.entry.order > share.order and not store.behind(share.ts, candidate.entry.order):
                similarity = match.is_later_match(share.ts, candidate, similarity_of, self.retention_ms)
                if similarity is not None:
                    later.append(
                        (
                            candidate.entry.event_id,
                            candidate.entry.order,
                            Ref(share.id, share.order, candidate.distance, similarity),
                        )
                    )
        return earlier, later, len(others) < len(candidates)

    def upkeep(self, stores: list[IndexPartition], settled_ms: int | None = None) -> None:
        """After a batch, a slice of an expired bucket's purge where one is under way, sized to
        the entries the batch stored (:data:`PURGE_ROWS_PER_ADD`), so that expiry keeps pace with
        the stream at any batch size: a fixed slice kept pace with small batches only, and a
        worker at full load fell behind by buckets. Else, now and then, one column family
        created or dropped, so the next time bucket is ready before its first event
        (:meth:`worker.state.buckets.TimeBuckets.maintain`).

        ``settled_ms``: every event that arrived before it is indexed, and no share sent before
        this worker's assignment can still come (:meth:`worker.stream.frontier.Frontier.settled_ms`),
        so buckets expire without waiting out the reorder window, which in a backfill kept weeks
        of event time beyond the window live."""
        added = sum(store.take_added() for store in stores)
        stores = one_each(stores)
        if settled_ms is not None:
            for store in stores:
                store.settle_before(settled_ms)
        for store in stores:
            if store.purging:
                store.maintain(PURGE_ROWS_PER_ADD * added)
                return
        now = time.monotonic()
        if now - self._last_upkeep < _UPKEEP_S:
            return
        for store in stores:
            if store.maintain():
                self._last_upkeep = now
                return


def _arrival(event: _Event) -> int:
    return event.share.order


def _by_store(stores: dict[int, IndexPartition], messages: dict[int, list[ProbeMessage]]) -> list[list[int]]:
    """The partitions of ``messages`` grouped by the block index they keep their buckets in: a
    worker's share one (:mod:`worker.state.shared`), a partition alone has its own."""
    groups: dict[int, list[int]] = {}
    for part in messages:
        groups.setdefault(id(stores[part].index), []).append(part)
    return list(groups.values())


def _probe(share: Share) -> Fingerprint:
    """What verification reads of the probing event (its sketch), made once for all its candidates."""
    return Fingerprint(share.fingerprint, share.sketch, None, 0)
