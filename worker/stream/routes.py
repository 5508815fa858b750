"""Where an event's slots go: one per block table and exact key, routed to index partitions.

Routing needs only the fingerprint and the settings, no state, so the worker's helper process
(:mod:`worker.stream.helper`) routes each text right after fingerprinting it, and the worker's
own process, the one that bounds a worker's events a second, only wraps the routes it gets
back into :class:`~topology.stages.Share` objects (what that saves: docs/benchmarks.md,
"Routes made in the helper").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from topology.stages import EXACT, LOOKUP, MARK, TABLE, Slot, slot_partitions
from worker.engine.blocks import Plan
from worker.engine.fingerprint import Fingerprint, fingerprint_each
from worker.settings import Settings

Routes = tuple[tuple[int, tuple[Slot, ...]], ...]
"""``(index partition, the event's slots there)`` pairs, the first holding the event's first slot."""


class Routed(NamedTuple):
    """A text's fingerprint and its slots by index partition, as the helper sends them back."""

    fingerprint: Fingerprint
    routes: Routes
    slots: int  # how many in all: the verdict stage waits for an answer to each


def route(fp: Fingerprint, plan: Plan, partitions: int) -> Routed:
    """``fp``'s slots: a slot per table of the plan when the text is in the tables, one per
    exact key it looks up, and one per key it is only stored under; grouped by partition."""
    slots: list[Slot] = []
    if fp.in_tables:
        slots.extend((t, key, TABLE) for t, key in enumerate(plan.keys(fp.simhash)))
    exact_table, stored, probed = len(plan.tables), len(fp.exact_keys), len(fp.probe_keys)
    slots.extend((exact_table + i, key, LOOKUP if i >= stored else EXACT) for i, key in enumerate(fp.probe_keys))
    slots.extend((exact_table + probed + i, key, MARK) for i, key in enumerate(fp.marks))
    by_part: dict[int, list[Slot]] = {}
    for slot, part in zip(slots, slot_partitions(slots, partitions), strict=True):
        by_part.setdefault(part, []).append(slot)
    return Routed(fp, tuple((part, tuple(mine)) for part, mine in by_part.items()), len(slots))


def routed_each(texts: Sequence[str], settings: Settings) -> list[Routed | str]:
    """Each text fingerprinted and routed, or why it could not be
    (:func:`~worker.engine.fingerprint.fingerprint_each`)."""
    plan, partitions = settings.block_plan, settings.partitions
    return [fp if isinstance(fp, str) else route(fp, plan, partitions) for fp in fingerprint_each(texts, settings)]
