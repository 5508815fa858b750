"""Stage 1, fingerprint: a raw event becomes a probe per bucket, routed to the buckets' partitions.

The first step of one event's path (docs/architecture.md): :meth:`FingerprintStage.parse`
validates each record of a batch (:func:`topology.validate.parse_event`) and places it in the
total order (append time, partition, offset); its text's fingerprint
(:func:`worker.engine.fingerprint.fingerprint`) is computed in the worker's helper process
(:mod:`worker.stream.helper`), which also routes it (:mod:`worker.stream.routes`: a slot per
table of the block plan and per exact key, by index partition);
:meth:`FingerprintStage.fan_out_all` gathers the event's slots of each index partition into
one :class:`~topology.stages.Share`. The event's *intro* (what the verdict stage needs to
decide it) rides along with its first share.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from topology.records import Event
from topology.stages import Share, append_ms, total_order
from topology.validate import InvalidEvent, parse_event
from topology.verdicts import Intro
from worker.engine.fingerprint import Fingerprint
from worker.engine.simhash import to_hex
from worker.settings import Settings
from worker.stream import deadletter
from worker.stream.batches import Message
from worker.stream.guard import source
from worker.stream.routes import Routed, route, routed_each

# Texts in, each one's fingerprint and routes or why it has none out: the helper's, or routed_each.
Fingerprints = Callable[[list[str]], Awaitable[list[Routed | str]]]

log = logging.getLogger("neardup.worker")

# One probes message: its shares and the intros riding along (see topology.stages.encode_probes).
ProbeMessage = tuple[list[Share], list[dict[str, Any]]]


@dataclass
class Fanout:
    """One input batch fingerprinted: shares and intros per index partition, and dead letters."""

    shares: dict[int, list[Share]] = field(default_factory=lambda: defaultdict(list))
    intros: dict[int, dict[tuple[str, int], dict[str, Any]]] = field(default_factory=lambda: defaultdict(dict))
    dead: list[bytes] = field(default_factory=list)
    accepted: int = 0

    def message(self, partition: int) -> ProbeMessage:
        """The partition's share as one in-process message (nothing to encode or decode)."""
        return self.shares[partition], list(self.intros[partition].values())


@dataclass(frozen=True, slots=True)
class Accepted:
    """One valid record of a batch, placed in the total order, before its fingerprint."""

    source: Message
    event: Event
    order: int
    ts: int


@dataclass
class Parsed:
    """One input batch validated: its accepted records, and dead letters for the others."""

    accepted: list[Accepted] = field(default_factory=list)
    dead: list[bytes] = field(default_factory=list)

    @property
    def texts(self) -> list[str]:
        return [item.event.text for item in self.accepted]


class FingerprintStage:
    """Fingerprints input events; pure (no Kafka, no store), so :meth:`process` is tested as is.

    A batch goes through :meth:`parse`, then its texts' fingerprints (here, or in the
    worker's helper process: :mod:`worker.stream.helper`), then :meth:`fan_out_all`.
    """

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.plan = settings.block_plan
        self.partitions = settings.partitions

    def process(self, messages: Sequence[Message]) -> Fanout:
        """Fan every valid record of a batch out to probes, fingerprinted in this process;
        dead-letter the others with the reason."""
        parsed = self.parse(messages)
        return self.fan_out_all(parsed, routed_each(parsed.texts, self.settings))

    def parse(self, messages: Sequence[Message]) -> Parsed:
        """Validate and place each record; a refused one becomes a dead letter with its reason."""
        out = Parsed()
        for msg in messages:
            try:
                out.accepted.append(Accepted(msg, *self.accept(msg.value, msg.partition, msg.offset, msg.timestamp)))
            except InvalidEvent as exc:
                dead = deadletter.value("fingerprint", exc.reason, source(msg), msg.value, exc.event_id, msg.key)
                out.dead.append(dead)
            except Exception as exc:  # the worker never dies on one record
                log.exception("unexpected error on %s[%d]@%d", msg.topic, msg.partition, msg.offset)
                reason = deadletter.failure(exc)
                out.dead.append(deadletter.value("fingerprint", reason, source(msg), msg.value, key=msg.key))
        return out

    def fan_out_all(self, parsed: Parsed, prints: Sequence[Routed | Fingerprint | str]) -> Fanout:
        """Each accepted record's shares routed to their partitions, its intro with the first;
        a record whose text could not be fingerprinted (``prints`` says why) is dead-lettered."""
        out = Fanout(dead=parsed.dead)
        for item, fp in zip(parsed.accepted, prints, strict=True):
            msg = item.source
            if isinstance(fp, str):
                log.error("unexpected error on %s[%d]@%d: %s", msg.topic, msg.partition, msg.offset, fp)
                reason = deadletter.internal(fp)
                out.dead.append(deadletter.value("fingerprint", reason, source(msg), msg.value, item.event.id, msg.key))
                continue
            intro, shares = self.shares(item.event, item.order, item.ts, fp)
            for part, share in shares.items():
                out.shares[part].append(share)
            out.intros[next(iter(shares))][(intro.id, intro.order)] = intro.to_dict()
            out.accepted += 1
        return out

    async def fan_out(
        self, raw: bytes | None, partition: int, offset: int, timestamp_s: float, prints: Fingerprints
    ) -> tuple[Intro, dict[int, Share]]:
        """One record's intro and its shares by index partition, its text fingerprinted by
        ``prints`` (the worker's helper); raises :class:`InvalidEvent` for a record we refuse,
        and RuntimeError for a text whose fingerprint fails (even by a native panic, which pyo3
        raises as a BaseException that an HTTP handler's guard would let through)."""
        event, order, ts = self.accept(raw, partition, offset, timestamp_s)
        [fp] = await prints([event.text])
        if isinstance(fp, str):
            raise RuntimeError(f"fingerprinting failed: {fp}")
        return self.shares(event, order, ts, fp)

    def accept(self, raw: bytes | None, partition: int, offset: int, timestamp_s: float) -> tuple[Event, int, int]:
        """The record's event, its total order (append time, partition, offset) and its time;
        raises :class:`InvalidEvent` for a record we refuse."""
        if raw is None:
            raise InvalidEvent("record has no value (null)")
        event = parse_event(raw, self.settings)
        appended = append_ms(timestamp_s)
        order = total_order(appended, partition, offset)
        return event, order, event.ts if event.ts is not None else appended

    def shares(self, event: Event, order: int, ts: int, fp: Routed | Fingerprint) -> tuple[Intro, dict[int, Share]]:
        """The event's shares by index partition, the first holding its first slot, from its
        routes (made here when ``fp`` comes without them: :func:`worker.stream.routes.route`)."""
        routed = fp if isinstance(fp, Routed) else route(fp, self.plan, self.partitions)
        simhash, sketch = routed.fingerprint.simhash, routed.fingerprint.sketch
        shares = {part: Share(event.id, order, ts, simhash, sketch, mine) for part, mine in routed.routes}
        intro = Intro(event.id, order, ts, to_hex(simhash), routed.slots, event.to_dict())
        return intro, shares
