"""How ``neardup tail`` orders what it shows: an original before its duplicates."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter

from worker.cli.tail import OriginalsFirst, Record, pretty, summary


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


def test_a_text_cannot_send_the_terminal_escape_sequences() -> None:
    """A producer's text reached an operator's terminal as is: ESC [2J cleared the screen."""
    record = Record("p.unique", 0, 0, "e", {"id": "e", "text": "\x00\x01 hello \x1b[2J\u202eevil\nnext line"})
    assert pretty(record, "p") == "unique     e  \\x00\\x01 hello \\x1b[2J\\u202eevil next line"


def test_the_summary_says_one_record_not_one_records() -> None:
    one = Counter({"unique": 1, "duplicates": 1, "corrections": 1, "deadletter": 1})
    assert summary(one) == "4 records: 1 unique, 1 duplicate, 1 correction, 1 dead letter"
    assert summary(Counter({"duplicates": 1})) == "1 record: 0 unique, 1 duplicate, 0 corrections, 0 dead letters"
    assert summary(Counter({"unique": 2, "deadletter": 2})) == (
        "4 records: 2 unique, 0 duplicates, 0 corrections, 2 dead letters"
    )


def test_a_dead_letter_names_its_event_when_its_id_was_valid() -> None:
    where = {"reason": "field 'text' is empty", "topic": "p.events", "partition": 1, "offset": 7}
    assert pretty(Record("p.deadletter", 0, 0, "x", where | {"id": "x"}), "p") == (
        "rejected   x  p.events[1]@7  field 'text' is empty"
    )
    assert pretty(Record("p.deadletter", 0, 0, None, where), "p") == "rejected   p.events[1]@7  field 'text' is empty"


def test_a_correction_says_what_it_replaces() -> None:
    def correction(previous: str, of: str | None) -> Record:
        value = {"id": "e", "verdict": "duplicate", "duplicate_of": "a"}
        return Record("p.corrections", 0, 0, "e", value | {"previous_verdict": previous, "previous_duplicate_of": of})

    assert pretty(correction("unique", None), "p").endswith("now of a  (was unique)")
    assert pretty(correction("duplicate", "b"), "p").endswith("now of a  (was duplicate of b)")


def test_tail_of_a_prefix_with_no_topics_says_so_in_one_line(kafka_bootstrap: str) -> None:
    """It printed "0 records" and exited 0, as if the worker had published nothing."""
    env = {**os.environ, "NEARDUP_BOOTSTRAP": kafka_bootstrap, "NEARDUP_TOPIC_PREFIX": "nosuchprefix"}
    proc = subprocess.run(
        [sys.executable, "-m", "worker.cli", "tail", "--timeout", "1"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert proc.returncode == 1
    [line] = proc.stderr.strip().splitlines()
    assert line.startswith("neardup tail: none of nosuchprefix.unique, nosuchprefix.duplicates")
    assert "NEARDUP_TOPIC_PREFIX" in line
    assert "after 1 s;" in line, "--timeout bounds the wait for the topics too"
