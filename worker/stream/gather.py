"""The verdict stage's bookkeeping for one event id, as pure functions over plain records.

An event's verdict needs two kinds of message that race through different partitions:
its *intro* (sent by the fingerprint stage: order, fingerprint, how many table answers to
expect) and *answers* for its probed tables (sent by the index stage, one per index batch:
the earliest earlier event that matched in those tables). Either may come first. Once the intro and every expected answer
are in, the earliest match in the total order — the closest breaking ties, the same rule
as in :mod:`worker.engine.match` — is the original, or the event is unique.

Index partitions run independently, so an earlier event can reach a shared bucket *after*
a later one. The index then sends the later event an ``earlier`` *note*. A note that arrives
while the verdict is still gathering simply joins the matches; one that arrives while the
decided verdict is held back by ``allowed_lateness_ms`` revises it before it goes out; one
that arrives after publication and names an earlier original becomes a correction. Pointers
only ever go to strictly smaller orders, so corrections cannot form cycles.

Nothing here touches Kafka or Faust: :class:`worker.stream.verdict_batch.VerdictBatch` loads a record, calls these, stores it back.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from topology.records import Verdict
from topology.verdicts import Intro, Pending, Published, Ref
from worker.engine import match


def add_intro(state: Pending | None, intro: Intro) -> Pending:
    """Record an intro; a second intro of the same id is a re-sent copy (earliest order wins)."""
    state = state or Pending()
    if state.intro is None:
        return state._replace(intro=intro)
    if intro.order == state.intro.order or intro.order in state.copy_orders:
        return state  # the same intro replayed (at-least-once delivery)
    first, copy = (intro, state.intro) if intro.order < state.intro.order else (state.intro, intro)
    return state._replace(intro=first, copies=state.copies + 1, copy_orders=(*state.copy_orders, copy.order))


def add_answer(state: Pending | None, order: int, tables: Iterable[int], earlier: Iterable[Ref]) -> Pending:
    """Record the answer of one or more tables for the copy probing at ``order``.

    An index partition answers all of an event's tables it holds in one reply, with the
    earliest match among them; each of those tables is then answered with it. A replayed
    answer replaces itself.
    """
    state = state or Pending()
    refs = tuple(earlier)
    answered = dict(state.answers.get(order, {}))
    for table in tables:
        answered[table] = refs
    answers = dict(state.answers)
    answers[order] = answered
    return state._replace(answers=answers)


def add_note(state: Pending | None, ref: Ref) -> Pending:
    """Record an earlier event found after this one was indexed."""
    state = state or Pending()
    if ref in state.notes:
        return state
    return state._replace(notes=state.notes + (ref,))


def is_complete(state: Pending) -> bool:
    """The intro and an answer from every expected table of its copy are in."""
    if state.intro is None:
        return False
    return len(state.answers.get(state.intro.order, {})) >= state.intro.expected


def matches(state: Pending) -> list[Ref]:
    """Every earlier match of the deciding copy: its table answers plus notes."""
    if state.intro is None:
        return []
    own = state.intro.order
    refs = [r for refs in state.answers.get(own, {}).values() for r in refs]
    refs.extend(state.notes)
    return [r for r in refs if r.order < own]


def decide(state: Pending) -> Published:
    """The verdict of a complete state: unique, or a duplicate of its earliest match."""
    intro = state.intro
    if intro is None:
        raise ValueError("cannot decide an event whose intro has not arrived")
    best = match.first(matches(state))
    if best is None:
        verdict = Verdict(intro.id, "unique", None, None, intro.fingerprint, intro.ts)
        value = dict(intro.event)
        value.update(verdict.to_dict())
        return Published("unique", value, intro.order, intro.fingerprint, intro.ts, None, copies=state.copy_orders)
    return _duplicate(intro.id, intro.order, intro.fingerprint, intro.ts, best, state.copy_orders)


def _duplicate(
    event_id: str, order: int, fingerprint: str, ts: int, best: Ref, copies: tuple[int, ...] = ()
) -> Published:
    verdict = Verdict(event_id, "duplicate", best.id, best.distance, fingerprint, ts, round(best.similarity, 3))
    return Published("duplicates", verdict.to_dict(), order, fingerprint, ts, best, copies=copies)


def _earlier_than_current(published: Published, ref: Ref) -> bool:
    """Whether ``ref``, a match before the event itself, wins over its current match by the one rule."""
    if ref.order >= published.order:
        return False
    current = published.current
    return current is None or match.precedence(ref.order, ref.distance) < match.precedence(
        current.order, current.distance
    )


def revise(published: Published, ref: Ref) -> Published | None:
    """A decided verdict not yet sent, decided again with ``ref``: the earliest match wins, as
    in :func:`decide`; None when ``ref`` changes nothing."""
    if not _earlier_than_current(published, ref):
        return None
    event_id = str(published.value["id"])
    revised = _duplicate(event_id, published.order, published.fingerprint, published.ts, ref)
    return revised._replace(corrections=published.corrections, copies=published.copies)


def correct(published: Published, ref: Ref) -> tuple[Published, dict[str, Any]] | None:
    """A correction when ``ref`` is an earlier original than the one published, else None."""
    if not _earlier_than_current(published, ref):
        return None
    current = published.current
    value = {
        "id": published.value["id"],
        "verdict": "duplicate",  # what a correction always says, in a duplicate record's fields
        "duplicate_of": ref.id,
        "distance": ref.distance,
        "similarity": round(ref.similarity, 3),
        "previous_verdict": "unique" if current is None else "duplicate",
        "previous_duplicate_of": None if current is None else current.id,
        "fingerprint": published.fingerprint,
        "ts": published.ts,
    }
    return published._replace(current=ref, corrections=published.corrections + 1), value
