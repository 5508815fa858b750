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
from worker.state.partition import IndexPartition
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


@dataclass
class _Seen:
    """One event as its shares of a batch use it, made at the first: verification's probe, the
    filter of candidates by numbers, and the entry packed for the stores. An event has a share
    in most partitions (3.9 of 4 on the dev stream), and each made these again."""

    probe: Fingerprint
    keep: Keep
    packed: Packed | None = None


@dataclass
class IndexResult:
    """What one index batch sends on: items per verdict partition, and dead letters."""

    replies: dict[int, list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))
    dead: list[bytes] = field(default_factory=list)
    # Events not stored, late (older than the window behind the newest): each counted by the
    # partition that carries its intro, so once whichever workers hold its other shares.
    late: int = 0


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
        out = IndexResult()
        answers: dict[tuple[str, int], _Answer] = defaultdict(_Answer)
        verified: Verified = {}  # each (probe event, candidate) pair once per batch, whichever partitions meet it
        seen: dict[tuple[str, int], _Seen] = {}
        for part, values in messages.items():
            # An event's share of one partition is handled as one: one query over its
            # tables, one write of its rows, one answer.
            shares: dict[tuple[str, int], Share] = {}
            introduced: set[tuple[str, int]] = set()
            for batch, intros in values:
                for share in batch:
                    key = (share.id, share.order)
                    shares[key] = share if key not in shares else shares[key].joined(share)
                for intro in intros:  # forwarded to the verdict stage with the answers
                    out.replies[answer_partition(str(intro["id"]), self.partitions)].append(intro)
                    introduced.add((str(intro["id"]), int(intro["order"])))
            kinds = {key: share.kinds() for key, share in shares.items()}
            # The partition's adds in one write, seen by the next event at once; its exact keys in one read.
            with stores[part].deferred(key for slots in kinds.values() for key in slots.read):
                # In arrival order: each sees the events before it, as in scan, and needs no note.
                for share in sorted(shares.values(), key=_arrival):
                    try:
                        slots = kinds[(share.id, share.order)]
                        late = self._index_event(stores[part], share, slots, seen, answers, out.replies, verified)
                        out.late += late and (share.id, share.order) in introduced
                    except Exception as exc:  # one event's failure is that event's alone
                        log.exception("index stage: event %r failed", share.id)
                        dead = deadletter.for_event("index", share.id, share.order, exc, self.events_topic)
                        out.dead.append(codec.dumps(dead))
        for (event_id, order), answer in answers.items():
            earlier = [] if answer.earliest is None else [answer.earliest.to_dict()]
            item = answer_item(event_id, order, answer.tables, earlier)
            out.replies[answer_partition(event_id, self.partitions)].append(item)
        return out

    def _index_event(
        self,
        store: IndexPartition,
        share: Share,
        slots: SlotKinds,
        seen: dict[tuple[str, int], _Seen],
        answers: dict[tuple[str, int], _Answer],
        replies: dict[int, list[dict[str, Any]]],
        verified: Verified,
    ) -> bool:
        """One event's share of this partition: match its buckets, store it there, answer it.
        True when the partition did not store it: late."""
        key = (share.id, share.order)
        event = seen.get(key)
        if event is None:
            event = seen[key] = _Seen(_probe(share), plausible(share.sketch, share.id))
        tables, exact_keys = slots.tables, slots.stored
        found = self._found(store, share, slots, event.keep)
        earlier, later, present = self._match(store, share, found, verified, event.probe)
        # A replayed share, or a re-sent id, does not re-add (its first order stays); a share of
        # lookups alone stores nothing here.
        late = False
        if not present and (tables or exact_keys):
            if event.packed is None:
                event.packed = pack(Entry(share.id, share.fingerprint, share.order, share.ts, share.sketch))
            late = not store.add(event.packed, tables=tables, exact_keys=exact_keys)
        answers[key].add(slots.answered, earlier)
        for later_id, later_order, ref in later:
            note = note_item(later_id, later_order, ref.to_dict())
            replies[answer_partition(later_id, self.partitions)].append(note)
        return late

    def _found(self, store: IndexPartition, share: Share, slots: SlotKinds, keep: Keep | None) -> list[Candidate]:
        """The stored entries near one event in this partition: by its tables' keys, then the
        exact keys it looks up, those ``keep`` refuses left unread (:func:`~worker.engine.sketch.plausible`;
        None reads all, as ``/check`` shows them). Each event once: the exact keys' lookup names
        each once already, and most shares have no tables here."""
        fingerprint = share.fingerprint
        exact = store.exact_candidates(fingerprint, slots.looked_up, keep, share.order) if slots.looked_up else []
        if not slots.tables:
            return exact
        near = store.candidates(fingerprint, slots.tables, self.settings.max_distance, share.order)
        found = {(c.entry.event_id, c.entry.order): c for c in near}
        for candidate in exact:
            found.setdefault((candidate.entry.event_id, candidate.entry.order), candidate)
        return list(found.values())

    def check(self, store: IndexPartition, share: Share) -> tuple[Ref | None, list[dict[str, Any]]]:
        """What :meth:`process` would answer for one event's share of this partition, without
        storing it: its earliest earlier match, and every candidate with its similarity, or why
        verification refused it (``/check``). The event's own entry, stored when the stream
        decided it, is no candidate of itself (as :meth:`_match` leaves it out)."""
        found = [c for c in self._found(store, share, share.kinds(), None) if c.entry.event_id != share.id]
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
        if settled_ms is not None:
            for store in stores:
                store.settle_before(settled_ms)
        added = sum(store.take_added() for store in stores)
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


def _arrival(share: Share) -> int:
    return share.order


def _probe(share: Share) -> Fingerprint:
    """What verification reads of the probing event (its sketch), made once for all its candidates."""
    return Fingerprint(share.fingerprint, share.sketch, None, 0)
