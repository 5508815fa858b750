"""Every kind of bad input gets a clear reason; good input keeps its extra fields."""

from __future__ import annotations

import json

import pytest

from worker.settings import Settings
from worker.validate import InvalidEvent, parse_event, parse_ts

SETTINGS = Settings(max_text_bytes=1000, max_id_chars=20)


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b"\xff\xfe{}", "invalid UTF-8"),
        (b"{not json", "invalid JSON"),
        (b"[1, 2]", "must be a JSON object"),
        (b'{"text": "hello"}', "missing field 'id'"),
        (b'{"id": 7, "text": "hello"}', "'id' must be a string"),
        (b'{"id": "", "text": "hello"}', "'id' is empty"),
        (b'{"id": "' + b"x" * 21 + b'", "text": "hello"}', "over the limit"),
        (b'{"id": "a"}', "missing field 'text'"),
        (b'{"id": "a", "text": null}', "'text' must be a string"),
        (b'{"id": "a", "text": "   "}', "'text' is empty"),
        (b'{"id": "a", "text": "' + b"y" * 1001 + b'"}', "over the limit"),
        (b'{"id": "a", "text": "\\ud800 lone"}', "lone surrogate"),
        (b'{"id": "a", "text": "ok", "ts": "yesterday"}', "not ISO-8601"),
        (b'{"id": "a", "text": "ok", "ts": true}', "got a boolean"),
        (b"[" * 30_000 + b"]" * 30_000, "nested too deeply"),
        (b"x" * 70_000, "over the limit"),
    ],
)
def test_rejects_with_reason(raw: bytes, reason: str) -> None:
    with pytest.raises(InvalidEvent) as caught:
        parse_event(raw, SETTINGS)
    assert reason in caught.value.reason


def test_valid_event_keeps_other_fields() -> None:
    raw = json.dumps({"id": "n1", "text": "新闻 text", "ts": 1700000000000, "source": "wire"}).encode()
    event = parse_event(raw, SETTINGS)
    assert (event.id, event.text, event.ts) == ("n1", "新闻 text", 1700000000000)
    assert event.extra == {"source": "wire"}
    assert event.to_dict()["source"] == "wire"


def test_far_future_timestamps_are_rejected() -> None:
    now = 1_700_000_000_000
    ok = parse_event(b'{"id": "a", "text": "ok", "ts": 1700000600000}', SETTINGS, now_ms=now)
    assert ok.ts == 1_700_000_600_000
    with pytest.raises(InvalidEvent, match="in the future"):
        parse_event(b'{"id": "a", "text": "ok", "ts": 1800000000000}', SETTINGS, now_ms=now)


def test_timestamps() -> None:
    assert parse_ts(None) is None
    assert parse_ts(1_700_000_000_123) == 1_700_000_000_123
    assert parse_ts("2023-11-14T22:13:20Z") == 1_700_000_000_000
    assert parse_ts("2023-11-14T22:13:20+00:00") == 1_700_000_000_000
    assert parse_ts("2023-11-14T22:13:20") == 1_700_000_000_000
