"""Stage 1, fingerprint: a raw event becomes one probe per block table, routed to its bucket's partition.

The first step of one event's path (docs/architecture.md): :meth:`FingerprintStage.fan_out`
validates the record (:func:`topology.validate.parse_event`), places it in the total order
(append time, partition, offset), fingerprints its text (:func:`worker.engine.fingerprint.fingerprint`)
and makes a :class:`~topology.stages.Probe` per table of the block plan (and per exact key).
Each probe goes to the index partition of its bucket; the event's *intro* (what the verdict
stage needs to decide it) rides along with its first probe.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from topology.stages import Probe, probe_partition, total_order
from topology.validate import InvalidEvent, parse_event
from topology.verdicts import Intro
from worker.engine.fingerprint import fingerprint
from worker.engine.simhash import to_hex
from worker.settings import Settings
from worker.stream import deadletter
from worker.stream.batches import Message
from worker.stream.guard import source

log = logging.getLogger("neardup.worker")

# One probes message: its probes and the intros riding along (see topology.stages.encode_probes).
ProbeMessage = tuple[list[Probe], list[dict[str, Any]]]


@dataclass
class Fanout:
    """One input batch fingerprinted: probes and intros per index partition, and dead letters."""

    probes: dict[int, list[Probe]] = field(default_factory=lambda: defaultdict(list))
    intros: dict[int, dict[tuple[str, int], dict[str, Any]]] = field(default_factory=lambda: defaultdict(dict))
    dead: list[bytes] = field(default_factory=list)
    accepted: int = 0

    def message(self, partition: int) -> ProbeMessage:
        """The partition's share as one in-process message (nothing to encode or decode)."""
        return self.probes[partition], list(self.intros[partition].values())


class FingerprintStage:
    """Fingerprints input events; pure (no Kafka, no store), so :meth:`process` is tested as is."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.plan = settings.block_plan
        self.partitions = settings.partitions

    def process(self, messages: Sequence[Message]) -> Fanout:
        """Fan every valid record of a batch out to probes; dead-letter the others with the reason."""
        out = Fanout()
        for msg in messages:
            try:
                intro, probes = self.fan_out(msg.value, msg.partition, msg.offset, msg.timestamp)
            except InvalidEvent as exc:
                out.dead.append(deadletter.value("fingerprint", exc.reason, source(msg), msg.value))
                continue
            except Exception as exc:  # the worker never dies on one record
                log.exception("unexpected error on %s[%d]@%d", msg.topic, msg.partition, msg.offset)
                out.dead.append(deadletter.value("fingerprint", deadletter.failure(exc), source(msg), msg.value))
                continue
            for probe in probes:
                out.probes[probe_partition(probe.bucket, self.partitions)].append(probe)
            first = probe_partition(probes[0].bucket, self.partitions)
            out.intros[first][(intro.id, intro.order)] = intro.to_dict()
            out.accepted += 1
        return out

    def fan_out(self, raw: bytes | None, partition: int, offset: int, timestamp_s: float) -> tuple[Intro, list[Probe]]:
        """One record's intro and probes; raises :class:`InvalidEvent` for a record we refuse."""
        if raw is None:
            raise InvalidEvent("record has no value (null)")
        event = parse_event(raw, self.settings)
        append_ms = int(round(timestamp_s * 1000))
        order = total_order(append_ms, partition, offset)
        ts = event.ts if event.ts is not None else append_ms
        fp = fingerprint(event.text, self.settings)
        probes: list[Probe] = []
        if fp.in_tables:
            for t, key in enumerate(self.plan.keys(fp.simhash)):
                probes.append(Probe(t, key, event.id, order, ts, fp.simhash, fp.sketch, False))
        exact_table = len(self.plan.tables)
        for i, key in enumerate(fp.exact_keys):
            probes.append(Probe(exact_table + i, key, event.id, order, ts, fp.simhash, fp.sketch, True))
        intro = Intro(event.id, order, ts, to_hex(fp.simhash), len(probes), event.to_dict())
        return intro, probes
