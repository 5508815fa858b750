"""The verdict stage's own records: what flows on ``{p}.answers`` and its store's changelog.

An *intro* (:class:`Intro`) and *refs* to matched events (:class:`Ref`) travel from the
fingerprint and index stages to the verdict stage; a gathering id's :class:`Pending` state
and its first verdict (:class:`Published`) are what the verdict store keeps and logs. Plain
named tuples (immutable, and made in a third of a frozen dataclass's instructions: the
verdict stage makes several an event) with explicit dict codecs; the rules that change them are in
``worker.stream.gather``.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Literal, NamedTuple

# One output record: (output topic role, event id, record value).
Output = tuple[str, str, dict[str, Any]]

OutputTopic = Literal["unique", "duplicates"]


class Ref(NamedTuple):
    """A matched event: its id, place in the total order, Hamming distance and similarity."""

    id: str
    order: int
    distance: int
    similarity: float

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "order": self.order, "distance": self.distance, "similarity": self.similarity}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Ref:
        return cls(str(data["id"]), int(data["order"]), int(data["distance"]), float(data["similarity"]))


class Intro(NamedTuple):
    """What the fingerprint stage knows of an event when it fans out its probes."""

    id: str
    order: int
    ts: int
    fingerprint: str
    expected: int
    event: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "event",
            "id": self.id,
            "order": self.order,
            "ts": self.ts,
            "fingerprint": self.fingerprint,
            "expected": self.expected,
            "event": self.event,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Intro:
        return cls(
            str(data["id"]),
            int(data["order"]),
            int(data["ts"]),
            str(data["fingerprint"]),
            int(data["expected"]),
            dict(data["event"]),
        )


class Pending(NamedTuple):
    """Everything gathered so far for an id that has no verdict yet.

    ``answers`` maps the order of the probing copy to ``{table: earlier refs}``: a re-sent id
    probes again under a new order, and its answers must not complete the first copy.
    ``copies`` counts re-sent intros that will receive the same verdict; ``copy_orders`` are
    their orders, so that a copy read twice (a replay) is not counted twice.
    """

    intro: Intro | None = None
    copies: int = 0
    answers: Mapping[int, Mapping[int, tuple[Ref, ...]]] = MappingProxyType({})  # read-only: shared by default
    notes: tuple[Ref, ...] = ()
    copy_orders: tuple[int, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "intro": None if self.intro is None else self.intro.to_dict(),
            "copies": self.copies,
            "answers": {
                str(order): {str(t): [r.to_dict() for r in refs] for t, refs in tables.items()}
                for order, tables in self.answers.items()
            },
            "notes": [r.to_dict() for r in self.notes],
            "copy_orders": list(self.copy_orders),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Pending:
        intro = data.get("intro")
        return cls(
            intro=None if intro is None else Intro.from_dict(intro),
            copies=int(data.get("copies", 0)),
            answers={
                int(order): {int(t): tuple(Ref.from_dict(r) for r in refs) for t, refs in tables.items()}
                for order, tables in data.get("answers", {}).items()
            },
            notes=tuple(Ref.from_dict(r) for r in data.get("notes", ())),
            copy_orders=tuple(int(o) for o in data.get("copy_orders", ())),
        )


class Published(NamedTuple):
    """An id's first verdict as published, and the original it currently points to.

    ``value`` is republished unchanged for every re-sent copy; ``current`` moves only
    through corrections. ``copies`` are the orders of the re-sent copies published so far:
    an intro read again at one of those orders (or at ``order``) is a replay of an input
    already answered, not a new copy.
    """

    topic: OutputTopic
    value: dict[str, Any]
    order: int
    fingerprint: str
    ts: int
    current: Ref | None
    corrections: int = 0
    copies: tuple[int, ...] = ()

    def answered(self, order: int) -> bool:
        """Whether the input at ``order`` already has this verdict published (or in the outbox)."""
        return order == self.order or order in self.copies

    def output(self, event_id: str) -> Output:
        """The record this verdict publishes for ``event_id``: (topic role, key, value)."""
        return (self.topic, event_id, self.value)

    def to_dict(self) -> dict[str, Any]:
        return {
            "topic": self.topic,
            "value": self.value,
            "order": self.order,
            "fingerprint": self.fingerprint,
            "ts": self.ts,
            "current": None if self.current is None else self.current.to_dict(),
            "corrections": self.corrections,
            "copies": list(self.copies),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Published:
        current = data.get("current")
        return cls(
            topic=data["topic"],
            value=dict(data["value"]),
            order=int(data["order"]),
            fingerprint=str(data["fingerprint"]),
            ts=int(data["ts"]),
            current=None if current is None else Ref.from_dict(current),
            corrections=int(data.get("corrections", 0)),
            copies=tuple(int(o) for o in data.get("copies", ())),
        )
