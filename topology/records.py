"""The records that flow: an input event and the verdict published for it.

Plain frozen dataclasses with explicit JSON codecs, so the batch command, the streaming
agents and the tests share one schema and one wire form (JSON objects, UTF-8).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

VerdictKind = Literal["unique", "duplicate"]


@dataclass(frozen=True, slots=True)
class Event:
    """A validated input event; ``extra`` keeps the producer's other fields untouched."""

    id: str
    text: str
    ts: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = dict(self.extra)
        out.update(id=self.id, text=self.text)
        if self.ts is not None:
            out["ts"] = self.ts
        return out


@dataclass(frozen=True, slots=True)
class Verdict:
    """What neardup decided for one event.

    ``duplicate_of`` names the earliest earlier event that matched (closest breaks ties);
    ``distance`` is the Hamming distance between the two fingerprints and ``similarity``
    the estimated resemblance that confirmed the match (both null for a unique event).
    """

    id: str
    verdict: VerdictKind
    duplicate_of: str | None
    distance: int | None
    fingerprint: str
    ts: int
    similarity: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "verdict": self.verdict,
            "duplicate_of": self.duplicate_of,
            "distance": self.distance,
            "similarity": self.similarity,
            "fingerprint": self.fingerprint,
            "ts": self.ts,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Verdict:
        return cls(
            id=data["id"],
            verdict=data["verdict"],
            duplicate_of=data.get("duplicate_of"),
            distance=data.get("distance"),
            fingerprint=data["fingerprint"],
            ts=data["ts"],
            similarity=data.get("similarity"),
        )
