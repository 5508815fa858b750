"""Asking a running group why: ``/explain/{id}`` and ``/check`` (docs/architecture.md, "Operating").

Both read the same stores the stages write, never write them, and run the same rule:
an explanation is the verdict store's record of an id (its first verdict and the original
it points to now), followed up to the root original; a check fingerprints a text as the
fingerprint stage would, asks each index partition its buckets are in for its earliest
verified match (:meth:`worker.stream.index.IndexStage.check`) and takes the first of them
(:func:`worker.engine.match.first`), as the verdict stage does.

A partition's questions go to the worker that owns it (:mod:`worker.stream.peers`); the
``local`` forms of the endpoints answer for this worker's own partitions only.
"""

from __future__ import annotations

import time
import uuid
from collections import defaultdict
from typing import Any

from topology import codec
from topology.stages import (
    MAX_OFFSET,
    MAX_PARTITION,
    ORDER_TS_SHIFT,
    Share,
    Topics,
    answer_partition,
    order_source,
    slot_partition,
)
from topology.verdicts import Ref
from worker.engine import match
from worker.engine.fingerprint import Fingerprint
from worker.engine.sketch import SKETCH_BYTES, compare
from worker.settings import Settings
from worker.state.changelog import StoreSet
from worker.state.partition import IndexPartition
from worker.state.replay import ChangelogReader
from worker.state.verdicts import VerdictPartition
from worker.stream.fingerprint import Fingerprints, FingerprintStage
from worker.stream.handoff import Handoff
from worker.stream.index import IndexStage
from worker.stream.peers import PeerError, Peers
from worker.stream.routes import Routed
from worker.stream.stats import event_text

_CHAIN_MAX = 32  # originals followed toward the root; pointers only go to earlier events


