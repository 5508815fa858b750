"""How the three stages connect, and the wire form of the messages between them.

::

    {p}.events --fingerprint--> {p}.probes  --index--> {p}.answers --verdict--> {p}.unique
         |                          (batch per           (batch per               {p}.duplicates
         |                           partition)           partition)              {p}.corrections
         +--> {p}.deadletter        intros ride with probes; the index forwards them

Internal messages are JSON objects, UTF-8, one *batch* per destination partition: a
10-table plan would otherwise cost ten Kafka messages per event for probes alone. Because a
batch mixes many keys, the sender chooses the partition itself with the functions below —
every sender uses the same ones, so a bucket, or an event id, always lives in one partition
of one stage, which is what the stages' partition-local stores need.

Orders are 128-bit integers written as JSON numbers (:mod:`topology.codec` keeps them exact).
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

import mmh3

from topology import codec

# Fixed seeds: changing one re-routes every key, i.e. orphans every stored bucket.
_PROBE_SEED = 0x9E0B
_ANSWER_SEED = 0xA115

ORDER_TS_SHIFT = 64
ORDER_PARTITION_SHIFT = 44
MAX_OFFSET = (1 << ORDER_PARTITION_SHIFT) - 1
MAX_PARTITION = (1 << (ORDER_TS_SHIFT - ORDER_PARTITION_SHIFT)) - 1


@dataclass(frozen=True, slots=True)
class Topics:
    """Names of every topic of one deployment, derived from its prefix."""

    prefix: str

    @property
    def events(self) -> str:
        return f"{self.prefix}.events"

    @property
    def unique(self) -> str:
        return f"{self.prefix}.unique"

    @property
    def duplicates(self) -> str:
        return f"{self.prefix}.duplicates"

    @property
    def deadletter(self) -> str:
        return f"{self.prefix}.deadletter"

    @property
    def corrections(self) -> str:
        return f"{self.prefix}.corrections"

    @property
    def probes(self) -> str:
        return f"{self.prefix}.probes"

    @property
    def answers(self) -> str:
        return f"{self.prefix}.answers"

    @property
    def index_changelog(self) -> str:
        return f"{self.prefix}.index-changelog"

    @property
    def verdict_changelog(self) -> str:
        return f"{self.prefix}.verdict-changelog"

    def outputs(self) -> tuple[str, ...]:
        """What ``neardup tail`` follows."""
        return (self.unique, self.duplicates, self.corrections, self.deadletter)


def total_order(append_ts_ms: int, partition: int, offset: int) -> int:
    """``(append_ts_ms << 64) | (partition << 44) | offset``: broker time first, then position.

    With LogAppendTime on the input topic this orders events by when the broker accepted
    them, across partitions; within a partition it is the offset order.
    """
    if not 0 <= partition <= MAX_PARTITION:
        raise ValueError(f"partition {partition} does not fit in {ORDER_TS_SHIFT - ORDER_PARTITION_SHIFT} bits")
    if not 0 <= offset <= MAX_OFFSET:
        raise ValueError(f"offset {offset} does not fit in {ORDER_PARTITION_SHIFT} bits")
    if append_ts_ms < 0:
        raise ValueError(f"append timestamp {append_ts_ms} is negative")
    return (append_ts_ms << ORDER_TS_SHIFT) | (partition << ORDER_PARTITION_SHIFT) | offset


def order_time(order: int) -> int:
    """The append timestamp (ms) a :func:`total_order` was made from: when the input arrived."""
    return order >> ORDER_TS_SHIFT


def order_source(order: int) -> tuple[int, int]:
    """The input partition and offset a total order was made from (see :func:`total_order`)."""
    return (order >> ORDER_PARTITION_SHIFT) & MAX_PARTITION, order & MAX_OFFSET


def bucket_key(table: int | None, key: int) -> str:
    """Name of one bucket (it picks the probe partition); ``table=None`` is the exact keyspace."""
    return f"x:{key:x}" if table is None else f"{table}:{key:x}"


def probe_partition(bucket: str, partitions: int) -> int:
    """Partition of ``{p}.probes`` (and of the bucket) for a bucket key: murmur3 of the key."""
    return mmh3.hash(bucket, _PROBE_SEED, signed=False) % partitions


def answer_partition(event_id: str, partitions: int) -> int:
    """Partition of ``{p}.answers`` (and of the id's verdict state) for an event id."""
    return mmh3.hash(event_id.encode("utf-8"), _ANSWER_SEED, signed=False) % partitions


@dataclass(frozen=True, slots=True)
class Probe:
    """One event looking into one bucket.

    ``table`` is the answer slot: a block table ``0..T-1``, or ``T + i`` for the i-th key of
    the exact keyspace (a short text's exact hash, or a longer text's anchors), which all
    share one keyspace — as in batch mode — but are answered separately. ``lookup``: an exact
    key the event looks up but is not stored under (a short text's inner edges).
    """

    table: int
    key: int
    id: str
    order: int
    ts: int
    fingerprint: int
    sketch: bytes
    exact: bool
    lookup: bool = False

    @property
    def bucket(self) -> str:
        return bucket_key(None if self.exact else self.table, self.key)

    def to_dict(self) -> dict[str, Any]:
        return {
            "t": self.table,
            "key": self.key,
            "id": self.id,
            "order": self.order,
            "ts": self.ts,
            "fp": self.fingerprint,
            "sketch": base64.b64encode(self.sketch).decode("ascii"),
            "exact": self.exact,
            "lookup": self.lookup,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Probe:
        return cls(
            table=int(data["t"]),
            key=int(data["key"]),
            id=str(data["id"]),
            order=int(data["order"]),
            ts=int(data["ts"]),
            fingerprint=int(data["fp"]),
            sketch=base64.b64decode(data["sketch"]),
            exact=bool(data["exact"]),
            lookup=bool(data.get("lookup", False)),
        )


def encode_probes(probes: list[Probe], intros: dict[tuple[str, int], dict[str, Any]] | None = None) -> list[bytes]:
    """Probes as one or more messages (see :func:`topology.codec.encode_chunks`).

    An event's probes bound for one partition share one item ``{id, order, ts, fp, sketch,
    slots: [[table, key, exact], ...]}`` (``exact`` 2: a key looked up only): its sketch is
    encoded, sent and decoded once per message instead of once per table. ``intros`` (by
    ``(id, order)``) ride along in their event's item as ``intro``: the index stage forwards
    each with its answers, so the fingerprint stage sends no message of its own to the verdict
    stage.
    """
    grouped: dict[tuple[str, int], dict[str, Any]] = {}
    for probe in probes:
        item = grouped.get((probe.id, probe.order))
        if item is None:
            item = grouped[(probe.id, probe.order)] = {
                "id": probe.id,
                "order": probe.order,
                "ts": probe.ts,
                "fp": probe.fingerprint,
                "sketch": base64.b64encode(probe.sketch).decode("ascii"),
                "slots": [],
            }
        item["slots"].append([probe.table, probe.key, 2 if probe.lookup else 1 if probe.exact else 0])
    for key, intro in (intros or {}).items():
        grouped[key]["intro"] = intro
    return codec.encode_chunks(list(grouped.values()))


def decode_probes(raw: bytes) -> tuple[list[Probe], list[dict[str, Any]]]:
    """Probes of a message in the order they were encoded, and the intros riding along."""
    probes: list[Probe] = []
    intros: list[dict[str, Any]] = []
    for item in codec.decode_batch(raw):
        intro = item.get("intro")
        if intro is not None:
            intros.append(intro)
        slots = item.get("slots")
        if slots is None:
            probes.append(Probe.from_dict(item))
            continue
        event_id, order, ts, fp = str(item["id"]), int(item["order"]), int(item["ts"]), int(item["fp"])
        sketch = base64.b64decode(item["sketch"])
        for table, key, exact in slots:
            probes.append(Probe(int(table), int(key), event_id, order, ts, fp, sketch, bool(exact), exact == 2))
    return probes, intros


def answer_item(event_id: str, order: int, tables: list[int], earlier: list[dict[str, Any]]) -> dict[str, Any]:
    """The index stage's reply to an event's probes of one batch: the earliest earlier match in ``tables``."""
    return {"kind": "answer", "id": event_id, "order": order, "tables": tables, "earlier": earlier}


def note_item(later_id: str, later_order: int, match: dict[str, Any]) -> dict[str, Any]:
    """Tells an already-indexed later event that an earlier one (``match``) resembles it."""
    return {"kind": "earlier", "id": later_id, "order": later_order, "match": match}
