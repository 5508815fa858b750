"""What every part of the dev set after the first must keep: the events before it as they were."""

from __future__ import annotations

from typing import Any

from bench import devset

FIRST_SIZE, SEED = 400, 7
Built = tuple[list[dict[str, Any]], list[dict[str, Any]]]


def first_part() -> Built:
    """The first part every part's test builds on."""
    return devset.build(FIRST_SIZE, SEED)


def assert_comes_last(built: Built, again: Built, ids_from: str) -> None:
    """``built``, the first part followed by one more, keeps the first part's events and truth
    as they were, names its own events ``ids_from…``, each id once, in time order; ``again``,
    the same part built anew, is the same."""
    first, first_truth = first_part()
    events, truth = built
    assert events[:FIRST_SIZE] == first and truth[:FIRST_SIZE] == first_truth
    assert [e["id"] for e in events] == [t["id"] for t in truth]
    assert all(e["id"].startswith(ids_from) for e in events[FIRST_SIZE:]), "the part's own ids"
    assert len({e["id"] for e in events}) == len(events)
    stamps = [e["ts"] for e in events]
    assert stamps == sorted(stamps)
    assert again == built, "the same seed builds the same part"
