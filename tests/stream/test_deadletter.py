"""What a dead letter of a whole failed batch says of each input record."""

from __future__ import annotations

import pytest

from worker.settings import Settings
from worker.stream.deadletter import input_id


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (b'{"id": "a1", "text": "Heavy rain floods Osaka"}', "a1"),
        (b'{"id": "a2", "text": ""}', "a2"),  # refused for its text, found by its id
        (b'{"id": 7, "text": "x"}', None),
        (b'{"text": "no id"}', None),
        (b"{not json", None),
        (None, None),
    ],
)
def test_a_failed_batch_names_each_record_by_its_id_when_that_was_valid(
    raw: bytes | None, expected: str | None
) -> None:
    """A batch that failed as a whole dead-lettered valid events with "id": null, so an operator
    could not find them by id (a newcomer's try)."""
    assert input_id(raw, Settings()) == expected
