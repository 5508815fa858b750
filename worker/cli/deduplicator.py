"""Where a verdict is decided: probe, verify, choose, then index.

For each event, in arrival order:

1. An id seen before gets its first verdict again (producer retries, replays).
2. Otherwise the text is fingerprinted and the block tables are probed *loosely*: every
   stored fingerprint that shares a table key and lies within ``max_distance`` bits is a
   candidate (everything within ``k`` is guaranteed to be among them).
3. Each candidate is verified with the MinHash sketches (:func:`worker.engine.match.accepts`); candidates older
   than the retention window (event time) are ignored.
4. The event is a duplicate of the *earliest* verified candidate in arrival order, the
   closest one breaking ties, or unique if none passed: :mod:`worker.engine.match`, the rule the
   stream applies too.
5. The event is indexed and its verdict recorded, so later events can match it. Both expire
   with the event's time bucket; an event older than the index's window (late) is decided
   but leaves no trace, so a replay of it is decided afresh.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from topology.codec import dumps, loads
from topology.records import Event, Verdict
from worker.engine import match
from worker.engine.blocks import hamming
from worker.engine.fingerprint import Fingerprint, fingerprint
from worker.engine.match import Candidate, Entry
from worker.engine.simhash import to_hex
from worker.engine.sketch import plausible
from worker.settings import Settings
from worker.state.index import BlockIndex

_VERDICT_PREFIX = "v:"
_NEXT_ORDER = "meta:next_order"
# Ids of this run remembered (by hash) to skip the first-verdict lookup of a new one; past
# this many the lookups are made again for every id, so memory stays bounded.
_SEEN_LIMIT = 1 << 20


@dataclass(frozen=True, slots=True)
class Match:
    """A candidate that passed verification."""

    candidate: Candidate
    similarity: float


class Deduplicator:
    """Decides events one at a time against one :class:`BlockIndex` (batch mode and tests)."""

    def __init__(self, index: BlockIndex, settings: Settings, durable: bool = True) -> None:
        self.index = index
        self.settings = settings
        self.durable = durable  # False: a store deleted after the run, never flushed
        stored = index.get_record(_NEXT_ORDER)
        self._next_order = int(stored) if stored else 0
        self.late = 0  # events decided but not stored: older than the window behind the newest
        self.resent = 0  # ids seen before: their first verdict again
        self.resent_changed = 0  # of those, with another text (not decided, as in the stream)
        # A store that has never held an event (no watermark) holds the first verdict of an id
        # only if this run decided it: a lookup of any other id (up to nine point reads, one a
        # live bucket) can be skipped.
        self._seen: set[int] | None = set() if index.bucket_ms and index.watermark is None else None

    def decide(self, event: Event, now_ms: int | None = None, probe: Fingerprint | None = None) -> Verdict:
        """The verdict for ``event``; indexes it when it is new. ``probe``: its text's
        fingerprint, if already computed (``neardup scan`` computes them ahead)."""
        return self.decide_encoded(event, now_ms, probe)[0]

    def _count_resent(self, first: Verdict, event: Event, probe: Fingerprint | None) -> None:
        """Count a re-sent id, and whether its text is another than its first one's (the
        stream's counter and warning say the same of its re-sent ids)."""
        self.resent += 1
        if probe is None:
            probe = fingerprint(event.text, self.settings)
        self.resent_changed += to_hex(probe.simhash) != first.fingerprint

    def decide_encoded(
        self, event: Event, now_ms: int | None = None, probe: Fingerprint | None = None
    ) -> tuple[Verdict, bytes]:
        """:meth:`decide`, with the verdict's JSON as recorded: the scan writes those bytes
        rather than encode the verdict a second time."""
        known = self._seen is None or hash(event.id) in self._seen
        seen = self.index.get_record(_VERDICT_PREFIX + event.id) if known else None
        if seen is not None:
            first = Verdict.from_dict(loads(seen))
            self._count_resent(first, event, probe)
            return first, seen
        ts = event.ts if event.ts is not None else (now_ms if now_ms is not None else int(time.time() * 1000))
        if probe is None:
            probe = fingerprint(event.text, self.settings)
        order = self._next_order
        self._next_order += 1
        match = self._best_match(probe, ts)
        if match is None:
            verdict = Verdict(event.id, "unique", None, None, to_hex(probe.simhash), ts)
        else:
            verdict = Verdict(
                event.id,
                "duplicate",
                match.candidate.entry.event_id,
                match.candidate.distance,
                to_hex(probe.simhash),
                ts,
                round(match.similarity, 3),
            )
        entry = Entry(event_id=event.id, fingerprint=probe.simhash, order=order, ts=ts, sketch=probe.sketch)
        # The first verdict is kept as long as the event's own entries (retention by event time).
        encoded = dumps(verdict.to_dict())
        record = (_VERDICT_PREFIX + event.id, encoded)
        if not self.index.add(
            entry, tables=None if probe.in_tables else [], exact_keys=probe.stored_keys, record=record
        ):
            self.late += 1
        elif self._seen is not None:
            self._seen.add(hash(event.id))
            if len(self._seen) > _SEEN_LIMIT:
                self._seen = None
        return verdict, encoded

    def _best_match(self, probe: Fingerprint, ts: int) -> Match | None:
        oldest = ts - self.settings.retention_ms
        candidates = self._candidates(probe)
        found = match.earliest(candidates, lambda c: match.accepts(probe, c, self.settings), oldest)
        return None if found is None else Match(*found)

    def _candidates(self, probe: Fingerprint) -> list[Candidate]:
        """Every stored event near ``probe`` in the tables or under one of its exact keys, once."""
        candidates: dict[tuple[str, int], Candidate] = {}
        if probe.in_tables:
            for candidate in self.index.query(probe.simhash, self.settings.max_distance):
                candidates[(candidate.entry.event_id, candidate.entry.order)] = candidate
        for entry in self.index.query_exact_many(probe.probe_keys, plausible(probe.sketch)):
            candidates.setdefault(
                (entry.event_id, entry.order), Candidate(entry, hamming(entry.fingerprint, probe.simhash))
            )
        return list(candidates.values())

    def check(self, text: str, ts: int | None = None) -> dict[str, Any]:
        """The verdict ``text`` would get now (as an event of time ``ts``, default now), and each
        candidate with its similarity or why verification refused it, as a worker's ``/check``
        answers; nothing is stored (``neardup check --state``)."""
        ts = int(time.time() * 1000) if ts is None else ts
        probe = fingerprint(text, self.settings)
        candidates = sorted(self._candidates(probe), key=lambda c: match.precedence(c.entry.order, c.distance))
        judged = [match.judge(probe, candidate, self.settings) for candidate in candidates]
        similarity = {id(c): j.similarity for c, j in zip(candidates, judged, strict=True)}
        oldest = ts - self.settings.retention_ms
        found = match.earliest(candidates, lambda c: similarity[id(c)], oldest)
        verdict: dict[str, Any] = {"verdict": "unique"}
        if found is not None:
            best, score = found
            verdict = {"verdict": "duplicate", "duplicate_of": best.entry.event_id}
            verdict |= {"distance": best.distance, "similarity": round(score, 3)}
        shown = [j.shown(c, oldest) for c, j in zip(candidates, judged, strict=True)]
        return verdict | {"fingerprint": to_hex(probe.simhash), "candidates": shown}

    def flush(self) -> None:
        """Persist pending index writes and the arrival counter (unless not ``durable``)."""
        if not self.durable:
            return
        self.index.put_record(_NEXT_ORDER, str(self._next_order).encode())
        self.index.flush()
