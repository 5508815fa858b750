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
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple

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
    def settings(self) -> str:
        return f"{self.prefix}.settings"

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


def append_ms(timestamp_s: float) -> int:
    """A record's append time (Kafka's seconds) in the milliseconds :func:`total_order` takes."""
    return int(round(timestamp_s * 1000))


def order_time(order: int) -> int:
    """The append timestamp (ms) a :func:`total_order` was made from: when the input arrived."""
    return order >> ORDER_TS_SHIFT


def order_source(order: int) -> tuple[int, int]:
    """The input partition and offset a total order was made from (see :func:`total_order`)."""
    return (order >> ORDER_PARTITION_SHIFT) & MAX_PARTITION, order & MAX_OFFSET


def answer_partition(event_id: str, partitions: int) -> int:
    """Partition of ``{p}.answers`` (and of the id's verdict state) for an event id."""
    return mmh3.hash(event_id.encode("utf-8"), _ANSWER_SEED, signed=False) % partitions


# Kinds of a share's slot.
TABLE = 0  # a block table's key
EXACT = 1  # an exact key the event is stored under
LOOKUP = 2  # an exact key the event looks up only
MARK = 3  # an exact key the event is stored under only: what a shorter text looks up

Slot = tuple[int, int, int]
"""``(slot, key, kind)``: the answer slot (a block table ``0..T-1``, or ``T + i`` for the i-th
key of the exact keyspace), the bucket's key, and its kind (:data:`TABLE`, :data:`EXACT`,
:data:`LOOKUP`, :data:`MARK`)."""


def slot_partitions(slots: Iterable[Slot], partitions: int) -> list[int]:
    """The partition of ``{p}.probes`` (and of the bucket) of each slot: murmur3 of its bucket's
    name, ``{table}:{key:x}`` for a block table's key and ``x:{key:x}`` for the exact keyspace.
    One call for an event's slots: the fan-out routes fifteen an event, and three calls a slot
    cost as much as the hashing."""
    murmur = mmh3.hash
    return [
        murmur(f"x:{key:x}" if kind != TABLE else f"{table}:{key:x}", _PROBE_SEED, signed=False) % partitions
        for table, key, kind in slots
    ]


def slot_partition(slot: Slot, partitions: int) -> int:
    """The index partition of one slot's bucket (:func:`slot_partitions`)."""
    return slot_partitions((slot,), partitions)[0]


class SlotKinds(NamedTuple):
    """A share's slots by what its index partition does with them (:meth:`Share.kinds`)."""

    tables: list[int]  # :attr:`Share.tables`
    stored: list[int]  # :attr:`Share.exact_keys`
    looked_up: list[int]  # :attr:`Share.looked_up`
    read: list[int]  # :attr:`Share.exact_read`
    answered: list[int]  # :attr:`Share.answered`


