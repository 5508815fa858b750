"""How ``neardup tail`` orders what it shows: an original before its duplicates."""

from __future__ import annotations

from worker.cli.tail import OriginalsFirst, Record, pretty


def unique(event_id: str) -> Record:
    return Record("p.unique", 0, 0, event_id, {"id": event_id, "verdict": "unique", "text": f"story {event_id}"})


def duplicate(event_id: str, of: str) -> Record:
    value = {"id": event_id, "verdict": "duplicate", "duplicate_of": of, "distance": 3, "similarity": 0.9}
    return Record("p.duplicates", 0, 0, event_id, value)


def keys(records: list[Record]) -> list[str | None]:
    return [r.key for r in records]


def test_a_duplicate_read_before_its_original_is_shown_after_it() -> None:
    order = OriginalsFirst()
    assert order.add(duplicate("b", "a"), 0.0) == []
    assert order.add(duplicate("c", "a"), 0.1) == []
    assert keys(order.add(unique("x"), 0.2)) == ["x"]
    assert keys(order.add(unique("a"), 0.3)) == ["a", "b", "c"]
    assert keys(order.add(duplicate("d", "a"), 0.4)) == ["d"]  # its original is out: at once


def test_a_chain_is_released_in_order() -> None:
    order = OriginalsFirst()
    order.add(duplicate("c", "b"), 0.0)
    order.add(duplicate("b", "a"), 0.0)
    assert keys(order.add(unique("a"), 0.1)) == ["a", "b", "c"]


def test_a_duplicate_whose_original_never_comes_is_shown_after_the_wait() -> None:
    order = OriginalsFirst(wait_s=2.0)
    assert order.add(duplicate("b", "gone"), 0.0) == []
    assert keys(order.add(unique("x"), 1.0)) == ["x"]
    assert keys(order.add(unique("y"), 2.5)) == ["y", "b"]
    order.add(duplicate("c", "gone-too"), 3.0)
    assert keys(order.due(3.1, everything=True)) == ["c"]


def test_the_line_says_what_the_distance_counts() -> None:
    assert "distance 3/64 bits  similarity 0.9" in pretty(duplicate("b", "a"), "p")