class Inspector:
    """Answers explain and check for this worker's partitions, and forwards the rest."""

    def __init__(
        self,
        settings: Settings,
        handoff: Handoff,
        stores: tuple[StoreSet[IndexPartition], StoreSet[VerdictPartition]],
        stages: tuple[FingerprintStage, IndexStage],
        reader: ChangelogReader,
        peers: Peers,
        prints: Fingerprints,
    ) -> None:
        self.settings = settings
        # The worker's fingerprint helper: with it on, this process never loads the tables.
        self.prints = prints
        self.names: Topics = handoff.names
        self.handoff = handoff
        self.index_stores, self.verdict_stores = stores
        self.fingerprint, self.index = stages
        self.reader = reader
        self.peers = peers

    # ------------------------------------------------------------------ explain
    def local_record(self, event_id: str) -> dict[str, Any] | None:
        """This worker's verdict-store record of ``event_id`` (it must own the id's partition)."""
        part = answer_partition(event_id, self.settings.partitions)
        store = self._owned(self.verdict_stores, self.handoff.verdict, part)
        published = store.verdict(event_id)
        if published is not None:
            record = published.to_dict()
            record.update(id=event_id, state="published")
            return record
        pending = store.pending(event_id)
        if pending is None or pending.intro is None:
            return None
        return {"id": event_id, "state": "gathering", "order": pending.intro.order, "ts": pending.intro.ts}

    async def record(self, event_id: str) -> dict[str, Any] | None:
        """:meth:`local_record`, asked of whichever worker owns the id's partition."""
        part = answer_partition(event_id, self.settings.partitions)
        if part in self.handoff.verdict:
            return self.local_record(event_id)
        url = await self._owner(self.names.answers, part)
        try:
            found: dict[str, Any] | None = await self.peers.call(url, f"/explain/{_quote(event_id)}?local=1")
        except PeerError as exc:
            if exc.status == 404:
                return None
            raise
        return found

    async def explain(self, event_id: str) -> dict[str, Any] | None:
        """Why ``event_id`` got its verdict: the original, how it was found, the chain, any correction."""
        record = await self.record(event_id)
        if record is None:
            return None
        text = await self.text(int(record["order"]))
        shown: dict[str, Any] = {
            "id": event_id,
            "state": record["state"],
            "text": text,
            "event_time": record["ts"],
            "appended": int(record["order"]) >> ORDER_TS_SHIFT,
        }
        if record["state"] != "published":
            return shown | {"verdict": None}
        current = None if record["current"] is None else Ref.from_dict(record["current"])
        first = record["value"]
        shown |= {
            "verdict": "unique" if current is None else "duplicate",
            "published": {k: first.get(k) for k in ("verdict", "duplicate_of", "distance", "similarity")},
            "corrections": record["corrections"],
        }
        if current is None:
            return shown | {"duplicate_of": None, "chain": [event_id]} | self._window(int(record["ts"]))
        original = await self.record(current.id)
        original_text = await self.text(current.order)
        shown |= {
            "duplicate_of": current.id,
            "distance": current.distance,
            "similarity": round(current.similarity, 3),
            "original": {
                "id": current.id,
                "text": original_text,
                "event_time": None if original is None else original["ts"],
                "appended": current.order >> ORDER_TS_SHIFT,
            },
            "found_by": await self._found_by(record["fingerprint"], text, original, original_text),
            "chain": [event_id, *await self._chain(current.id, original)],
        }
        return shown

    def _window(self, ts: int) -> dict[str, Any]:
        """Whether event time ``ts`` is inside the retention window behind the newest event this
        worker's index partitions hold: a unique event behind it is not matched by anything
        later (and was not indexed at all if it was already behind when it came: late)."""
        stores = (self.index_stores.owned_store(part) for part in self.index_stores.owned())
        horizons = [h for store in stores if store is not None and (h := store.index.horizon) is not None]
        return {"in_window": ts >= max(horizons)} if horizons else {}

    async def _chain(self, first_id: str, first: dict[str, Any] | None) -> list[str]:
        """Original after original, up to the root (an event that is not a duplicate)."""
        chain, record = [first_id], first
        while record is not None and record.get("current") and len(chain) < _CHAIN_MAX:
            next_id = str(record["current"]["id"])
            chain.append(next_id)
            record = await self.record(next_id)
        return chain

    async def _found_by(
        self, fingerprint_hex: str, text: str | None, original: dict[str, Any] | None, original_text: str | None
    ) -> list[str] | None:
        if original is None or "fingerprint" not in original:
            return None
        probe, stored = int(fingerprint_hex, 16), int(str(original["fingerprint"]), 16)
        if text is not None and original_text is not None:  # else, or if one fails: the SimHashes alone
            prints = await self.prints([text, original_text])
            if isinstance(prints[0], Routed) and isinstance(prints[1], Routed):
                return match.found_by(self.settings.block_plan, prints[0].fingerprint, prints[1].fingerprint)
        return match.found_by(self.settings.block_plan, _bare(probe), _bare(stored))

    async def text(self, order: int) -> str | None:
        """An event's text, read back from ``{p}.events`` while Kafka retains it."""
        part, offset = order_source(order)
        return event_text(await self.reader.record(self.names.events, part, offset))

    # -------------------------------------------------------------------- check
    def local_check(self, shares: list[dict[str, Any]]) -> dict[str, Any]:
        """The earliest match and the candidates in this worker's index partitions of ``shares``
        (each a :meth:`Share.to_dict`, whose slots are all of one partition)."""
        earliest: list[dict[str, Any]] = []
        candidates: list[dict[str, Any]] = []
        for share in map(_readable, shares):
            part = slot_partition(share.slots[0], self.settings.partitions)
            found, shown = self.index.check(self._owned(self.index_stores, self.handoff.index, part), share)
            earliest.extend([] if found is None else [found.to_dict()])
            candidates.extend(shown)
        return {"earliest": earliest, "candidates": candidates}

    async def check(self, text: str, ts: Any = None, event_id: str | None = None) -> dict[str, Any]:
        """The verdict ``text`` would get now (as an event of time ``ts``, default now), with its
        candidates; nothing is stored or sent. Raises ``InvalidEvent`` as the fingerprint stage would.

        With ``event_id``, as that event: the event itself is no candidate (a text checked after
        the stream decided it is not a copy of itself), and an id already published gets its
        first verdict, as the stream republishes it for a re-sent id."""
        as_id = f"check-{uuid.uuid4().hex}" if event_id is None else event_id
        raw = codec.dumps({"id": as_id, "text": text} | ({} if ts is None else {"ts": ts}))
        intro, shares = await self.fingerprint.fan_out(raw, MAX_PARTITION, MAX_OFFSET, time.time(), self.prints)
        by_owner: dict[str | None, list[dict[str, Any]]] = defaultdict(list)
        for part, share in shares.items():
            owner = None if part in self.handoff.index else await self._owner(self.names.probes, part)
            by_owner[owner].append(share.to_dict())
        earliest: list[Ref] = []
        candidates: dict[tuple[str, int], dict[str, Any]] = {}  # each event once (a re-sent id: two)
        for owner, mine in by_owner.items():
            if owner is None:
                answer = self.local_check(mine)
            else:
                answer = await self.peers.call(owner, "/check?local=1", {"probes": mine})
            earliest.extend(Ref.from_dict(ref) for ref in answer["earliest"])
            candidates.update(((c["id"], int(c["order"])), c) for c in answer["candidates"])
        ranked = sorted(candidates.values(), key=lambda c: match.precedence(int(c["order"]), int(c["distance"])))
        verdict = _verdict(match.first(earliest))
        fingerprint = intro.fingerprint
        published = None if event_id is None else await self.record(event_id)
        if published is not None and published["state"] == "published":  # what the stream sends again
            first = published["value"]
            verdict = {k: first[k] for k in ("verdict", "duplicate_of", "distance", "similarity") if k in first}
            verdict["already_published"] = True
            # As the stream tells a re-sent id's text apart: by its fingerprint (this text is not decided).
            verdict["another_text"] = intro.fingerprint != first.get("fingerprint", intro.fingerprint)
            fingerprint = first.get("fingerprint", fingerprint)
        return verdict | {"fingerprint": fingerprint, "candidates": ranked, "index_partitions": len(shares)}

    # ------------------------------------------------------------------ owners
    def _owned(self, stores: StoreSet[Any], assigned: set[int], part: int) -> Any:
        store = stores.owned_store(part)
        if part not in assigned:
            raise PeerError(503, f"partition {part} moved to another worker; ask again")
        if store is None:
            raise PeerError(503, f"partition {part} is restoring; ask again in a moment")
        return store

    async def _owner(self, topic: str, part: int) -> str:
        url = await self.peers.owner(topic, part)
        if url is None or url == self.peers.own_url:
            raise PeerError(503, f"{topic}[{part}] has no owner yet (the group is rebalancing); ask again")
        return url


def _verdict(best: Ref | None) -> dict[str, Any]:
    if best is None:
        return {"verdict": "unique"}
    return {
        "verdict": "duplicate",
        "duplicate_of": best.id,
        "distance": best.distance,
        "similarity": round(best.similarity, 3),
    }


def _bare(simhash: int) -> Fingerprint:
    """A stored fingerprint known only by its SimHash (its text no longer retained)."""
    return Fingerprint(simhash, b"", None, 0)


def _quote(event_id: str) -> str:
    from urllib.parse import quote

    return quote(event_id, safe="")


def _readable(raw: dict[str, Any]) -> Share:
    """A peer's probe, read as the index stage will read it: a sketch or fingerprint it cannot
    read is the request's fault (ValueError, answered 400), not a failure of the check."""
    share = Share.from_dict(raw)
    try:
        share.fingerprint.to_bytes(8, "big")
        if len(share.sketch) < SKETCH_BYTES:  # every sketch holds the word part whole
            raise IndexError(f"{len(share.sketch)} bytes")
        compare(share.sketch, share.sketch)
    except Exception as exc:
        raise ValueError(f"probe {share.id!r} has an unreadable fingerprint or sketch ({type(exc).__name__})") from None
    return share