class Share(NamedTuple):
    """One event's probes bound for one index partition: the event once, a slot per bucket.

    The exact keyspace is one keyspace, as in batch mode (a short text's exact hash, or a
    longer text's anchors), its keys answered separately. A :data:`LOOKUP` key is one the
    event looks up but is not stored under (a short text's inner edges), a :data:`MARK` key
    one it is stored under but does not look up (a long post's narrow lead, for its cuts). One object per
    event and partition, not per bucket: an event has up to twenty buckets, and the index
    stage handles its share of a partition as one (one query, one write, one answer).
    A named tuple, not a frozen dataclass: as immutable, and made in a third of the
    instructions (the fan-out makes four an event).
    """

    id: str
    order: int
    ts: int
    fingerprint: int
    sketch: bytes
    slots: tuple[Slot, ...]

    @property
    def tables(self) -> list[int]:
        """The block tables probed here."""
        return self.kinds().tables

    @property
    def exact_keys(self) -> list[int]:
        """The exact keys the event is stored under here, looked up or not."""
        return self.kinds().stored

    @property
    def looked_up(self) -> list[int]:
        """Every exact key the event looks up here, stored under or not."""
        return self.kinds().looked_up

    @property
    def exact_read(self) -> list[int]:
        """Every exact key the event reads here: to look it up, or to append its record."""
        return self.kinds().read

    @property
    def answered(self) -> list[int]:
        """The answer slots this share fills."""
        return self.kinds().answered

    def kinds(self) -> SlotKinds:
        """The share's slots by kind, in one pass (the one place that says which kinds are
        stored, looked up and read): the index stage asks for all of them, once for each
        share, and a worker makes about four shares an event."""
        tables: list[int] = []
        stored: list[int] = []
        looked_up: list[int] = []
        read: list[int] = []
        answered: list[int] = []
        for slot, key, kind in self.slots:
            answered.append(slot)
            if kind == TABLE:
                tables.append(slot)
                continue
            read.append(key)
            if kind != LOOKUP:
                stored.append(key)
            if kind != MARK:
                looked_up.append(key)
        return SlotKinds(tables, stored, looked_up, read, answered)

    def joined(self, other: Share) -> Share:
        """This share with ``other``'s slots too (the same event's, from another message)."""
        return Share(self.id, self.order, self.ts, self.fingerprint, self.sketch, self.slots + other.slots)

    def to_dict(self) -> dict[str, Any]:
        """The wire item. A :data:`MARK` slot goes as an :data:`EXACT` one, its slot number in
        ``marks``: a worker of a tree before marks reads it as an exact key, which it also
        looks up (the cost marks save), where an unknown kind would make it refuse the message."""
        item = {
            "id": self.id,
            "order": self.order,
            "ts": self.ts,
            "fp": self.fingerprint,
            "sketch": base64.b64encode(self.sketch).decode("ascii"),
            "slots": [[slot, key, EXACT if kind == MARK else kind] for slot, key, kind in self.slots],
        }
        marks = [slot for slot, _, kind in self.slots if kind == MARK]
        if marks:
            item["marks"] = marks
        return item

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Share:
        """A share from its wire item; an item of one probe (``t``, ``key``, ``exact``,
        ``lookup``), as workers before shares sent, becomes a share of one slot."""
        if "slots" in data:
            marks = {int(s) for s in data.get("marks", ())}
            slots = tuple((int(s), int(k), MARK if int(s) in marks else _kind(kind)) for s, k, kind in data["slots"])
        else:
            kind = (LOOKUP if data.get("lookup") else EXACT) if data["exact"] else TABLE
            slots = ((int(data["t"]), int(data["key"]), kind),)
        if not slots:
            raise ValueError("a share has at least one slot")
        fields = (str(data["id"]), int(data["order"]), int(data["ts"]), int(data["fp"]))
        return cls(*fields, base64.b64decode(data["sketch"]), slots)


def _kind(value: Any) -> int:
    kind = int(value)
    if kind not in (TABLE, EXACT, LOOKUP, MARK):
        raise ValueError(f"unknown slot kind {value!r}")
    return kind


def encode_probes(shares: list[Share], intros: dict[tuple[str, int], dict[str, Any]] | None = None) -> list[bytes]:
    """Shares as one or more messages (see :func:`topology.codec.encode_chunks`), one item a
    share (:meth:`Share.to_dict`): its sketch is encoded, sent and decoded once per message
    instead of once per bucket. ``intros`` (by ``(id, order)``) ride along in their event's
    item as ``intro``: the index stage forwards each with its answers, so the fingerprint
    stage sends no message of its own to the verdict stage.
    """
    items: dict[tuple[str, int], dict[str, Any]] = {}
    for share in shares:
        item = items.get((share.id, share.order))
        if item is None:
            items[(share.id, share.order)] = share.to_dict()
        else:
            item["slots"].extend(list(slot) for slot in share.slots)
    for key, intro in (intros or {}).items():
        items[key]["intro"] = intro
    return codec.encode_chunks(list(items.values()))


def decode_probes(raw: bytes) -> tuple[list[Share], list[dict[str, Any]]]:
    """Shares of a message in the order they were encoded, and the intros riding along."""
    shares: list[Share] = []
    intros: list[dict[str, Any]] = []
    for item in codec.decode_batch(raw):
        intro = item.get("intro")
        if intro is not None:
            intros.append(intro)
        shares.append(Share.from_dict(item))
    return shares, intros


def answer_item(event_id: str, order: int, tables: list[int], earlier: list[dict[str, Any]]) -> dict[str, Any]:
    """The index stage's reply to an event's probes of one batch: the earliest earlier match in ``tables``."""
    return {"kind": "answer", "id": event_id, "order": order, "tables": tables, "earlier": earlier}


def note_item(later_id: str, later_order: int, match: dict[str, Any]) -> dict[str, Any]:
    """Tells an already-indexed later event that an earlier one (``match``) resembles it."""
    return {"kind": "earlier", "id": later_id, "order": later_order, "match": match}
