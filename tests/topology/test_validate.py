"""Every kind of bad input gets a clear reason; good input keeps its extra fields."""

from __future__ import annotations

import json

import pytest

from topology.validate import InvalidEvent, parse_event, parse_ts
from worker.settings import Settings

SETTINGS = Settings(max_text_bytes=1000, max_id_chars=20)


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b"\xff\xfe{}", "invalid UTF-8"),
        (b"{not json", "invalid JSON"),
        (b"[1, 2]", "must be a JSON object, got an array"),
        (b'{"text": "hello"}', "missing field 'id'"),
        (b'{"id": 7, "text": "hello"}', "'id' must be a string, got a number"),
        (b'{"id": "", "text": "hello"}', "'id' is empty"),
        (b'{"id": "\\u200b\\ufeff ", "text": "hello"}', "'id' is empty (only invisible characters)"),
        (b'{"id": "' + b"x" * 21 + b'", "text": "hello"}', "over the limit"),
        (b'{"id": "a"}', "missing field 'text'"),
        (b'{"id": "a", "text": null}', "'text' must be a string, got null"),
        (b'{"id": "a", "text": {"en": "hi"}}', "'text' must be a string, got an object"),
        (b'{"id": "a", "text": "   "}', "'text' is empty"),
        (b'{"id": "a", "text": "' + b"y" * 1001 + b'"}', "over the limit"),
        (b'{"id": "a", "text": "\\ud800 lone"}', "lone surrogate"),
        (b'{"id": "a", "text": "ok", "meta": "\\ud800"}', "field 'meta' contains a lone surrogate"),
        (b'{"id": "a", "text": "ok", "meta": {"\\udfff": 1}}', "field 'meta', a name in it, contains a lone surrogate"),
        (b'{"id": "a", "text": "ok", "meta": ["ok", {"x": ["\\udbff"]}]}', "field 'meta' contains a lone surrogate"),
        (b'{"id": "a", "text": "ok", "\\ud800": 1}', "field name contains a lone surrogate"),
        (b'{"id": "a", "text": "ok", "ts": "yesterday"}', "not ISO-8601"),
        (b'{"id": "a", "text": "ok", "ts": true}', "got a boolean"),
        (b'{"id": "a", "text": "ok", "ts": [2024]}', "got an array"),
        (b"[" * 30_000 + b"]" * 30_000, "nested more than 32 levels deep"),
        (b"x" * 70_000, "over the limit of 66536 bytes for a record (1000 bytes of text"),
        # An extra field 980 levels deep: Python's parser takes it at the top of a stack, but a
        # stage deep in its own could not decode it back (issue: the poison pill).
        (b'{"id": "a", "text": "ok", "x": ' + b"[" * 980 + b"]" * 980 + b"}", "nested more than 32 levels"),
        (b'{"id": "a", "text": "ok", "x": {"y": ' + b"[" * 31 + b"]" * 31 + b"}}", "nested more than 32 levels"),
        (b'{"id": "a", "text": "ok", "n": ' + b"9" * 5000 + b"}", "outside the 64-bit integer range"),
        (b'{"id": "a", "text": "ok", "n": 9223372036854775808}', "outside the 64-bit integer range"),
        (b'{"id": "a", "text": "ok", "n": NaN}', "NaN is not a JSON number"),
        (b'{"id": "a", "text": "ok", "n": -Infinity}', "-Infinity is not a JSON number"),
        (b'{"id": "a", "text": "ok", "n": 1e400}', "overflows a 64-bit float"),
        (b'{"id": "a\\u0000b", "text": "ok"}', "control character (U+0000)"),
        (b'{"id": "a\\nb", "text": "ok"}', "control character (U+000A)"),
        (b'{"id": "a\\u0085", "text": "ok"}', "control character (U+0085)"),
        (b'{"id": "a", "text": "ok", "ts": "1900-01-01Z"}', "before 1970-01-01"),
        (b'{"id": "a", "text": "ok", "ts": -5}', "before 1970-01-01"),
        (b'{"id": "a", "text": "ok", "ts": -0.5}', "before 1970-01-01"),
        # Seconds read as milliseconds were 1970: late, never indexed, never matched.
        (b'{"id": "a", "text": "ok", "ts": 1795913000}', "1970-01-21 in epoch milliseconds, the unit of ts"),
        (b'{"id": "a", "text": "ok", "ts": 1795913000.5}', "if it is seconds, send it x 1000"),
    ],
)
def test_rejects_with_reason(raw: bytes, reason: str) -> None:
    with pytest.raises(InvalidEvent) as caught:
        parse_event(raw, SETTINGS)
    assert reason in caught.value.reason


@pytest.mark.parametrize(
    "raw",
    [b'{"id": "a", "text": "ok", "n": ' + b"1" * 5000 + b"}", '\ufeff{"id": "a", "text": "ok"}'.encode()],
    ids=["long number", "byte order mark"],
)
def test_no_reason_is_a_python_hint_or_a_traceback(raw: bytes) -> None:
    with pytest.raises(InvalidEvent) as caught:
        parse_event(raw, SETTINGS)
    assert "sys." not in caught.value.reason and "utf-8-sig" not in caught.value.reason
    assert len(caught.value.reason) < 120


def test_the_structural_limits_accept_what_they_allow() -> None:
    raw = (
        b'{"id": "a b", "text": "ok", "x": '
        + b"[" * 31
        + b"]" * 31
        + b', "n": [9223372036854775807, -9223372036854775808, 1e308]}'
    )
    event = parse_event(raw, SETTINGS)
    assert event.extra["n"] == [2**63 - 1, -(2**63), 1e308]
    assert parse_event(b'{"id": "a", "text": "ok", "ts": "1970-01-01Z"}', SETTINGS).ts == 0
    assert (
        parse_event(b'{"id": "a", "text": "nul \\u0000 in text is fine"}', SETTINGS).text == "nul \x00 in text is fine"
    )
    deeper = Settings(max_depth=64)
    assert parse_event(b'{"id": "a", "text": "ok", "x": ' + b"[" * 63 + b"]" * 63 + b"}", deeper).extra


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
    with pytest.raises(InvalidEvent) as raised:
        parse_event(b'{"id": "a", "text": "ok", "ts": 1800000000000}', SETTINGS, now_ms=now)
    assert str(raised.value) == (
        "field 'ts' (2027-01-15 08:00:00 UTC) is 3.17 years in the future, over the allowed skew of 1 h"
    )
    with pytest.raises(InvalidEvent) as raised:  # past the calendar: no date, still one line
        parse_event(b'{"id": "a", "text": "ok", "ts": 9000000000000000}', SETTINGS, now_ms=now)
    assert str(raised.value) == "field 'ts' is 285,139 years in the future, over the allowed skew of 1 h"


def test_timestamps() -> None:
    assert parse_ts(None) is None
    assert parse_ts(1_700_000_000_123) == 1_700_000_000_123
    assert parse_ts("2023-11-14T22:13:20Z") == 1_700_000_000_000
    assert parse_ts("2023-11-14T22:13:20+00:00") == 1_700_000_000_000
    assert parse_ts("2023-11-14T22:13:20") == 1_700_000_000_000
